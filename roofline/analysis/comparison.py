"""Two runs side by side: the step (same workload: kernel time per iteration, speedup) and the
kernels (matched by name, and by launch configuration when a name repeats), with noise and a gate.

Noise: a run with several launches of a kernel (or several iterations of its step) has a spread,
max - min of the durations over those launches, as % of their median. A change no larger than
the bigger of the two runs' spreads is "within noise". With one launch a side the spread is
unknown and the change is labelled "noise unknown".

Samples: a run profiled with a timing pass (timing.json, profiler/timing.py: many timings of the
step with no profiler attached, in rounds, each round its own process) is compared by its samples.
With MIN_ROUNDS rounds a side, between runs: Welch's t on the log of the rounds' medians, its 95%
interval of the ratio head/base and its p-value (the rounds' spread holds the shift between runs:
placement, clocks). With fewer (one-round runs), within the runs only: the ratio of the medians with
a bootstrap 95% interval and a two-sided Mann-Whitney U test, said to be within-run only
(roofline/analysis/stats.py). Each test says what its interval covers (`covers`).

Gate: with `fail_if_slower_pct`, the head fails when its step is slower than the base by more than
that percentage AND the test's p-value is below `p_value` (0.002, asv's threshold), both sides
having at least MIN_SAMPLES samples. With fewer (or none: runs from before timing passes) the gate
falls back to the profiler's step times with no test (the rule above: the noise is reported
beside it, so pick a threshold above the noise you see), and says so.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kernels.errors import BadInput
from profiler.timing import TimingSamples, read_timing
from roofline.analysis.clocks import ClockSummary, compare_clocks
from roofline.analysis.pairing import match_kernels, pair_kernels  # noqa: F401 - match_kernels: by name only
from roofline.analysis.summary import KernelSummary, _clean
from roofline.analysis.timing_tests import MIN_SAMPLES, SampleTest, sample_test, timing_test
from roofline.analysis.verdict import num

# Every metric a kernel summary carries, with its unit (for the renderers) - in display order.
METRICS: tuple[tuple[str, str], ...] = (
    ("duration_ms", "ms"),
    ("ms_per_step", "ms"),
    ("launches", ""),
    ("grid_size", ""),
    ("block_size", ""),
    ("registers_per_thread", ""),
    ("dram_gbps", "GB/s"),
    ("dram_throughput_pct", "%"),
    ("sm_throughput_pct", "%"),
    ("memory_throughput_pct", "%"),
    ("l2_hit_rate_pct", "%"),
    ("waves_per_sm", ""),
    ("achieved_occupancy_pct", "%"),
    ("theoretical_occupancy_pct", "%"),
    ("gap_to_floor", "x"),
)
IGNORED_WORKLOAD_FIELDS = ("seed",)  # random inputs, same shapes: the same work
DEFAULT_P_VALUE = 0.002  # asv's threshold for "significant"


class CompareError(BadInput):
    """Two runs that cannot be compared as asked (different workloads, no step to gate on)."""


@dataclass
class Change:
    """One number, base vs head: the change in %, and whether it is beyond the runs' own spread."""

    base: float | None
    head: float | None
    delta_pct: float | None = None
    noise_pct: float | None = None
    verdict: str | None = None  # faster | slower | within noise | ... (durations only)


@dataclass
class KernelComparison:
    kernel: str
    side: str  # both | base only | head only
    base_config: str | None
    head_config: str | None
    metrics: dict[str, Change]
    bound: tuple[str | None, str | None]
    cause: tuple[str | None, str | None]
    top_stalls: tuple[str | None, str | None]
    timing: SampleTest | None = None  # from both runs' timing samples of this kernel, when taken
    head_kernel: str | None = None  # the head's name of it (roofline/analysis/pairing.py)
    paired_by: str | None = None  # name, --pair, role (main|combine); None: on one side only

    @property
    def verdict_changed(self) -> bool:
        return self.side == "both" and (self.bound[0] != self.bound[1] or self.cause[0] != self.cause[1])

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["verdict_changed"] = self.verdict_changed
        for key in ("bound", "cause", "top_stalls"):
            d[key] = {"base": d[key][0], "head": d[key][1]}
        d["timing"] = self.timing.to_dict() if self.timing else None
        return d


