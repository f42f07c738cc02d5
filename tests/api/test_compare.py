"""`roofline compare` on real H200 runs: the step, the kernels, noise, the gate and its exit codes."""

import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

import roofline
from profiler.rundir import MANIFEST
from roofline.analysis.comparison import CompareError, spread_pct, timing_change
from roofline.cli import main
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
    assert d["gate"] == {
        "fail_if_slower_pct": 5.0,
        "p_value": 0.002,
        "passed": True,
        "slower_pct": pytest.approx(-85.95, abs=0.01),
        "on": "step",
        "note": "no timing samples on both sides: gated on the profiler's step times, with no test",
    }
    assert d["timing"] is None and d["same_run"] is False
    sides = {k["kernel"]: (k["side"], k["head_kernel"], k["paired_by"]) for k in d["kernels"]}
    assert sides == {  # the two main passes differ in name: paired by role, and said so
        "_decode_stage1": ("both", "_fast_split_kernel", "role (main)"),
        "_combine_kernel": ("both", "_combine_kernel", "name"),
    }
    assert any(n.startswith("paired by role (main): _decode_stage1 (base) with _fast_split_kernel") for n in d["notes"])
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
    assert d["same_run"] is True and d["gate"]["same_run"] is True
    assert cli(SAMPLE_V1, SAMPLE_V1).output.splitlines()[2].startswith("SAME RUN: base and head are one run")


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
    from roofline.analysis.comparison import match_kernels
    from roofline.analysis.summary import KernelSummary

    def k(grid):
        return KernelSummary(
            "k", 1, grid, 128.0, 1.0, *[None] * 10, top_stalls=[], bound="latency", cause=None, evidence=[]
        )

    pairs = match_kernels([k(8.0), k(16.0)], [k(16.0), k(32.0)])
    got = [(b.grid_size if b else None, h.grid_size if h else None) for b, h in pairs]
    assert got == [(8.0, None), (16.0, 16.0), (None, 32.0)]


# ---------------------------------------------------------------------------------------------
# Timing samples: the committed runs have none (captured before timing passes existed), so these
# tests add a timing.json of synthetic samples, written and checksummed as the run writer does.


def with_timing(src, dst, samples, method="rotated", kernels_ms=None):
    """A copy of the run `src` at `dst` with `samples` (ms per step) as its timing.json."""
    from profiler.rundir import TIMING, sha256
    from profiler.timing import TimingSamples, write_timing

    shutil.copytree(src, dst)
    path = write_timing(
        dst / TIMING,
        TimingSamples(
            samples_ms=tuple(samples), method=method, input_sets=4, replays_per_sample=8, kernels_ms=kernels_ms
        ),
    )
    m = json.loads((dst / MANIFEST).read_text())
    m["reports"].append({"path": TIMING, "tool": "timing", "sha256": sha256(path), "bytes": path.stat().st_size})
    (dst / MANIFEST).write_text(json.dumps(m))
    return dst


def noisy(median_ms, n, seed, rel=0.005):
    return list(median_ms * np.random.default_rng(seed).lognormal(0.0, rel, n))


def test_timing_json_is_checksummed_and_read_back(tmp_path):
    from profiler.errors import ReportError
    from profiler.run_writer import RunWriter
    from profiler.rundir import TIMING, RunSpec
    from profiler.timing import TimingSamples, read_timing, write_timing

    w = RunWriter(tmp_path / "run")
    w.write_spec(RunSpec(kernel="triton_mla_fast", workload={"ctx_len": 131072}, iterations=3))
    t = TimingSamples(
        samples_ms=(0.0712, 0.0714),
        method="rotated",
        input_sets=8,
        replays_per_sample=4,
        kernel="triton_mla_fast",
        host={"gpu": "NVIDIA H200"},
    )
    w.add_report(write_timing(w.path / TIMING, t), "timing")
    run = w.commit()
    assert read_timing(run) == t
    entry = json.loads((run / MANIFEST).read_text())["reports"][0]
    assert entry["path"] == "timing.json" and entry["tool"] == "timing" and len(entry["sha256"]) == 64
    (run / TIMING).write_text((run / TIMING).read_text().replace("0.0714", "0.0614"))
    with pytest.raises(ReportError, match="does not match the sha256"):
        read_timing(run)


