"""A launch's lifetime from its PM samples, on the H200 captures of FlashMLA and the fast kernel at skew16."""

from __future__ import annotations

import pytest

from profiler.readers import read_pm_samples
from roofline.analysis.pm_sampling import summarize_pm
from tests.paths import FULL_SET
from tests.pm_runs import pm_run


@pytest.fixture(scope="module")
def summaries(tmp_path_factory):
    where = tmp_path_factory.mktemp("pm")
    return {
        k: summarize_pm(read_pm_samples(pm_run(k, where) / "profile.ncu-rep")) for k in ("flashmla", "triton_mla_fast")
    }


def test_flashmla_split_and_combine(summaries):
    split, combine = summaries["flashmla"]
    assert (split.kernel, split.samples, split.window_us) == ("flash_fwd_splitkv_mla_kernel", 43, 63.552)
    assert split.steady["dram %"] == pytest.approx(85.4, abs=0.1) and split.dram_peak == pytest.approx(97.1, abs=0.1)
    assert split.ramp_us == pytest.approx(5.628) and split.dram_end_us == pytest.approx(55.132)
    assert split.tail_us == pytest.approx(2.436) and split.tail_share == pytest.approx(0.038, abs=0.001)
    assert split.stalls[0][0] == "long_scoreboard" and split.warp_states
    # the combine: two busy samples, then 41 µs with about 6% of the SMs active
    assert combine.busy_share == pytest.approx(0.067, abs=0.001) and combine.tail_share == pytest.approx(
        0.927, abs=0.001
    )
    assert combine.tail_levels["SMs active %"] == pytest.approx(6.1, abs=0.1)


def test_fast_split_and_combine(summaries):
    split, combine = summaries["triton_mla_fast"]
    assert split.kernel == "_gluon_seesaw_kernel" and split.window_us == 68.96
    assert split.steady["dram %"] == pytest.approx(78.2, abs=0.1) and split.ramp_us == pytest.approx(7.58)
    assert split.after_dram_us == pytest.approx(11.876) and split.tail_us == pytest.approx(4.388)
    assert combine.kernel == "_combine_kernel" and combine.tail_us == pytest.approx(1.124)
    assert combine.steady["tensor pipe %"] == 0


def test_never_busy_and_no_warp_states():
    (s,) = summarize_pm(read_pm_samples(FULL_SET))
    assert s.body_end_us is None and s.ramp_us is None and s.tail_share == 1 and not s.warp_states


def test_no_samples():
    assert summarize_pm(None) == []