@dataclass
class Comparison:
    base: str
    head: str
    same_workload: bool | None  # None: a side has no workload (a bare report)
    workload_differences: dict[str, tuple]
    base_workload: dict | None
    head_workload: dict | None
    step: Change | None
    kernels: list[KernelComparison]
    gate: dict
    notes: list[str] = field(default_factory=list)
    timing: SampleTest | None = None  # the step, from both runs' timing samples
    same_run: bool = False  # base and head are one run (same path or same report checksums)
    clocks: dict[str, ClockSummary | None] | None = None  # "base"/"head": each side's timing-pass clocks

    @property
    def speedup(self) -> float | None:
        s = self.step
        return s.base / s.head if s and s.base and s.head else None

    @property
    def passed(self) -> bool:
        return bool(self.gate["passed"])

    def to_dict(self) -> dict:
        step = None
        if self.step is not None:
            step = {
                "base_ms": self.step.base,
                "head_ms": self.step.head,
                "speedup": self.speedup,
                "delta_pct": self.step.delta_pct,
                "noise_pct": self.step.noise_pct,
                "verdict": self.step.verdict,
            }
        return _clean(
            {
                "base": self.base,
                "head": self.head,
                "workload": {
                    "same": self.same_workload,
                    "base": self.base_workload,
                    "head": self.head_workload,
                    "differences": {k: list(v) for k, v in self.workload_differences.items()},
                },
                "step": step,
                "timing": self.timing.to_dict() if self.timing else None,
                "clocks": {k: v.to_dict() if v else None for k, v in self.clocks.items()} if self.clocks else None,
                "same_run": self.same_run,
                "kernels": [k.to_dict() for k in self.kernels],
                "gate": self.gate,
                "notes": self.notes,
            }
        )


def delta_pct(base: float | None, head: float | None) -> float | None:
    if base is None or head is None or base == 0:
        return None
    return (head - base) / abs(base) * 100.0


def spread_pct(values) -> float | None:
    """max - min of a set of durations, as % of their median; None with fewer than two."""
    values = [v for v in (num(x) for x in values) if v is not None]
    if len(values) < 2:
        return None
    med = float(pd.Series(values).median())
    return (max(values) - min(values)) / med * 100.0 if med else None


def timing_change(
    base: float | None, head: float | None, base_spread: float | None, head_spread: float | None
) -> Change:
    """A duration base vs head, called faster / slower / within noise against the larger spread."""
    d = delta_pct(base, head)
    spreads = [s for s in (base_spread, head_spread) if s is not None]
    noise = max(spreads) if spreads else None
    if d is None:
        verdict = None
    elif noise is not None and abs(d) <= noise:
        verdict = "within noise"
    else:
        verdict = ("slower" if d > 0 else "faster" if d < 0 else "same") + (
            "" if noise is not None else " (noise unknown: one launch)"
        )
    return Change(base, head, d, noise, verdict)


def step_spread_pct(run) -> float | None:
    """Spread of the per-iteration step times: launches in order, cut into `iterations` equal runs
    (the harness launches the step's kernels one iteration after another)."""
    if run.spec is None or not run.complete:
        return None
    n, it = len(run.launches), run.spec.iterations
    if it < 2 or n % it:
        return None
    durations = run.launches.sort_values("launch")["duration_ms"].to_numpy()
    per = n // it
    return spread_pct([durations[i * per : (i + 1) * per].sum() for i in range(it)])


def _config(k: KernelSummary) -> str:
    grid = "?" if k.grid_size is None else f"{k.grid_size:.0f}"
    block = "?" if k.block_size is None else f"{k.block_size:.0f}"
    return f"grid {grid} x block {block}"


def _launch_durations(run, k: KernelSummary) -> list[float]:
    t = run.launches
    mask = t["kernel"] == k.kernel
    for key, value in (("grid_size", k.grid_size), ("block_size", k.block_size)):
        mask &= t[key].isna() if value is None else (t[key] == value)
    return list(t.loc[mask, "duration_ms"])


def _per_step(run, k: KernelSummary | None) -> float | None:
    if k is None or k.duration_ms is None or run.spec is None or not run.complete:
        return None
    return float(sum(_launch_durations(run, k))) / run.spec.iterations