def test_a_gate_on_samples_fails_a_real_slowdown(tmp_path):
    base = with_timing(FAST, tmp_path / "base", noisy(0.0712, 30, 1))
    head = with_timing(FAST, tmp_path / "head", noisy(0.0712 * 1.05, 30, 2))
    r = cli(base, head, "--fail-if-slower", "2")
    assert r.exit_code == 1, r.output
    assert "Mann-Whitney p = " in r.output and "95% CI [" in r.output and "medians of 30 and 30 samples" in r.output
    assert "gate: FAILED: head step +5" in r.output and "with p < 0.002" in r.output
    d = json.loads(cli(base, head, "--fail-if-slower", "2", "--format", "json").output)
    assert d["gate"]["on"] == "timing samples" and d["gate"]["p"] < 1e-6
    t = d["timing"]
    assert t["n_base"] == t["n_head"] == 30 and t["ci_low"] < t["ratio"] < t["ci_high"]
    assert 1.04 < t["ci_low"] and t["ci_high"] < 1.06 and d["same_run"] is False
    assert cli(base, head, "--fail-if-slower", "10").exit_code == 0  # slower, but by less than 10%


def test_a_change_that_is_not_significant_passes(tmp_path):
    """Same distribution both sides (an A/A pair): the medians differ a little, the test says noise."""
    base = with_timing(FAST, tmp_path / "base", noisy(0.0712, 30, 3))
    head = with_timing(FAST, tmp_path / "head", noisy(0.0712, 30, 4))
    d = json.loads(cli(base, head, "--fail-if-slower", "0", "--format", "json").output)
    assert d["gate"]["on"] == "timing samples" and d["gate"]["p"] > 0.002 and d["gate"]["passed"]
    # a threshold of 1.0 on p: any median increase fails
    slower = d["timing"]["ratio"] > 1
    assert cli(base, head, "--fail-if-slower", "0", "--p-value", "1").exit_code == (1 if slower else 0)


def test_too_few_samples_fall_back_to_the_profilers_rule(tmp_path):
    base = with_timing(DECODE, tmp_path / "base", noisy(1.45, 5, 5))
    head = with_timing(FAST, tmp_path / "head", noisy(0.20, 5, 6))
    r = cli(head, base, "--fail-if-slower", "5")
    assert r.exit_code == 1 and "7.12x slower" in r.output
    assert "too few samples for a test: 10 a side needed" in r.output
    assert "too few timing samples (5 and 5; the test needs 10 a side): gated on the profiler's step times" in r.output
    d = json.loads(cli(head, base, "--fail-if-slower", "5", "--format", "json").output)
    assert d["gate"]["on"] == "step" and d["timing"]["p_value"] is None and d["timing"]["ci_low"] is None


def test_a_copy_of_a_run_is_the_same_run(tmp_path):
    a = with_timing(FAST, tmp_path / "a", noisy(0.0712, 30, 1))
    shutil.copytree(a, tmp_path / "b")
    r = cli(a, tmp_path / "b", "--fail-if-slower", "0")
    assert r.exit_code == 0 and "SAME RUN" in r.output
    other = with_timing(FAST, tmp_path / "c", noisy(0.0712, 30, 2))
    assert "SAME RUN" not in cli(a, other).output


