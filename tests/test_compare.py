"""`roofline compare` on real H200 runs: the step, the kernels, noise, the gate and its exit codes."""

import json
import shutil

import pytest
from click.testing import CliRunner

import roofline
from profiler.rundir import MANIFEST
from roofline.cli import main
from roofline.comparison import CompareError, spread_pct, timing_change
from tests.paths import RUNS, SAMPLE_V1, TORCH_DEFAULT

DECODE = RUNS / "h200-triton_mla_decode-128k-p64"
FAST = RUNS / "h200-triton_mla_fast-128k-p64"
FAST_H64 = RUNS / "h200-triton_mla_fast-128k-h64"


def cli(*args):
    return CliRunner().invoke(main, ["compare", *map(str, args)], catch_exceptions=False)


def test_acceptance_decode_to_fast_is_about_7x_and_passes_the_gate():
    r = cli(DECODE, FAST, "--fail-if-slower", "5")
    assert r.exit_code == 0, r.output
    # 1.4559 ms -> 0.2045 ms of kernels per iteration, from the two ncu captures
    assert "7.12x faster" in r.output and "gate: passed" in r.output


def test_acceptance_swapped_fails_the_gate_with_exit_1():
    r = cli(FAST, DECODE, "--fail-if-slower", "5")
    assert r.exit_code == 1 and "7.12x slower" in r.output and "FAILED" in r.output


def test_json_has_step_kernels_gate():
    r = cli(DECODE, FAST, "--fail-if-slower", "5", "--format", "json")
    d = json.loads(r.output)
    assert d["step"]["base_ms"] == pytest.approx(1.45591, rel=1e-4)
    assert d["step"]["head_ms"] == pytest.approx(0.204533, rel=1e-4)
    assert d["step"]["speedup"] == pytest.approx(7.118, rel=1e-3)
    assert d["gate"] == {"fail_if_slower_pct": 5.0, "passed": True, "slower_pct": pytest.approx(-85.95, abs=0.01),
                         "on": "step"}
    sides = {k["kernel"]: k["side"] for k in d["kernels"]}
    assert sides == {"_decode_stage1": "base only", "_combine_kernel": "both", "_fast_split_kernel": "head only"}
    combine = next(k for k in d["kernels"] if k["kernel"] == "_combine_kernel")
    # the verdict moved: the decode path's combine is 'short launches', the fast path's a 'small grid'
    assert combine["verdict_changed"] and combine["cause"] == {"base": "short launches", "head": "small grid"}
    dur = combine["metrics"]["duration_ms"]
    assert dur["base"] == pytest.approx(0.004896) and dur["head"] == pytest.approx(0.014688)
    assert dur["delta_pct"] == pytest.approx(200.0, abs=0.1) and dur["verdict"] == "slower"
    assert set(combine["metrics"]) >= {"dram_gbps", "l2_hit_rate_pct", "achieved_occupancy_pct", "gap_to_floor"}


def test_markdown_is_a_pr_comment():
    r = cli(FAST, DECODE, "--fail-if-slower", "5", "--format", "markdown")
    assert r.exit_code == 1
    md = r.output
    assert md.startswith("### roofline compare") and "❌" in md and "<details>" in md
    table = [ln for ln in md.splitlines() if ln.startswith("| kernel |")]
    assert table and table[0].count("|") == 9  # 8 columns
    assert "| duration (median) | 0.01469 ms | 0.004896 ms (-66.7%) |" in md


