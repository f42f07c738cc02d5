"""How often does `roofline compare`'s interval and gate call a change when nothing changed, and how
often do they catch a known 3% slowdown, between separate runs? Run on the GPU machine (a few minutes):

    roofline gate OUT_DIR [--kernel triton_mla_fast --ctx 32k --page-size 64 --runs 5]

A run is what `roofline profile`'s timing pass records in timing.json (roofline/pipelines/capture.py
timed_rounds: --rounds child processes of the harness, --samples each: CUDA-graph replays over rotated
input sets, no profiler, no L2 flush). The runs alternate A, B, A, B, ... (--runs A runs, --runs-b B runs,
the last A runs after the last B): B is the same kernel with a
spin kernel (torch.cuda._sleep) after each step inside the graph, its cycles set from the first A run's
median and the spin's own measured rate to aim at --slower-pct (the slowdown is measured and printed).
Every ordered pair of distinct A runs is an A/A pair; every (A, B) pair a slowdown pair. Each pair goes
through compare's test (roofline.analysis.comparison.timing_test: between runs, on the rounds' medians)
and, for contrast, the within-run test on the pooled samples (sample_test: what compare did before
rounds), and through the gate (decide_gate) at several thresholds. Prints a short table last; writes
OUT_DIR/compare_gate.json (every run's rounds) and OUT_DIR/runs/*.timing.json.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from kernels.spec import VerifyWorkload
from profiler.timing import TimingSamples, parse_timing, write_timing
from roofline.analysis.comparison import DEFAULT_P_VALUE, decide_gate, sample_test, timing_test
from roofline.pipelines.capture import timed_rounds
from roofline.pipelines.request import DEFAULT_TIMING_ROUNDS

TESTS = {
    "between": "between runs: Welch's t on the rounds' medians (compare's test)",
    "within": "within-run: Mann-Whitney and a bootstrap of the pooled samples (compare before rounds)",
}


def pair_result(base: TimingSamples, head: TimingSamples, thresholds: list[float], p_value: float) -> dict:
    """One pair through both tests: per test the ratio, its interval, whether the interval holds no
    change (1.0), and per threshold whether the gate fails it."""
    out = {}
    for name, t in (
        ("between", timing_test(base, head)),
        ("within", sample_test(base.samples_ms, head.samples_ms, base.method)),
    ):
        out[name] = {
            "ratio": t.ratio,
            "ci": [t.ci_low, t.ci_high],
            "p": t.p_value,
            "covers": t.covers,
            "holds_1": t.ci_low is not None and t.ci_low <= 1.0 <= t.ci_high,
            "gate_fails": {str(pct): not decide_gate(pct, p_value, t, None)["passed"] for pct in thresholds},
        }
    return out


def rates(pairs: list[dict], thresholds: list[float]) -> dict:
    """Per test: how many intervals hold no change, and per threshold how many pairs the gate failed."""
    return {
        name: {
            "holds_1": sum(p[name]["holds_1"] for p in pairs),
            "gate_fails": {str(pct): sum(p[name]["gate_fails"][str(pct)] for p in pairs) for pct in thresholds},
        }
        for name in TESTS
    }


def frac(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"


def table(result: dict, markdown: bool = False) -> str:
    """The short table printed last (`markdown`: the README's form)."""
    aa, slow, cfg = result["aa_pairs"], result["slow_pairs"], result["config"]
    n_aa, n_slow = len(aa), len(slow)
    aa_delta = [(p["between"]["ratio"] - 1) * 100 for p in aa]
    slow_delta = [(p["between"]["ratio"] - 1) * 100 for p in slow]
    head = [
        f"{cfg['kernel']} ctx {cfg['ctx_len']} page {cfg['page_size']} heads {cfg['heads']}: {cfg['runs_a']} A runs and "
        f"{cfg['runs_b']} B runs, each {cfg['rounds']} rounds (own processes) x {cfg['samples']} samples "
        f"({result.get('gpu', '?')})",
        f"A/A pairs (ordered, distinct runs): {n_aa}, change {min(aa_delta, default=0):+.2f}% .. "
        f"{max(aa_delta, default=0):+.2f}%; slowdown: a spin of {cfg['spin_cycles']} cycles after each step "
        f"(aimed at +{cfg['slower_pct']:g}%), measured {statistics.median(slow_delta) if slow_delta else 0:+.2f}% "
        f"(median of {n_slow} pairs)",
        f"gate: fail when slower by more than PCT% with p < {cfg['p_value']:g}",
        "",
    ]
    rows = [["test", "A/A: 95% interval holds no change"]]
    rows[0] += [f"A/A gate fails at {pct:g}%" for pct in cfg["thresholds"]]
    measured = statistics.median(slow_delta) if slow_delta else cfg["slower_pct"]
    rows[0] += [f"{measured:+.1f}% slowdown caught at {pct:g}%" for pct in cfg["thresholds"]]
    for name in TESTS:
        a, s = result["aa_rates"][name], result["slow_rates"][name]
        row = [name, frac(a["holds_1"], n_aa)]
        row += [frac(a["gate_fails"][str(pct)], n_aa) for pct in cfg["thresholds"]]
        row += [frac(s["gate_fails"][str(pct)], n_slow) for pct in cfg["thresholds"]]
        rows.append(row)
    if markdown:
        body = ["| " + " | ".join(r) + " |" for r in rows]
        body.insert(1, "|" + "---|" * len(rows[0]))
        return "\n".join(head + body + ["", *(f"- {k}: {v}" for k, v in TESTS.items())])
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join(head + ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows])