def test_a_bad_timing_json_is_a_one_line_error(tmp_path):
    from profiler.rundir import TIMING, sha256

    run = with_timing(FAST, tmp_path / "run", noisy(0.0712, 12, 1))
    data = json.loads((run / TIMING).read_text())
    data["samples_ms"][3] = -1.0
    (run / TIMING).write_text(json.dumps(data))
    m = json.loads((run / MANIFEST).read_text())
    m["reports"][-1]["sha256"] = sha256(run / TIMING)
    (run / MANIFEST).write_text(json.dumps(m))
    r = cli(FAST, run)
    assert r.exit_code == 2 and "timing.json: samples_ms must hold positive finite numbers" in r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1


def test_samples_on_one_side_only_are_said(tmp_path):
    head = with_timing(FAST, tmp_path / "head", noisy(0.0712, 30, 1))
    d = json.loads(cli(FAST, head, "--format", "json").output)
    assert d["timing"] is None and any("timing samples on one side only" in n for n in d["notes"])


def test_gate_logic():
    from roofline.analysis.comparison import Change, decide_gate, sample_test

    slower = sample_test(noisy(1.0, 20, 1), noisy(1.06, 20, 2))
    assert decide_gate(5, 0.002, slower, None)["passed"] is False
    assert decide_gate(7, 0.002, slower, None)["passed"] is True  # +6% is below 7%
    assert decide_gate(None, 0.002, slower, None)["passed"] is True  # no gate asked for
    g = decide_gate(5, slower.p_value / 2, slower, None)  # slower by more, but p not below the threshold
    assert g["passed"] and "not significant" in g["note"]
    few = sample_test([1.0, 1.01], [1.2, 1.21])
    assert not few.enough
    step = Change(1.0, 1.2, 20.0, 1.0, "slower")
    g = decide_gate(5, 0.002, few, step)
    assert g["on"] == "step" and g["passed"] is False and "too few timing samples (2 and 2" in g["note"]
    with pytest.raises(CompareError, match="cannot gate"):
        decide_gate(5, 0.002, few, None)


def test_per_kernel_samples_are_tested_when_a_run_has_them(tmp_path):
    base = with_timing(
        FAST,
        tmp_path / "base",
        noisy(0.0712, 30, 1),
        kernels_ms={"_fast_split_kernel": noisy(0.060, 30, 2), "_combine_kernel": noisy(0.011, 30, 3)},
    )
    head = with_timing(
        FAST, tmp_path / "head", noisy(0.0740, 30, 4), kernels_ms={"_fast_split_kernel": noisy(0.063, 30, 5)}
    )
    d = json.loads(cli(base, head, "--format", "json").output)
    by_name = {k["kernel"]: k["timing"] for k in d["kernels"]}
    assert by_name["_combine_kernel"] is None  # samples on one side only
    split = by_name["_fast_split_kernel"]
    assert split["ratio"] == pytest.approx(1.05, abs=0.01) and split["p_value"] < 1e-6


# ---------------------------------------------------------------------------------------------
# Rounds: each round of a timing pass is its own process, with its own shift (placement, clocks).
# Synthetic rounds with that structure: a shift per round (sd 0.3%) and little noise within one.


def rounds_timing(median_ms, rounds, per_round, seed, shift=0.003, rel=0.0005):
    from profiler.timing import TimingSamples, merge_rounds

    rng = np.random.default_rng(seed)
    got = []
    for _ in range(rounds):
        level = median_ms * rng.lognormal(0.0, shift)
        samples = tuple(level * rng.lognormal(0.0, rel, per_round))
        got.append(TimingSamples(samples, "rotated", 4, 8, kernel="k", workload={"ctx_len": 1}))
    return merge_rounds(got)


def test_between_run_intervals_hold_no_change_where_pooled_samples_do_not():
    """A/A pairs of runs whose rounds shift: the pooled within-run interval excludes no change in most
    pairs (the issue's "CI [-0.6%, -0.5%]"), the interval on the rounds' medians holds it."""
    from roofline.analysis.comparison import sample_test, timing_test

    pairs = [(rounds_timing(0.0345, 4, 8, 2 * i), rounds_timing(0.0345, 4, 8, 2 * i + 1)) for i in range(40)]
    between = [timing_test(a, b) for a, b in pairs]
    within = [sample_test(a.samples_ms, b.samples_ms) for a, b in pairs]
    holds = sum(t.ci_low <= 1 <= t.ci_high for t in between)
    assert holds >= 36 and all(t.test == "Welch" and t.rounds == (4, 4) for t in between)
    assert sum(t.ci_low <= 1 <= t.ci_high for t in within) <= 20
    assert all(t.covers.startswith("between runs: the spread of 4 + 4 rounds' medians") for t in between)


