"""What the in-kernel timeline says on the H200's own stamps (tests/fixtures/h200/in_kernel/): the numbers the
report of each capture printed (docs/results/h200-timeline/README.md)."""

from __future__ import annotations

import pytest

from profiler.timeline_reader import read_in_kernel
from roofline.analysis.timeline import in_kernel_timeline, why_line
from tests.paths import FIXTURES


@pytest.fixture(scope="module")
def b1h8():
    return in_kernel_timeline(read_in_kernel(FIXTURES / "in_kernel" / "b1h8.npz"))


@pytest.fixture(scope="module")
def skew16():
    return in_kernel_timeline(read_in_kernel(FIXTURES / "in_kernel" / "skew16.npz"))


def _stage(tl, role, stage):
    return next(s for s in tl.stages if s.role == role and s.stage == stage)


def test_the_ring_at_8_heads(b1h8):
    assert b1h8.split_us == pytest.approx(55.2, abs=0.1)
    assert b1h8.step_us == pytest.approx(63.7, abs=0.1)
    assert b1h8.combine_share == pytest.approx(0.13, abs=0.01)
    # the main warpgroups wait on each other's P more than on the loads; most of each load is hidden
    assert _stage(b1h8, "main 1", "wait P").share == pytest.approx(0.405, abs=0.005)
    assert _stage(b1h8, "main 0", "wait loads").us_per_tile == pytest.approx(0.632, abs=0.001)
    assert b1h8.loads.hidden == pytest.approx(0.71, abs=0.01)
    assert b1h8.top_wait().stage == "wait P"
    assert [s.label for s in b1h8.sms] == ["busiest", "median", "idlest"]
    assert b1h8.sms[0].busy_us >= b1h8.sms[1].busy_us >= b1h8.sms[2].busy_us
    assert b1h8.sms[2].tiles == 1  # the last split's one tile
    assert b1h8.overhead["overhead"] == pytest.approx(0.022, abs=0.001)


def test_shares_of_each_role_add_up(b1h8, skew16):
    for tl in (b1h8, skew16):
        for role in {s.role for s in tl.stages}:
            total = sum(s.share for s in tl.stages if s.role == role)
            assert total == pytest.approx(1.0, abs=0.01)


def test_the_staggered_schedule_on_skew16(skew16):
    assert skew16.kernel == "_gluon_seesaw_kernel" and skew16.schedule == "stagger"
    assert skew16.split_us == pytest.approx(64.2, abs=0.1)
    assert skew16.combine_share == pytest.approx(0.35, abs=0.01)  # the combine: a third of the step
    assert _stage(skew16, "main 1", "wait loads").share == pytest.approx(0.384, abs=0.005)
    assert skew16.loads.hidden == pytest.approx(0.36, abs=0.01)
    assert skew16.top_wait().waits_on.startswith("the loads")


def test_the_why_line_names_the_top_wait_the_loads_and_the_combine(skew16):
    line = why_line(skew16)
    assert line.startswith("in-kernel timeline: main 1 waits 38% of its time on the loads")
    assert "36% of each tile's load runs under other work" in line
    assert "the combine holds 35% of the step" in line


def test_lanes_hold_each_picked_sm(b1h8):
    for sm in b1h8.sms:
        lanes = {s.lane for s in b1h8.lanes[sm.label]}
        assert lanes == {"main 0", "main 1", "producer + tail rows", "combine"}


def test_a_path_without_stamps_says_so_and_cites_nothing(tmp_path):
    """The plain seesaw body writes no stamps: the b1h8 capture with its split buffer as such a launch leaves it
    (all zeros), its combine records kept."""
    import numpy as np

    with np.load(FIXTURES / "in_kernel" / "b1h8.npz") as z:
        np.savez(tmp_path / "none.npz", split=np.zeros_like(z["split"]), combine=z["combine"], meta=z["meta"])
    tl = in_kernel_timeline(read_in_kernel(tmp_path / "none.npz"))
    assert tl.programs == 0 and tl.stages == [] and tl.sms == []
    assert tl.notes == ["_gluon_ring_kernel: no role wrote its stamps (this path of the kernel has no scopes)"]
    assert why_line(tl) == ""
