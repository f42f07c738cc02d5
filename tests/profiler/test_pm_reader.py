"""ncu's PM sampling read from the H200 captures (tests/fixtures/h200/pm-sampling/): the series of each launch,
trimmed to the kernel's window, and the errors of a report that holds none or is cut short."""

from __future__ import annotations

import pytest

from profiler.errors import ReportError
from profiler.ncu_pm import COLUMNS, SMS_ACTIVE
from profiler.readers import read_launches, read_pm_samples
from tests.paths import FULL_SET, ROOT
from tests.pm_runs import pm_run

ROOFLINE_PRESET = ROOT / "tests" / "fixtures" / "h200" / "basic" / "default_triton_mla_fast.ncu-rep.gz"


@pytest.fixture(scope="module")
def flashmla(tmp_path_factory):
    return read_pm_samples(pm_run("flashmla", tmp_path_factory.mktemp("pm")) / "profile.ncu-rep")


def test_series_of_each_launch(flashmla):
    assert list(flashmla.columns) == list(COLUMNS)
    kernels = flashmla.groupby("launch")["kernel"].first().to_dict()
    assert kernels == {0: "flash_fwd_splitkv_mla_kernel", 1: "flash_fwd_mla_combine_kernel"}
    split = flashmla[flashmla["launch"] == 0]
    series = set(split["series"])
    assert {"dram %", "L2 %", "L1/shared %", "tensor pipe %", "issue %", SMS_ACTIVE} <= series
    assert {"stall long_scoreboard", "stall barrier", "stall wait"} <= series
    assert set(split["interval_us"]) == {1.5}


def test_trimmed_to_the_kernel_window(flashmla):
    """187 samples of the throughput pass; the 43 whose interval overlaps the kernel's 63.552 µs are kept."""
    dram = flashmla[(flashmla["launch"] == 0) & (flashmla["series"] == "dram %")]
    assert len(dram) == 43 and set(dram["window_us"]) == {63.552}
    assert dram["time_us"].min() == pytest.approx(-0.384) and dram["time_us"].max() == pytest.approx(62.624)
    assert dram["value"].max() == pytest.approx(97.06, abs=0.01)
    sms = flashmla[(flashmla["launch"] == 0) & (flashmla["series"] == SMS_ACTIVE)]
    assert 99 < sms["value"].max() <= 100 and sms["value"].min() >= 0
    stalls = flashmla[(flashmla["launch"] == 0) & (flashmla["series"] == "stall long_scoreboard")]
    assert len(stalls) == 44 and stalls["value"].max() == pytest.approx(1.84, abs=0.01)  # warps per SMSP


def test_the_launch_table_carries_them(tmp_path):
    table = read_launches(pm_run("triton_mla_fast", tmp_path) / "profile.ncu-rep")
    pm = table.pm_samples
    assert len(table) == 2 and pm is not None
    assert set(pm["kernel"]) == {"_gluon_seesaw_kernel", "_combine_kernel"}
    assert len(pm[(pm["launch"] == 1) & (pm["series"] == "dram %")]) == 10


def test_a_report_without_pm_sampling():
    assert read_pm_samples(ROOFLINE_PRESET) is None
    assert read_launches(ROOFLINE_PRESET).pm_samples is None


def test_full_set_holds_the_throughput_series():
    pm = read_pm_samples(FULL_SET)
    assert pm is not None and not pm["series"].str.startswith("stall ").any()


def test_a_truncated_report(tmp_path):
    data = (pm_run("flashmla", tmp_path) / "profile.ncu-rep").read_bytes()
    cut = tmp_path / "cut.ncu-rep"
    for share, said in ((0.3, "no launch to read"), (0.9, "the PM sampling of its later launches is missing")):
        cut.write_bytes(data[: int(len(data) * share)])
        with pytest.raises(ReportError) as err:
            read_pm_samples(cut)
        assert str(cut) in str(err.value) and "cut" in str(err.value) and said in str(err.value)
