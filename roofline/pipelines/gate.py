"""How often does `roofline compare`'s gate fail when nothing changed, and how often does it catch a
known 3% slowdown? Run on the GPU machine (one call, a few minutes):

    python -m roofline.pipelines.gate OUT_DIR [--kernel triton_mla_fast --ctx 128k --page-size 64]

Each timing pass is what `roofline profile` records in timing.json (profiler.bench.time_step:
CUDA-graph replays over rotated input sets, no profiler, no L2 flush), on fresh inputs (seeds of
their own). Per round: a pass at the context (A), a slowed pass (B), another at the context (A').
The slowdown (--slowdown): `spin` (the default) adds a spin kernel (torch.cuda._sleep) after each step
inside the graph, its cycles set from the first A pass's median and the spin's own measured rate, so
that B is --slower-pct % slower; `ctx` runs a context --slower-pct % longer instead (more KV reads;
its time grows less, the fixed part dominating). Either way the slowdown is measured and printed.
(A, A') is an A/A pair, evaluated in both orders (the gate is one-sided), (A, B) a slowdown pair. Passes run in this one process (a fresh process per
pass would mostly time torch's import). Every pair goes through the gate compare uses
(roofline.analysis.comparison.sample_test and decide_gate) at several thresholds; "no test" is the same
threshold on the medians alone. Prints a short table last; writes OUT_DIR/compare_gate.json.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path

from kernels.spec import VerifyWorkload, parse_ctx_len
from roofline.analysis.comparison import DEFAULT_P_VALUE, decide_gate, sample_test


def slower_ctx(ctx_len: int, page_size: int, pct: float) -> int:
    """A context `pct` % longer, rounded up to whole pages."""
    return math.ceil(ctx_len * (1 + pct / 100) / page_size) * page_size


def pair_result(base: list[float], head: list[float], thresholds: list[float], p_value: float) -> dict:
    """One pair through the gate: the test's numbers, and per threshold whether the gate (and the
    medians alone, with no test) fails it."""
    t = sample_test(base, head)
    return {
        "ratio": t.ratio,
        "ci": [t.ci_low, t.ci_high],
        "p": t.p_value,
        "n": [t.n_base, t.n_head],
        "gate_fails": {str(pct): not decide_gate(pct, p_value, t, None)["passed"] for pct in thresholds},
        "median_fails": {str(pct): t.delta_pct > pct for pct in thresholds},
    }


def rates(pairs: list[dict], thresholds: list[float]) -> dict:
    """Per threshold: how many pairs the gate failed, and how many the medians alone would have."""
    return {
        str(pct): {
            "gate": sum(p["gate_fails"][str(pct)] for p in pairs),
            "no_test": sum(p["median_fails"][str(pct)] for p in pairs),
        }
        for pct in thresholds
    }


def table(result: dict) -> str:
    """The short table printed last."""
    aa, slow = result["aa_pairs"], result["slow_pairs"]
    n_aa, n_slow = len(aa), len(slow)
    cfg = result["config"]
    aa_delta = [(p["ratio"] - 1) * 100 for p in aa]
    slow_delta = [(p["ratio"] - 1) * 100 for p in slow]

    def frac(k: int, n: int) -> str:
        return f"{k}/{n} ({100 * k / n:.0f}%)" if n else "-"

    lines = [
        f"{cfg['kernel']} ctx {cfg['ctx_len']} page {cfg['page_size']} heads {cfg['heads']}, "
        f"{cfg['samples']} samples a pass ({result.get('gpu', '?')})",
        f"A/A pairs: {n_aa}, change of the medians {min(aa_delta, default=0):+.2f}% .. "
        f"{max(aa_delta, default=0):+.2f}% (median |change| "
        f"{statistics.median([abs(d) for d in aa_delta]) if aa_delta else 0:.2f}%)",
        f"slowdown: {slowdown_text(cfg)}, "
        f"measured {statistics.median(slow_delta) if slow_delta else 0:+.2f}% (median of {n_slow} pairs, "
        f"{min(slow_delta, default=0):+.2f}% .. {max(slow_delta, default=0):+.2f}%)",
        f"gate: fail when slower by more than PCT% with Mann-Whitney p < {cfg['p_value']:g}; "
        "no test: the medians alone",
        "",
    ]
    rows = [["PCT", "A/A failed (gate)", "A/A failed (no test)", "slowdown caught (gate)", "caught (no test)"]]
    for pct, r in result["aa_rates"].items():
        s = result["slow_rates"][pct]
        rows.append(
            [pct, frac(r["gate"], n_aa), frac(r["no_test"], n_aa), frac(s["gate"], n_slow), frac(s["no_test"], n_slow)]
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return "\n".join(lines)


def slowdown_text(cfg: dict) -> str:
    """How the slow pass was made, for the table."""
    if cfg.get("slowdown") == "spin":
        return f"a spin of {cfg['spin_cycles']} cycles after each step (aimed at +{cfg['slower_pct']:g}%)"
    return f"ctx {cfg['ctx_len']} -> {cfg['slow_ctx_len']} (+{cfg['kv_bytes_pct']:.2f}% KV bytes)"


def spin_cycles(pct: float, step_ms: float, cycles_per_ms: float) -> int:
    """The spin that makes a step of `step_ms` `pct` % longer, at the spin's measured rate."""
    return max(1, round(pct / 100 * step_ms * cycles_per_ms))