def test_same_run_is_within_noise_and_passes_a_zero_gate():
    r = cli(SAMPLE_V1, SAMPLE_V1, "--fail-if-slower", "0", "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["step"]["speedup"] == pytest.approx(1.0)
    assert d["step"]["verdict"] == "within noise" and d["step"]["noise_pct"] == pytest.approx(0.1025, abs=1e-3)
    (k,) = d["kernels"]
    assert k["metrics"]["duration_ms"]["verdict"] == "within noise" and not k["verdict_changed"]


def test_noise_rule():
    # durations of the sample run's 3 launches: 15.245984, 15.230368, 15.240736 ms
    assert spread_pct([15.245984, 15.230368, 15.240736]) == pytest.approx(0.10247, abs=1e-4)
    assert spread_pct([1.0]) is None
    assert timing_change(10.0, 10.05, 0.2, 1.0).verdict == "within noise"  # 0.5% < the larger spread, 1%
    assert timing_change(10.0, 10.2, 0.2, 1.0).verdict == "slower"
    assert timing_change(10.0, 9.0, None, None).verdict == "faster (noise unknown: one launch)"


def test_different_workload_is_refused_with_exit_2_unless_allowed():
    r = cli(DECODE, FAST_H64)
    assert r.exit_code == 2 and "different workloads (heads 8 -> 64, page_size 64 -> 1)" in r.output
    assert "--allow-different-workload" in r.output and "Traceback" not in r.output
    r = cli(DECODE, FAST_H64, "--allow-different-workload", "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["workload"]["same"] is False
    assert d["workload"]["differences"] == {"heads": [8, 64], "page_size": [64, 1]}
    assert any(n.startswith("DIFFERENT WORKLOADS") for n in d["notes"])
    assert "workload: DIFFERENT" in cli(DECODE, FAST_H64, "--allow-different-workload").output


def test_bad_input_exits_2(tmp_path):
    r = cli(DECODE, tmp_path / "missing")
    assert r.exit_code == 2 and "no such run directory or report" in r.output
    failed = tmp_path / "failed"
    shutil.copytree(FAST, failed)
    m = json.loads((failed / MANIFEST).read_text())
    m.update(status="failed", error="ncu exited with code 1")
    (failed / MANIFEST).write_text(json.dumps(m))
    r = cli(DECODE, failed)
    assert r.exit_code == 2 and "this run failed" in r.output
    assert cli(DECODE, FAST, "--fail-if-slower", "-1").exit_code == 2


def test_incomplete_run_exits_2(tmp_path):
    """The sample's report cut after 2 of 3 launches (see test_rundir) is not compared."""
    from profiler.rundir import sha256

    cut = tmp_path / "cut"
    shutil.copytree(SAMPLE_V1, cut)
    rep = cut / "profile.ncu-rep"
    rep.write_bytes(rep.read_bytes()[:293960])
    m = json.loads((cut / MANIFEST).read_text())
    m["reports"][0]["sha256"] = sha256(rep)
    (cut / MANIFEST).write_text(json.dumps(m))
    r = cli(SAMPLE_V1, cut)
    assert r.exit_code == 2 and "expected 3 launches" in r.output
    r = cli(SAMPLE_V1, cut, "--allow-incomplete", "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["step"] is None and any("INCOMPLETE" in n for n in d["notes"])


def test_bare_reports_compare_kernels_but_cannot_gate():
    r = cli(TORCH_DEFAULT, TORCH_DEFAULT, "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["step"] is None and d["workload"]["same"] is None
    assert len(d["kernels"]) == 2 and all(k["side"] == "both" for k in d["kernels"])
    r = cli(TORCH_DEFAULT, TORCH_DEFAULT, "--fail-if-slower", "5")
    assert r.exit_code == 2 and "cannot gate" in r.output


def test_api_compare_takes_runs_or_paths():
    cmp = roofline.compare(roofline.load(DECODE), FAST, fail_if_slower_pct=5)
    assert cmp.passed and cmp.speedup == pytest.approx(7.118, rel=1e-3)
    with pytest.raises(CompareError, match="different workloads"):
        roofline.compare(DECODE, FAST_H64)


def test_repeated_kernel_names_match_by_launch_configuration():
    from roofline.comparison import match_kernels
    from roofline.analysis import KernelSummary

    def k(grid):
        return KernelSummary("k", 1, grid, 128.0, 1.0, *[None] * 10, top_stalls=[], bound="latency",
                             cause=None, evidence=[])

    pairs = match_kernels([k(8.0), k(16.0)], [k(16.0), k(32.0)])
    got = [(b.grid_size if b else None, h.grid_size if h else None) for b, h in pairs]
    assert got == [(8.0, None), (16.0, 16.0), (None, 32.0)]