def compare_kernel(
    base_run,
    head_run,
    kb: KernelSummary | None,
    kh: KernelSummary | None,
    timings: tuple[TimingSamples | None, TimingSamples | None] = (None, None),
    paired_by: str | None = None,
) -> KernelComparison:
    metrics = {}
    for name, _unit in METRICS:
        if name == "ms_per_step":
            b, h = _per_step(base_run, kb), _per_step(head_run, kh)
        else:
            b = num(getattr(kb, name)) if kb else None
            h = num(getattr(kh, name)) if kh else None
        if name == "duration_ms" and kb and kh:
            metrics[name] = timing_change(
                b, h, spread_pct(_launch_durations(base_run, kb)), spread_pct(_launch_durations(head_run, kh))
            )
        else:
            metrics[name] = Change(b, h, delta_pct(b, h))
    stalls = tuple(", ".join(s["reason"] for s in k.top_stalls) if k else None for k in (kb, kh))
    return KernelComparison(
        kernel=(kb or kh).kernel,
        side="both" if kb and kh else "base only" if kb else "head only",
        base_config=_config(kb) if kb else None,
        head_config=_config(kh) if kh else None,
        metrics=metrics,
        bound=(kb.bound if kb else None, kh.bound if kh else None),
        cause=(kb.cause if kb else None, kh.cause if kh else None),
        top_stalls=stalls,
        timing=_kernel_test(timings, kb.kernel, kh.kernel) if kb and kh else None,
        head_kernel=kh.kernel if kh else None,
        paired_by=paired_by if kb and kh else None,
    )


def _kernel_test(timings, base_kernel: str, head_kernel: str) -> SampleTest | None:
    b, h = ((t.kernels_ms or {}).get(k) if t else None for t, k in zip(timings, (base_kernel, head_kernel)))
    return sample_test(b, h, timings[0].method) if b and h else None


def run_timing(run) -> TimingSamples | None:
    """A run directory's timing samples (checked against its manifest), or None."""
    if run.manifest is None or not any(e.tool == "timing" for e in run.manifest.reports):
        return None
    return read_timing(run.source)


def same_run(base_run, head_run) -> bool:
    """One run twice: the same path, or run directories whose manifests list the same report checksums."""
    if Path(base_run.source).resolve() == Path(head_run.source).resolve():
        return True
    if base_run.manifest is None or head_run.manifest is None:
        return False
    b, h = (sorted(e.sha256 for e in r.manifest.reports) for r in (base_run, head_run))
    return bool(b) and b == h


def decide_gate(fail_if_slower_pct: float | None, p_value: float, test: SampleTest | None, step: Change | None) -> dict:
    """The gate: on the timing samples when both sides have MIN_SAMPLES (slower by more than the
    threshold with p below `p_value` fails), else on the profiler's step times (slower by more than
    the threshold fails). Raises CompareError when asked to gate with neither."""
    gate = {
        "fail_if_slower_pct": fail_if_slower_pct,
        "p_value": p_value,
        "passed": True,
        "slower_pct": None,
        "on": "step",
    }
    if test is not None and test.enough:
        gate.update(
            on="timing samples",
            slower_pct=test.delta_pct,
            p=test.p_value,
            ci_pct=[(test.ci_low - 1) * 100, (test.ci_high - 1) * 100],
        )
    elif step is not None:
        gate["slower_pct"] = step.delta_pct
    if fail_if_slower_pct is None:
        return gate
    if gate["on"] == "timing samples":
        slower = test.delta_pct > fail_if_slower_pct
        gate["passed"] = not (slower and test.p_value < p_value)
        if slower and gate["passed"]:
            gate["note"] = (
                f"slower by more than the threshold but not significant (p = {test.p_value:.2g} >= {p_value:g})"
            )
        return gate
    if step is None or step.delta_pct is None:
        raise CompareError(
            "cannot gate: no step time on both sides (a step needs a run directory "
            "with its workload and iterations; bare reports have none)"
        )
    gate["passed"] = step.delta_pct <= fail_if_slower_pct
    why = (
        "no timing samples on both sides"
        if test is None
        else f"too few timing samples ({test.n_base} and {test.n_head}; the test needs {MIN_SAMPLES} a side)"
    )
    gate["note"] = f"{why}: gated on the profiler's step times, with no test"
    if step.verdict == "within noise":
        gate["note"] += f"; the change is within the runs' noise ({step.noise_pct:.2f}%)"
    return gate


def workload_differences(base: dict | None, head: dict | None) -> dict[str, tuple]:
    if base is None or head is None:
        return {}
    keys = [k for k in dict.fromkeys(list(base) + list(head)) if k not in IGNORED_WORKLOAD_FIELDS]
    return {k: (base.get(k), head.get(k)) for k in keys if base.get(k) != head.get(k)}