def spin_rate(cycles: int = 1_000_000) -> float:
    """Cycles per ms of torch.cuda._sleep on this GPU, timed as a graph replay (as the steps are)."""
    import torch  # lazy: see timing_pass

    from profiler.bench import rotated_samples_ms  # lazy: imports torch

    ms = rotated_samples_ms(lambda _: torch.cuda._sleep(cycles), [None], samples=10)
    return cycles / sorted(ms.samples_ms)[len(ms.samples_ms) // 2]


def timing_pass(kernel: str, workload: VerifyWorkload, seed: int, samples: int, spin: int = 0) -> list[float]:
    """One timing pass on fresh input sets (seeds from `seed`), as the profile's timing pass takes it;
    `spin`: cycles of torch.cuda._sleep after each step, inside the graph."""
    import torch  # lazy: torch and triton (tests import this module on a CPU)

    from profiler.bench import time_step  # lazy: imports torch

    then = (lambda: torch.cuda._sleep(spin)) if spin else None
    return time_step(kernel, workload, samples, seed=seed, then=then).samples_ms


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, help="folder for compare_gate.json")
    ap.add_argument("--kernel", default="triton_mla_fast")
    ap.add_argument("--ctx", default="128k")
    ap.add_argument("--page-size", type=int, default=64)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--pairs", type=int, default=24, help="rounds: one A/A and one slowdown pair each")
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--slowdown", choices=["spin", "ctx"], default="spin", help="how B is made slower (see above)")
    ap.add_argument(
        "--slower-pct",
        type=float,
        default=3.0,
        help="spin: B this much slower; ctx: B's context this much longer (on the H200, 128k page 64: "
        "+3.03%% KV bytes gave +1.25%% time, +7.5%% gave +5.37%%)",
    )
    ap.add_argument("--thresholds", default="0,1,2,5", help="gate thresholds PCT to evaluate")
    ap.add_argument("--p-value", type=float, default=DEFAULT_P_VALUE)
    ap.add_argument("--budget-s", type=float, default=240.0, help="stop starting rounds after this many seconds")
    args = ap.parse_args(argv)

    import torch  # lazy: see timing_pass
    import triton  # lazy, as torch

    if not torch.cuda.is_available():
        print("compare_gate: needs a CUDA GPU", file=sys.stderr)
        return 2
    thresholds = [float(t) for t in args.thresholds.split(",")]
    ctx = parse_ctx_len(args.ctx)
    a = VerifyWorkload(ctx_len=ctx, page_size=args.page_size, heads=args.heads)
    slow_ctx = slower_ctx(ctx, args.page_size, args.slower_pct) if args.slowdown == "ctx" else ctx
    b = VerifyWorkload(ctx_len=slow_ctx, page_size=args.page_size, heads=args.heads)
    kv_pct = ((b.ctx_len + b.q_len) / (a.ctx_len + a.q_len) - 1) * 100
    started = time.time()
    passes: list[dict] = []
    aa, slow = [], []
    spin, rate = 0, None
    if args.slowdown == "spin":
        rate = spin_rate()
        first = statistics.median(timing_pass(args.kernel, a, 1, args.samples))
        spin = spin_cycles(args.slower_pct, first, rate)
        print(f"spin: {rate:.0f} cycles per ms; A {first:.5f} ms; {spin} cycles aim at +{args.slower_pct:g}%")
    for i in range(args.pairs):
        if time.time() - started > args.budget_s:
            print(f"compare_gate: time budget reached after {i} rounds", file=sys.stderr)
            break
        seed = 1000 * (i + 1)
        s_a = timing_pass(args.kernel, a, seed, args.samples)
        s_b = timing_pass(args.kernel, b, seed + 100, args.samples, spin)
        s_a2 = timing_pass(args.kernel, a, seed + 200, args.samples)
        passes += [
            {"round": i, "which": w, "ctx_len": wl.ctx_len, "seed": sd, "samples_ms": s}
            for w, wl, sd, s in (("A", a, seed, s_a), ("B", b, seed + 100, s_b), ("A'", a, seed + 200, s_a2))
        ]
        # both orders: which pass is "base" is arbitrary, and the gate is one-sided (slower only)
        aa.append(pair_result(s_a, s_a2, thresholds, args.p_value))
        aa.append(pair_result(s_a2, s_a, thresholds, args.p_value))
        slow.append(pair_result(s_a, s_b, thresholds, args.p_value))
        print(
            f"round {i + 1}: A {statistics.median(s_a):.5f} ms, B {statistics.median(s_b):.5f} ms, "
            f"A' {statistics.median(s_a2):.5f} ms; A/A p={aa[-1]['p']:.2g}, slow p={slow[-1]['p']:.2g} "
            f"({time.time() - started:.0f} s)",
            flush=True,
        )
    result = {
        "config": {
            "kernel": args.kernel,
            "ctx_len": a.ctx_len,
            "slow_ctx_len": b.ctx_len,
            "kv_bytes_pct": kv_pct,
            "slowdown": args.slowdown,
            "slower_pct": args.slower_pct,
            "spin_cycles": spin,
            "spin_cycles_per_ms": rate,
            "page_size": args.page_size,
            "heads": args.heads,
            "samples": args.samples,
            "thresholds": thresholds,
            "p_value": args.p_value,
            "method": "rotated",
        },
        "gpu": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "wall_s": round(time.time() - started, 1),
        "aa_pairs": aa,
        "slow_pairs": slow,
        "aa_rates": rates(aa, thresholds),
        "slow_rates": rates(slow, thresholds),
        "passes": passes,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "compare_gate.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {args.out / 'compare_gate.json'} ({result['wall_s']} s)\n")
    print(table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
