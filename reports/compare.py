"""Rendering a comparison of two runs: plain text for the terminal, GitHub markdown for a PR comment."""

from __future__ import annotations

from reports.numbers import ms, ratio, signed_pct
from reports.text import align
from roofline.analysis.comparison import METRICS, MIN_SAMPLES, Change, Comparison, KernelComparison

LABELS = {
    "duration_ms": "duration (median)",
    "ms_per_step": "time per step",
    "launches": "launches",
    "grid_size": "grid",
    "block_size": "block",
    "registers_per_thread": "registers/thread",
    "dram_gbps": "DRAM GB/s",
    "dram_throughput_pct": "DRAM %",
    "sm_throughput_pct": "SM %",
    "memory_throughput_pct": "memory %",
    "l2_hit_rate_pct": "L2 hit %",
    "waves_per_sm": "waves/SM",
    "achieved_occupancy_pct": "achieved occupancy %",
    "theoretical_occupancy_pct": "theoretical occupancy %",
    "gap_to_floor": "gap to floor",
}
UNITS = dict(METRICS)


def number(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    if unit == "ms":
        text = ms(value)
    elif unit == "x":
        return ratio(value)
    elif abs(value) >= 100 or float(value).is_integer():
        text = f"{value:.0f}"
    else:
        text = f"{value:.2f}"
    return text + (f" {unit}" if unit in ("ms", "GB/s") else "x" if unit == "x" else "")


def value_delta(c: Change, unit: str) -> str:
    """`head (delta %)`: the rocprof-compute way of showing a metric against a baseline."""
    if c.head is None:
        return "-"
    return number(c.head, unit) + ("" if c.delta_pct is None else f" ({signed_pct(c.delta_pct)})")


def step_sentence(cmp: Comparison) -> str | None:
    s = cmp.step
    if s is None:
        return None
    speed = cmp.speedup
    how = (
        f"{speed:.2f}x faster"
        if speed and speed > 1
        else f"{1 / speed:.2f}x slower"
        if speed and speed < 1
        else "the same"
    )
    tested = cmp.timing is not None and cmp.timing.enough
    untested = "no test on these times" + ("; the timing line below tests the step" if tested else "")
    noise = (  # the spread is the range of the runs' per-step times: a yardstick, not a test
        f"within the steps' spread of {s.noise_pct:.2f}%"
        if s.verdict == "within noise"
        else f"more than the steps' spread of {s.noise_pct:.2f}%; {untested}"
        if s.noise_pct is not None
        else f"spread unknown; {untested}"
    )
    return (
        f"{number(s.base, 'ms')} -> {number(s.head, 'ms')} of kernels per iteration: "
        f"{how} ({signed_pct(s.delta_pct)}, {noise})"
    )


def timing_sentence(cmp: Comparison) -> str | None:
    """The step by its timing samples: medians, change with its interval, the test's p-value, and what
    the interval covers (between runs, or within-run only)."""
    t = cmp.timing
    if t is None:
        return None
    text = (
        f"{number(t.base_median_ms, 'ms')} -> {number(t.head_median_ms, 'ms')} per step "
        f"(medians of {t.n_base} and {t.n_head} samples, {t.method}, no profiler): {signed_pct(t.delta_pct)}"
    )
    if not t.enough:
        return text + f" (too few samples for a test: {MIN_SAMPLES} a side needed)"
    return (
        text
        + f", {t.ci_level * 100:.0f}% CI [{signed_pct((t.ci_low - 1) * 100)}, {signed_pct((t.ci_high - 1) * 100)}], "
        f"{t.test} p = {t.p_value:.2g}; the interval is {t.covers}"
    )


def clocks_sentence(cmp: Comparison) -> str | None:
    """Each side's GPU clocks over its timing pass's rounds, THROTTLED where a round ran below its own clock."""
    if not cmp.clocks:
        return None
    said = {k: v.describe() if v is not None else "no timing pass" for k, v in cmp.clocks.items()}
    return f"base {said['base']} | head {said['head']}"


def gate_sentence(cmp: Comparison) -> str | None:
    g = cmp.gate
    if g["fail_if_slower_pct"] is None:
        return None
    verdict = "passed" if g["passed"] else "FAILED"
    extra = f"; {g['note']}" if g.get("note") else ""
    if g["on"] == "timing samples":
        return (
            f"{verdict}: head step {signed_pct(g['slower_pct'])} vs base (p = {g['p']:.2g}), threshold: fail if "
            f"slower by more than {g['fail_if_slower_pct']:g}% with p < {g['p_value']:g}{extra}"
        )
    return (
        f"{verdict}: head step {signed_pct(g['slower_pct'])} vs base, threshold: fail if slower "
        f"by more than {g['fail_if_slower_pct']:g}%{extra}"
    )


def same_run_line(cmp: Comparison) -> str | None:
    return (
        "SAME RUN: base and head are one run (same path or same report checksums); comparing a run "
        "with itself says nothing about a change"
        if cmp.same_run
        else None
    )


def _workload_line(cmp: Comparison) -> str:
    if cmp.same_workload is None:
        return "workload: unknown on one side (bare report)"
    w = cmp.base_workload
    text = (
        f"ctx_len={w.get('ctx_lens') or w.get('ctx_len')} batch={w.get('batch')} heads={w.get('heads')} "
        f"q_len={w.get('q_len')} page_size={w.get('page_size')} {w.get('dtype')} mask={w.get('tree_mask')}"
    )
    if cmp.same_workload:
        return f"workload (both): {text}"
    diffs = ", ".join(f"{k} {b} -> {h}" for k, (b, h) in cmp.workload_differences.items())
    return f"workload: DIFFERENT ({diffs}); base: {text}"


def _verdict(k: KernelComparison) -> str:
    b, h = (_bound(bd, c) for bd, c in zip(k.bound, k.cause))
    if k.side == "base only":
        return b
    if k.side == "head only":
        return h
    return f"{b} -> {h}" if k.verdict_changed else h


def _ms(value: float | None) -> str:
    return ms(value, "-")


def _bound(bound: str | None, cause: str | None) -> str:
    return "-" if bound is None else f"{bound} ({cause})" if cause else bound


def kernel_title(k: KernelComparison) -> str:
    """The kernel's name, `base -> head` when it was paired under another name (and how)."""
    if k.head_kernel and k.head_kernel != k.kernel:
        return f"{k.kernel} -> {k.head_kernel}"
    return k.kernel


def summary_rows(cmp: Comparison) -> list[list[str]]:
    rows = [["kernel", "side", "base ms", "head ms", "change", "noise", "per step", "bound"]]
    for k in cmp.kernels:
        d = k.metrics["duration_ms"]
        per = k.metrics["ms_per_step"]
        change = f"{signed_pct(d.delta_pct)} {d.verdict}" if d.verdict else "-"
        rows.append(
            [
                kernel_title(k),
                k.side if k.paired_by in (None, "name") else f"both, by {k.paired_by}",
                _ms(d.base),
                _ms(d.head),
                change,
                "-" if d.noise_pct is None else f"{d.noise_pct:.2f}%",
                f"{_ms(per.base)} -> {_ms(per.head)}",
                _verdict(k),
            ]
        )
    return rows


def metric_rows(k: KernelComparison) -> list[list[str]]:
    rows = [["metric", "base", "head (delta %)"]]
    for name, unit in METRICS:
        c = k.metrics[name]
        if c.base is None and c.head is None:
            continue
        rows.append([LABELS[name], number(c.base, unit), value_delta(c, unit)])
    rows.append(["bound (cause)", *(_bound(b, c) for b, c in zip(k.bound, k.cause))])
    rows.append(["top stalls", k.top_stalls[0] or "-", k.top_stalls[1] or "-"])
    return rows


def _run_lines(cmp: Comparison) -> list[tuple[str, str]]:
    """The run-level lines both renderings lead with, as (label, sentence); label "" for the workload."""
    step = step_sentence(cmp) or "none (needs both runs' workload and iterations)"
    lines = [
        ("", _workload_line(cmp)),
        ("step", step),
        ("timing", timing_sentence(cmp)),
        ("clocks", clocks_sentence(cmp)),
        ("gate", gate_sentence(cmp)),
    ]
    return [(label, line) for label, line in lines if line]


def render_compare_text(cmp: Comparison) -> str:
    """The terminal's rendering: the run lines, the kernel table, each kernel's metrics, the notes, and
    last the gate's verdict with the step's change (render_compare_line: the line a CI log's tail shows)."""
    out = [f"base: {cmp.base}", f"head: {cmp.head}"] + ([same_run_line(cmp)] if cmp.same_run else [])
    out += [f"{label}: {line}" if label else line for label, line in _run_lines(cmp) if label != "gate"]
    out += ["", align(summary_rows(cmp))]
    for k in cmp.kernels:
        title = kernel_title(k) + (f" ({k.side})" if k.side != "both" else "")
        out += ["", f"{title}: {k.base_config or '-'} -> {k.head_config or '-'}", align(metric_rows(k))]
    out += [f"note: {n}" for n in cmp.notes]
    return "\n".join(out + ["", render_compare_line(cmp)])


def render_compare_line(cmp: Comparison) -> str:
    """One line: the gate's verdict (or "no gate"), the step's change by the timing samples or the
    profiler's step times, and SAME RUN when it is one run twice (`compare --format line`)."""
    timing, step = cmp.timing, cmp.step
    if timing is not None:
        rounds = f" in {timing.rounds[0]}+{timing.rounds[1]} rounds" if timing.rounds else " (within-run)"
        change = f"step {signed_pct(timing.delta_pct)} by {timing.n_base}+{timing.n_head} timing samples{rounds}"
        if timing.enough:
            change += f" (p = {timing.p_value:.2g})"
    elif step is not None and step.delta_pct is not None:
        change = f"step {number(step.base, 'ms')} -> {number(step.head, 'ms')} ({signed_pct(step.delta_pct)}, profiler times)"
    else:
        change = "no step time on both sides"
    gate = gate_sentence(cmp)
    verdict = f"gate: {gate}" if gate else "gate: none (pass --fail-if-slower PCT)"
    throttled = [k for k, v in (cmp.clocks or {}).items() if v is not None and v.throttled]
    flag = f" | THROTTLED: {' and '.join(throttled)} (clocks below the GPU's own)" if throttled else ""
    return ("SAME RUN: " if cmp.same_run else "") + f"{verdict} | {change}{flag}"


def _md_table(rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join(" --- " for _ in esc[0]) + "|"]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in esc[1:]])


def render_compare_markdown(cmp: Comparison) -> str:
    """A pull-request comment: the step and the gate up front, per-kernel metrics folded away."""
    out = ["### roofline compare", "", f"base `{cmp.base}` -> head `{cmp.head}`", ""]
    if cmp.same_run:
        out.append(f"- **{same_run_line(cmp)}**")
    for label, line in _run_lines(cmp):
        if label == "gate":
            line = f"{'✅' if cmp.passed else '❌'} {line}"
        out.append(f"- **{label}**: {line}" if label else f"- {line}")
    out += [f"- note: {n}" for n in cmp.notes]
    out += ["", _md_table(summary_rows(cmp)), ""]
    for k in cmp.kernels:
        title = f"`{kernel_title(k)}`" + (f" ({k.side})" if k.side != "both" else "")
        out += [
            "<details>",
            f"<summary>{title}: every metric, head (delta % vs base)</summary>",
            "",
            f"{k.base_config or '-'} -> {k.head_config or '-'}",
            "",
            _md_table(metric_rows(k)),
            "",
            "</details>",
            "",
        ]
    return "\n".join(out).rstrip() + "\n"