def _runs_notes(base_run, head_run, allow_different_workload: bool) -> tuple:
    """(base workload, head workload, their differences, same or not (None: unknown), the notes on the two runs);
    CompareError where the workloads differ and that is not allowed."""
    bw = base_run.spec.workload if base_run.spec else None
    hw = head_run.spec.workload if head_run.spec else None
    diffs = workload_differences(bw, hw)
    same = None if (bw is None or hw is None) else not diffs
    notes = []
    if same is False:
        listed = ", ".join(f"{k} {b} -> {h}" for k, (b, h) in diffs.items())
        if not allow_different_workload:
            raise CompareError(
                f"{base_run.source} and {head_run.source} ran different workloads ({listed}); "
                "pass --allow-different-workload to compare them anyway"
            )
        notes.append(f"DIFFERENT WORKLOADS ({listed}): the step times are not the same work")
    if same is None:
        bare = [str(r.source) for r in (base_run, head_run) if r.spec is None]
        notes.append(f"no workload for {', '.join(bare)} (a bare report): no step time, kernels only")
    base_gpu, head_gpu = base_run.analysis.gpu.name, head_run.analysis.gpu.name
    if base_gpu != head_gpu:
        notes.append(f"different GPUs: {base_gpu} vs {head_gpu}")
    for run in (base_run, head_run):
        if not run.complete:
            notes.append(f"{run.source} is INCOMPLETE: {'; '.join(run.problems)}")
    return bw, hw, diffs, same, notes


def compare(
    base_run,
    head_run,
    fail_if_slower_pct: float | None = None,
    allow_different_workload: bool = False,
    p_value: float = DEFAULT_P_VALUE,
    pairs: dict[str, str] | None = None,
) -> Comparison:
    """Compare two loaded runs (roofline.api.Run; `roofline.compare` also takes paths). Kernels pair by
    name, else as `pairs` ({base kernel: head kernel}) says, else by role (roofline/analysis/pairing.py).
    Raises CompareError when the workloads differ (unless allowed) or when a gate is asked for and there
    is no step time."""
    if not 0 < p_value <= 1:
        raise CompareError(f"p_value must be in (0, 1], got {p_value}")
    if fail_if_slower_pct is not None and not (math.isfinite(fail_if_slower_pct) and fail_if_slower_pct >= 0):
        raise CompareError(f"fail_if_slower_pct must be a finite number >= 0, got {fail_if_slower_pct}")
    bw, hw, diffs, same, notes = _runs_notes(base_run, head_run, allow_different_workload)

    step = None
    if base_run.step and head_run.step:
        step = timing_change(
            base_run.step.kernel_ms_per_step,
            head_run.step.kernel_ms_per_step,
            step_spread_pct(base_run),
            step_spread_pct(head_run),
        )

    timings = (run_timing(base_run), run_timing(head_run))
    test = None
    if all(timings):
        test = timing_test(timings[0], timings[1])
        methods = {t.method for t in timings}
        if len(methods) > 1:
            notes.append(f"the timing samples were taken by different methods ({' vs '.join(sorted(methods))})")
    elif any(timings):
        notes.append("timing samples on one side only: the step is compared by the profiler's times")
    clocks, clock_notes = compare_clocks(*timings)
    notes += clock_notes
    paired, pair_notes = pair_kernels(base_run.analysis.kernels, head_run.analysis.kernels, pairs)
    notes += pair_notes
    kernels = [compare_kernel(base_run, head_run, p.base, p.head, timings, p.how) for p in paired]
    gate = decide_gate(fail_if_slower_pct, p_value, test, step)
    one = same_run(base_run, head_run)
    if one:
        gate["same_run"] = True  # the renderers say so first
    return Comparison(
        base=str(base_run.source),
        head=str(head_run.source),
        same_workload=same,
        workload_differences=diffs,
        base_workload=bw,
        head_workload=hw,
        step=step,
        kernels=kernels,
        gate=gate,
        notes=notes,
        timing=test,
        same_run=one,
        clocks=clocks,
    )


__all__ = [
    "Change",
    "Comparison",
    "CompareError",
    "KernelComparison",
    "SampleTest",
    "compare",
    "decide_gate",
    "sample_test",
    "timing_test",
]