def spin_cycles(pct: float, step_ms: float, cycles_per_ms: float) -> int:
    """The spin that makes a step of `step_ms` `pct` % longer, at the spin's measured rate."""
    return max(1, round(pct / 100 * step_ms * cycles_per_ms))


def spin_rate(cycles: int = 1_000_000) -> float:
    """Cycles per ms of torch.cuda._sleep on this GPU, timed as a graph replay (as the steps are)."""
    import torch  # lazy: tests import this module on a CPU

    from profiler.bench import rotated_samples_ms  # lazy: imports torch

    ms = rotated_samples_ms(lambda _: torch.cuda._sleep(cycles), [None], samples=10)
    return cycles / statistics.median(ms.samples_ms)


def one_run(app: list[str], rounds: int, samples: int, out: Path, spin: int = 0) -> TimingSamples:
    """One run's timing pass, as `roofline profile` takes it (its own child processes), kept in `out`."""
    cmd = app + (["--spin-cycles", str(spin)] if spin else [])
    timing = timed_rounds(cmd, rounds, samples, out.with_suffix(".log"), say=lambda m: None)
    write_timing(out, timing)
    return timing


def from_dir(out: Path) -> dict:
    """compare_gate.json read back (its pairs recomputed from the runs it keeps: --from-dir)."""
    data = json.loads((out / "compare_gate.json").read_text())
    runs = {k: [parse_timing(r, f"{out}/compare_gate.json {k}") for r in v] for k, v in data["runs"].items()}
    return evaluate(data["config"], runs["A"], runs["B"], data.get("gpu"))


def evaluate(cfg: dict, a_runs: list[TimingSamples], b_runs: list[TimingSamples], gpu: str | None) -> dict:
    th, p = cfg["thresholds"], cfg["p_value"]
    aa = [pair_result(x, y, th, p) for i, x in enumerate(a_runs) for j, y in enumerate(a_runs) if i != j]
    slow = [pair_result(x, y, th, p) for x in a_runs for y in b_runs]
    return {
        "config": cfg,
        "gpu": gpu,
        "aa_pairs": aa,
        "slow_pairs": slow,
        "aa_rates": rates(aa, th),
        "slow_rates": rates(slow, th),
        "runs": {"A": [r.to_dict() for r in a_runs], "B": [r.to_dict() for r in b_runs]},
    }