def test_between_run_test_catches_a_3_percent_slowdown():
    from roofline.analysis.comparison import decide_gate, timing_test

    caught = 0
    for i in range(20):
        t = timing_test(rounds_timing(0.0345, 4, 8, 100 + i), rounds_timing(0.0345 * 1.03, 4, 8, 200 + i))
        caught += not decide_gate(1.0, 0.002, t, None)["passed"]
        assert 1.0 < t.ci_low and t.ci_high < 1.06
    assert caught >= 18


def test_compare_says_what_its_interval_covers(tmp_path):
    from profiler.rundir import TIMING, sha256
    from profiler.timing import write_timing

    def run_with(t, dst):
        shutil.copytree(FAST, dst)
        path = write_timing(dst / TIMING, t)
        m = json.loads((dst / MANIFEST).read_text())
        m["reports"].append({"path": TIMING, "tool": "timing", "sha256": sha256(path), "bytes": path.stat().st_size})
        (dst / MANIFEST).write_text(json.dumps(m))
        return dst

    base = run_with(rounds_timing(0.0712, 4, 8, 1), tmp_path / "base")
    head = run_with(rounds_timing(0.0712 * 1.05, 4, 8, 2), tmp_path / "head")
    r = cli(base, head, "--fail-if-slower", "2")
    assert r.exit_code == 1, r.output
    assert "Welch p = " in r.output and "the interval is between runs: the spread of 4 + 4 rounds' medians" in r.output
    assert "in 4+4 rounds" in r.output.strip().splitlines()[-1]
    d = json.loads(cli(base, head, "--format", "json").output)
    assert d["timing"]["test"] == "Welch" and d["timing"]["rounds"] == [4, 4]
    assert d["timing"]["covers"].startswith("between runs")
    # one-round runs (format 1, or --timing-rounds 1): within-run only, and said so
    one = with_timing(FAST, tmp_path / "one", noisy(0.0712, 30, 1))
    d = json.loads(cli(one, head, "--format", "json").output)
    assert d["timing"]["test"] == "Mann-Whitney" and d["timing"]["covers"].startswith("within-run only")
    assert "(1 and 4 rounds: the between-run test needs 3 a side)" in d["timing"]["covers"]


def test_a_timing_json_whose_rounds_do_not_add_up_is_refused(tmp_path):
    from profiler.rundir import RunDirError
    from profiler.timing import parse_timing

    good = rounds_timing(0.07, 3, 4, 1).to_dict()
    assert len(parse_timing(json.loads(json.dumps(good))).rounds) == 3
    bad = dict(good, samples_ms=good["samples_ms"][:-1])
    with pytest.raises(RunDirError, match="samples_ms must be the rounds' samples in order"):
        parse_timing(bad, "x/timing.json")
    with pytest.raises(RunDirError, match=r"x/timing.json: rounds_ms\[1\] must hold positive finite numbers"):
        parse_timing(
            dict(good, rounds_ms=[good["rounds_ms"][0], [0.07, float("nan")], good["rounds_ms"][2]]), "x/timing.json"
        )
    with pytest.raises(RunDirError, match="round_kind 'one' means exactly one round"):
        parse_timing(dict(good, round_kind="one"), "x/timing.json")
    old = {k: v for k, v in good.items() if k not in ("rounds_ms", "round_kind")} | {"format": "roofline-timing/1"}
    assert len(parse_timing(old).rounds) == 1  # format 1: one round, within-run only
