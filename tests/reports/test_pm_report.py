"""The PM sampling of a run drawn in its report and printed by analyze (the H200 captures at skew16)."""

from __future__ import annotations

from click.testing import CliRunner

from roofline.cli import main
from tests.paths import ROOT
from tests.pm_runs import pm_run
from tests.reports.test_report import check_charts

ROOFLINE_RUN = ROOT / "tests" / "fixtures" / "h200" / "basic" / "default_triton_mla_fast.ncu-rep.gz"


def test_report_draws_the_pm_chart(tmp_path):
    run = pm_run("flashmla", tmp_path)
    out = tmp_path / "out" / "report.md"
    assert CliRunner().invoke(main, ["report", str(run), "-o", str(out)]).exit_code == 0
    md = out.read_text()
    assert "## Over the launch's lifetime (ncu PM sampling)" in md
    assert "![PM sampling](report_pm_sampling.png)" in md and "report_pm_sampling.png" in check_charts(out)
    assert "| flash_fwd_mla_combine_kernel | 44.6 | 3.3 | 34% |" in md and "41.3 (93%)" in md


def test_analyze_prints_the_lifetime(tmp_path):
    out = CliRunner().invoke(main, ["analyze", str(pm_run("triton_mla_fast", tmp_path))]).output
    assert "PM sampling (ncu, one sample per 1.5 µs over each kernel's first launch):" in out
    assert "  _gluon_seesaw_kernel (69.0 µs, 47 samples):" in out
    assert "DRAM reaches its steady 78% (peak 97%) by 7.6 µs; its stream ends at 57.1 µs" in out
    assert "tail with < half the SMs active 4.4 µs (6% of the launch)" in out


def test_a_run_without_pm_sampling_is_unchanged(tmp_path):
    out = tmp_path / "report.md"
    assert CliRunner().invoke(main, ["report", str(ROOFLINE_RUN), "-o", str(out)]).exit_code == 0
    assert "PM sampling" not in out.read_text() and not (tmp_path / "report_pm_sampling.png").exists()
    assert "PM sampling" not in CliRunner().invoke(main, ["analyze", str(ROOFLINE_RUN)]).output
