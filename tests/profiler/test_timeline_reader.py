"""The in-kernel timeline reader on the H200's own stamps (tests/fixtures/h200/in_kernel/, made by
tests/fixtures/capture/in_kernel_h200.sh): the ring at 128k and 8 heads, the staggered schedule on skew16."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kernels.timeline_layout import PER_TILE, STAGES
from profiler.timeline_reader import TimelineFileError, read_in_kernel
from tests.paths import FIXTURES

IN_KERNEL = FIXTURES / "in_kernel"


@pytest.fixture(scope="module")
def b1h8():
    return read_in_kernel(IN_KERNEL / "b1h8.npz")


@pytest.fixture(scope="module")
def skew16():
    return read_in_kernel(IN_KERNEL / "skew16.npz")


def test_every_schedule_names_at_most_its_slots():
    assert all(len(stages) <= PER_TILE for roles in STAGES.values() for _, stages in roles)


def test_the_ring_capture_has_three_roles_per_program(b1h8):
    assert b1h8.schedule == "ring" and b1h8.meta["split_kernel"] == "_gluon_ring_kernel"
    assert len(b1h8.roles) == 129 * 3  # grid (1, 129, 1), every warpgroup stamped
    assert b1h8.roles["sm"].nunique() == 129  # one program per SM
    assert sorted(b1h8.roles["n_tiles"].unique()) == [1, 16]
    assert 1.5 < b1h8.clock_ghz < 2.0  # cycles per timer ns (the H200 ran at about 1.76 GHz)
    assert b1h8.meta["check"]["same_as_unstamped"] is True
    assert len(b1h8.combine) == 72 * 16  # every combine program


def test_intervals_are_in_order_within_each_role(b1h8, skew16):
    for cap in (b1h8, skew16):
        iv = cap.intervals
        assert (iv["end_us"] >= iv["start_us"]).all()
        for _, g in iv.groupby(["program", "role"]):
            assert (np.diff(g["start_us"].to_numpy()) >= 0).all()
        roles = cap.roles
        assert ((roles["start_us"] <= roles["loop_us"]) & (roles["loop_end_us"] <= roles["end_us"])).all()
        assert cap.roles["start_us"].min() == 0.0


def test_the_staggered_capture_has_two_roles(skew16):
    assert skew16.schedule == "stagger"
    assert set(skew16.roles["role_name"]) == {"main 0", "main 1"}
    assert set(skew16.intervals["stage"]) <= set(STAGES["stagger"][0][1]) | set(STAGES["stagger"][1][1])
    assert len(skew16.combine) == 1024 * 8
    c = skew16.combine
    assert ((c["start_us"] <= c["waited_us"]) & (c["waited_us"] <= c["end_us"])).all()


def test_a_file_of_another_format_is_refused(tmp_path):
    with np.load(IN_KERNEL / "b1h8.npz") as z:
        meta = json.loads(str(z["meta"]))
        meta["format"] = "something-else/9"
        np.savez(tmp_path / "x.npz", split=z["split"], combine=z["combine"], meta=np.array(json.dumps(meta)))
    with pytest.raises(TimelineFileError, match="format"):
        read_in_kernel(tmp_path / "x.npz")
    (tmp_path / "y.npz").write_text("not a zip")
    with pytest.raises(TimelineFileError, match="not an in-kernel timeline"):
        read_in_kernel(tmp_path / "y.npz")


@pytest.mark.parametrize("name", ["b1h8", "skew16"])
def test_the_capture_writer_keeps_a_step_as_the_reader_reads_it(tmp_path, name):
    """profiler.in_kernel's stamps_meta and write_stamps (the capture's writer) on the stamps of an H200 step, as a
    stamped call leaves them in its dict: the file they write reads back as the same timeline, and its meta is the
    capture's, key for key."""
    torch = pytest.importorskip("torch")
    from kernels.spec import VerifyWorkload
    from profiler.in_kernel import stamps_meta, write_stamps

    with np.load(IN_KERNEL / f"{name}.npz") as z:
        split, combine, meta = z["split"], z["combine"], json.loads(str(z["meta"]))
    stamps = {
        "split": torch.from_numpy(split.astype(np.int64)),
        "combine": torch.from_numpy(combine.astype(np.int64)),
        "kernel": meta["split_kernel"],
        "grid": tuple(meta["grid"]),
        "stamp_tiles": meta["stamp_tiles"],
        "combine_kernel": meta["combine_kernel"],
        "combine_grid": tuple(meta["combine_grid"]) if meta["combine_grid"] else None,
    }
    workload = VerifyWorkload.from_dict(meta["workload"])
    made = stamps_meta(meta["kernel"], workload, stamps, meta["device"])
    write_stamps(tmp_path / "x.npz", stamps, {**made, "check": meta["check"], "overhead": meta["overhead"]})
    with np.load(tmp_path / "x.npz") as z:
        written = json.loads(str(z["meta"]))
    assert written.keys() == meta.keys()
    assert {k: v for k, v in written.items() if k != "gt0"} == {k: v for k, v in meta.items() if k != "gt0"}
    before, after = read_in_kernel(IN_KERNEL / f"{name}.npz"), read_in_kernel(tmp_path / "x.npz")
    for frame in ("roles", "intervals", "combine"):
        assert getattr(after, frame).equals(getattr(before, frame)), frame
    assert after.clock_ghz == before.clock_ghz


def test_a_capture_names_its_stages_by_the_schedule_it_ran(tmp_path):
    """The meta's schedule picks the stage names (scores_ahead's warpgroup 0 scores ahead under its second P V);
    without one, the split kernel's; an unknown one is refused."""
    with np.load(IN_KERNEL / "skew16.npz") as z:
        split, combine, meta = z["split"], z["combine"], json.loads(str(z["meta"]))
    assert "schedule" not in meta and read_in_kernel(IN_KERNEL / "skew16.npz").schedule == "stagger"
    for schedule in ("stagger-ahead", "bogus"):
        np.savez(
            tmp_path / f"{schedule}.npz", split=split, combine=combine, meta=json.dumps({**meta, "schedule": schedule})
        )
    ahead = read_in_kernel(tmp_path / "stagger-ahead.npz")
    stages = set(ahead.intervals[ahead.intervals["role_name"] == "main 0"]["stage"])
    assert ahead.schedule == "stagger-ahead" and "value MMA + scores ahead" in stages and "value MMA 2" not in stages
    with pytest.raises(TimelineFileError, match="no stage names"):
        read_in_kernel(tmp_path / "bogus.npz")