@dataclass(frozen=True)
class GateSettings:
    """How the gate experiment runs: `runs` A runs (A/A pairs: runs x (runs - 1)), `runs_b` B runs between the
    first A runs, each run `rounds` child processes of `samples` samples; B `slower_pct` slower (a spin after each
    step); the gate evaluated at each of `thresholds` with `p_value`; no run started after `budget_s` seconds."""

    runs: int = 5
    runs_b: int = 3
    rounds: int = DEFAULT_TIMING_ROUNDS
    samples: int = 8  # profile's 30 samples over 4 rounds
    slower_pct: float = 3.0
    thresholds: tuple[float, ...] = (0.0, 1.0, 2.0)
    p_value: float | None = None  # None: compare's DEFAULT_P_VALUE
    budget_s: float = 300.0


def _order(runs: int, runs_b: int) -> list[tuple[str, int]]:
    """A0 B0 A1 B1 ... while B runs are asked for, then the rest of the A runs (A0 comes first, apart)."""
    order = [("B", i) for i in range(runs_b)]
    return [x for i in range(1, runs) for x in (order[i - 1 : i] + [("A", i)])] + order[runs - 1 :]


def run_gate(out: Path, kernel: str, workload: VerifyWorkload, s: GateSettings | None = None, say=print) -> dict | None:
    """The gate experiment of `kernel` at `workload` on this GPU into `out` (compare_gate.json, runs/*.timing.json);
    the result, or None without a CUDA GPU. The harness children read the workload from OUT/spec.json."""
    import torch  # lazy: see spin_rate
    import triton  # lazy, as torch

    if not torch.cuda.is_available():
        return None
    s = s or GateSettings()
    runs_dir = out / "runs"
    runs_dir.mkdir(parents=True, exist_ok=True)
    spec = out / "spec.json"
    spec.write_text(json.dumps({"workload": workload.to_dict()}) + "\n")
    app = [sys.executable, "-m", "profiler.harness", "--spec", str(spec), "--kernel", kernel]
    started = time.time()
    rate = spin_rate()
    a_runs = [one_run(app, s.rounds, s.samples, runs_dir / "A0.timing.json")]
    spin = spin_cycles(s.slower_pct, statistics.median(a_runs[0].samples_ms), rate)
    say(f"spin: {rate:.0f} cycles per ms; A {statistics.median(a_runs[0].samples_ms):.5f} ms; {spin} cycles")
    b_runs: list[TimingSamples] = []
    for which, i in _order(s.runs, s.runs_b):
        if time.time() - started > s.budget_s:
            say(f"gate: time budget reached before run {which}{i}")
            break
        got = one_run(app, s.rounds, s.samples, runs_dir / f"{which}{i}.timing.json", spin if which == "B" else 0)
        (b_runs if which == "B" else a_runs).append(got)
        meds = ", ".join(f"{m:.5f}" for m in got.round_medians())
        say(f"run {which}{i}: round medians {meds} ms ({time.time() - started:.0f} s)")
    cfg = {
        "kernel": kernel,
        "ctx_len": workload.ctx_len,
        "page_size": workload.page_size,
        "heads": workload.heads,
        "q_len": workload.q_len,
        "runs_a": len(a_runs),
        "runs_b": len(b_runs),
        "rounds": s.rounds,
        "samples": s.samples,
        "slower_pct": s.slower_pct,
        "spin_cycles": spin,
        "spin_cycles_per_ms": rate,
        "thresholds": [float(t) for t in s.thresholds],
        "p_value": DEFAULT_P_VALUE if s.p_value is None else s.p_value,
        "method": "rotated",
        "torch": torch.__version__,
        "triton": triton.__version__,
        "wall_s": round(time.time() - started, 1),
    }
    result = evaluate(cfg, a_runs, b_runs, torch.cuda.get_device_name())
    (out / "compare_gate.json").write_text(json.dumps(result, indent=1) + "\n")
    say(f"wrote {out / 'compare_gate.json'} ({cfg['wall_s']} s)\n")
    return result
