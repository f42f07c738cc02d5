"""What the in-kernel timeline says on the H200's own stamps (tests/fixtures/h200/in_kernel/): the numbers the
report of each capture printed (docs/results/h200-timeline/README.md)."""

from __future__ import annotations

import pytest

from profiler.timeline_reader import INTERVAL_COLUMNS, ROLE_COLUMNS, read_in_kernel
from roofline.analysis.timeline import critical_path, in_kernel_timeline, why_line
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


def test_the_critical_path_is_the_step_on_the_role_that_ends_last(b1h8, skew16):
    for tl in (b1h8, skew16):
        cp = tl.critical
        assert cp.total_us == pytest.approx(tl.step_us, abs=1e-6)
        assert cp.parts[-1] == ("the combine, after the split kernel", pytest.approx(tl.step_us - tl.split_us))
        outside = ("before its first program", "prologue", "epilogue", "between its programs")
        loop = [us for part, us in cp.parts[:-1] if part not in outside]  # the stages and the time between stamps
        assert sum(loop) == pytest.approx(cp.loop_us, abs=1e-6)
    # the ring at 8 heads: its critical main warpgroup spends the most of the step waiting for the other's P
    cp = b1h8.critical
    assert (cp.sm, cp.role, cp.programs, cp.tiles) == (84, "main 0", (66,), 16)
    assert max(cp.parts, key=lambda p: p[1]) == ("wait P", pytest.approx(18.60, abs=0.01))
    assert cp.loop_us == pytest.approx(49.64, abs=0.01)
    # skew16 before the combine's rewrite: a third of the step after the split kernel
    assert skew16.critical.parts[-1][1] == pytest.approx(34.58, abs=0.01)


def test_the_critical_path_counts_the_gaps_between_programs_on_its_sm():
    """Two programs of one role on SM 5 (the second ends last) and one on SM 6: the path is SM 5's, its programs'
    prologues, stages and epilogues summed, and the 2 µs between them."""
    import pandas as pd

    roles = pd.DataFrame(
        [
            (0, 5, 0, "main 0", 1.0, 2.0, 10.0, 11.0, 4),
            (1, 6, 0, "main 0", 1.0, 2.0, 12.0, 13.0, 5),
            (2, 5, 0, "main 0", 13.0, 14.0, 20.0, 21.5, 3),
        ],
        columns=ROLE_COLUMNS,
    )
    iv = pd.DataFrame(
        [
            (0, 5, 0, "main 0", 0, "wait loads", 2.0, 6.0),
            (0, 5, 0, "main 0", 0, "softmax", 6.0, 10.0),
            (1, 6, 0, "main 0", 0, "softmax", 2.0, 12.0),
            (2, 5, 0, "main 0", 0, "wait loads", 14.0, 15.0),
            (2, 5, 0, "main 0", 0, "softmax", 15.0, 19.5),
        ],
        columns=INTERVAL_COLUMNS,
    )
    cp = critical_path(roles, iv, split_start=0.5, step_end=24.0)
    assert (cp.sm, cp.programs, cp.tiles) == (5, (0, 2), 7)
    assert dict(cp.parts) == {
        "before its first program": 0.5,
        "prologue": 2.0,
        "wait loads": 5.0,
        "softmax": 8.5,
        "loop, between stamps": 0.5,
        "epilogue": 2.5,
        "between its programs": 2.0,
        "the combine, after the split kernel": 2.5,
    }
    assert cp.total_us == pytest.approx(24.0 - 0.5)
    # programs that share the SM at once leave no one lane of time to account: no critical path
    overlapping = roles.assign(start_us=[1.0, 1.0, 9.0], loop_us=[2.0, 2.0, 10.0])
    assert critical_path(overlapping, iv, split_start=0.5, step_end=24.0) is None
