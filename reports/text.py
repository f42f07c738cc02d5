"""Plain-text rendering of an analysis: one table, then each kernel's evidence."""

from __future__ import annotations

import math
import textwrap

from kernels.batches import BatchShape, lens_text
from kernels.spec import ctx_text
from profiler.nsys_summary import overlapping_launch_ms
from profiler.timing import BENCH_METHODS
from reports.clocks import bench_clock_line, throttled_rows
from reports.meta import LAUNCH_BOUND_PCT, nsys_version
from reports.numbers import fmt as _fmt
from reports.numbers import ms, ratio, us
from reports.table import align
from reports.waits import waits_text
from roofline.analysis.bench_table import ragged_lens
from roofline.analysis.floor import Floor, at_size_line
from roofline.analysis.hierarchy import padding_note
from roofline.analysis.summary import Analysis

WRAP = 100  # text width for rule text and notes


def kernel_table(analysis: Analysis) -> list[list[str]]:
    header = [
        "kernel",
        "launches",
        "ms",
        "DRAM GB/s",
        "DRAM %",
        "L2 hit %",
        "waves/SM",
        "top stalls",
        "bound",
        "% of step",
    ]
    if analysis.floor:
        header.append("gap")  # per kernel only where one kernel is the whole step
    rows = [header]
    names = short_names([k.label or k.kernel for k in analysis.kernels])
    for k, name in zip(analysis.kernels, names):
        stalls = ", ".join(s["reason"] for s in k.top_stalls) or "-"
        rows.append(
            [
                name,
                str(k.launches),
                ms(k.duration_ms, "-"),
                _fmt(k.dram_gbps, ".0f"),
                _fmt(k.dram_throughput_pct, ".1f"),
                _fmt(k.l2_hit_rate_pct, ".1f"),
                _fmt(k.waves_per_sm, ".2f"),
                stalls,
                k.bound,
                _fmt(None if k.share_of_step is None else 100 * k.share_of_step, ".1f"),
            ]
            + ([ratio(k.gap_to_floor, "-")] if analysis.floor else [])
        )
    return rows


def short_names(names: list[str], width: int = 40) -> list[str]:
    """Names cut to `width` for a table column: what tells rows apart (a ' [grid 8]' suffix) kept whole, the
    name cut at a word ('_') boundary with '...'; names that still coincide get #1, #2: two different
    kernels never print the same."""

    def cut(name: str) -> str:
        if len(name) <= width:
            return name
        base, sep, tail = name.partition(" [")
        tail = sep + tail
        room = max(8, width - len(tail) - 3)
        words = base[:room].rsplit("_", 1)[0] if "_" in base[:room] else base[:room]
        short = (words if len(words) >= room // 2 else base[:room]) + "..."
        return short + tail if len(short + tail) <= width + len(tail) else short

    out = [cut(n) for n in names]
    for short in {s for s in out if out.count(s) > 1}:
        same = [i for i, s in enumerate(out) if s == short]
        if len({names[i] for i in same}) > 1:
            for n, i in enumerate(same, 1):
                out[i] = f"{short} #{n}"
    return out


def wrap(text: str, indent: str = "    ") -> list[str]:
    """Text wrapped at word boundaries, continuation lines indented; nothing is cut."""
    return textwrap.wrap(text, WRAP, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False)


def hierarchy_line(h: dict, q_len: int | None = None) -> str:
    peak = f" of {h['compute_peak_tflops']:.0f}" if h.get("compute_peak_tflops") else ""  # the report's own peak
    parts = [f"{h['tflops']:.2f}{peak} TFLOP/s {h['compute_kind']}"]
    useful = bool(h.get("useful_flops"))
    if useful:  # the workload's FLOPs first, ncu's executed count beside them
        parts = [
            f"{h['useful_tflops']:.2f} TFLOP/s of useful work ({h['useful_flops'] / 1e9:.2f} GFLOP, the "
            f"workload's); executed {parts[0]} ({h['flops'] / 1e9:.2f} GFLOP, "
            f"{ratio(h['executed_over_useful'])}; tensor alone {ratio(h['tensor_flops'] / h['useful_flops'])}: "
            f"{padding_note(h['tensor_flops'] / h['useful_flops'], q_len)})"
        ]
    for lv in h["levels"]:
        pct = (
            f" ({lv['pct_of_peak']:.0f}% of peak)"
            if lv.get("pct_of_peak") is not None
            else " (peak not in this report)"
        )
        ai = (
            f"{lv['useful_arithmetic_intensity']:.1f} FLOP/B useful ({lv['arithmetic_intensity']:.1f} executed)"
            if useful
            else f"{lv['arithmetic_intensity']:.1f} FLOP/B"
        )
        parts.append(
            f"{lv['level']} {lv['bytes'] / 1e6:.1f} MB, {ai}, {lv['gbps']:.0f} GB/s{pct}"
            + (f", roof {lv['roof']}" if useful and lv.get("roof") else "")
        )
    return "roofline (peaks: the report's own): " + "; ".join(parts)


def render_text(analysis: Analysis) -> str:
    out = [f"GPU: {analysis.gpu.name or 'unknown'}"]
    if analysis.workload:
        w = analysis.workload
        ctx = f"ctx_lens={lens_text(w.ctx_lens)}" if w.ctx_lens else f"ctx_len={w.ctx_len}"
        out.append(
            f"workload: {ctx} batch={w.batch} heads={w.heads} "
            f"q_len={w.q_len} page_size={w.page_size} {w.dtype} mask={w.tree_mask}"
        )
        if w.ctx_lens:
            out.append(f"batch: {BatchShape.of(w.ctx_lens).describe()}, {w.kv_tokens:,} tokens attended in all")
    if analysis.floor:
        f = analysis.floor
        out.append(
            f"floor: {us(f.floor_ms)} µs per layer ({f.bound}-bound: "
            f"{f.kv_bytes / 1e6:.1f} MB of KV at {f.bandwidth_gbps:.0f} GB/s {f.bandwidth_kind}, "
            f"{f.flops / 1e9:.2f} GFLOP at {f.peak_tflops:.0f} TFLOP/s {f.peak_kind})"
        )
        out += wrap(
            at_size_line(f) or "at-size floor: none (no measured read fit for this GPU: `roofline calibrate`)", "  "
        )
    out += ["", align(kernel_table(analysis)), ""]
    empty = [k.label or k.kernel for k in analysis.kernels if k.duration_ms is None]
    if empty and len(empty) < len(analysis.kernels):
        out += wrap(f"no values in the capture for {', '.join(empty)}: left out of % of step and the verdicts", "  ")
        out.append("")
    for k in analysis.kernels:
        name = k.label or k.kernel  # the full (mangled) name: --format json, and the report's details
        out.append(f"{name}: {k.bound}" + (f" ({k.roof or k.cause})" if (k.roof or k.cause) else ""))
        for e in k.evidence:
            out += wrap(f"  - {e}")
        if k.ncu_rule:
            agree = {True: "agrees", False: "DISAGREES", None: "not comparable"}[k.agrees_with_ncu]
            out += wrap(f"  - ncu SOLBottleneck ({agree}): {k.ncu_rule}")
        elif getattr(k, "ncu_rule_note", None):
            out += wrap(f"  - {k.ncu_rule_note}")
        if k.hierarchy:
            out += wrap("  - " + hierarchy_line(k.hierarchy, analysis.workload.q_len if analysis.workload else None))
        if k.advice:
            out += wrap(f"  - try: {k.advice}")
    out += waits_text(analysis)
    if analysis.step:
        s = analysis.step
        out.append(
            f"\nstep: {ms(s.kernel_ms_per_step)} ms of kernels vs floor {ms(s.floor_ms)} ms: "
            f"{ratio(s.gap)} from the floor"
            + (f", {ratio(s.gap_at_size)} from the at-size floor {ms(s.at_size_ms)} ms" if s.at_size_ms else "")
        )
    for n in analysis.notes:
        out += wrap(f"note: {n}", "  ")
    return "\n".join(out)


def render_scaling(fits) -> str:
    """roofline.analysis.scaling's fits: time = fixed + KV bytes / rate, one line per kernel x page size x heads."""
    from roofline.analysis.scaling import FIT_TOL, MIN_POINTS  # lazy

    rows = [
        [
            "kernel",
            "page",
            "heads",
            "ctx fitted",
            "fixed µs",
            "rate GB/s",
            "% read BW",
            "rate TFLOP/s",
            "% matmul",
            "fixed share",
            "worst fit",
        ]
    ]
    notes = []
    for f in fits:
        shown = f.rate_gbps is not None and not f.note
        rows.append(
            [
                f.kernel,
                str(f.page_size),
                str(f.heads),
                f"{ctx_text(int(f.min_ctx_len))}-{ctx_text(int(f.max_ctx_len))} ({f.points})",
                f"{f.fixed_us:.1f}",
                f"{f.rate_gbps:.0f}" if shown else "-",
                f"{f.pct_of_read_bw:.1f}" if shown else "-",
                f"{f.rate_tflops:.0f}" if shown else "-",
                f"{f.pct_of_matmul:.1f}" if shown else "-",
                f"{100 * f.fixed_share:.0f}% at {ctx_text(int(f.max_ctx_len))}",
                f"{f.max_residual_pct:.1f}%",
            ]
        )
        if f.note:
            notes.append(f"{f.kernel} page {f.page_size} heads {f.heads}: {f.note}")
    head = (
        "time = fixed + KV bytes / rate (least squares over the longest contexts where a line fits within "
        f"{FIT_TOL:.0%}, at least {MIN_POINTS}; the floor has no fixed part; fixed share: of the time at the "
        "longest context; worst fit: the farthest point from the line)"
    )
    return "\n".join(wrap(head, "") + ["", align(rows)] + [f"  - {n}" for n in notes])


def _at_size_cells(r) -> list[str]:
    """The bench row's at-size floor and gap ('-' for a table saved before it, or without a fit)."""
    at = r.get("at_size_ms")
    if at is None or math.isnan(at):
        return ["-", "-"]
    return [f"{at:.4f}", f"{r.gap_at_size:.2f}x"]


def _batch_cells(r) -> list[str]:
    """A batched table's point cells: the row's name, the requests in the step and its KV megabytes."""
    lens = ragged_lens(r)
    size = str(len(lens)) if lens else str(int(r.batch))
    kv = r.get("kv_bytes")
    return [str(r.get("row") or "-"), size, "-" if kv is None or kv != kv else f"{kv / 1e6:.1f}"]


def _bench_head(table, meta: dict) -> str:
    """The bench's first lines: the GPU and versions, the ceilings measured here, the method, the clocks."""
    head = (
        f"GPU: {meta['device']} (driver {meta.get('driver', '?')}), torch {meta.get('torch')}, "
        f"triton {meta.get('triton')}\nmeasured here: read {meta['read_gbps']:.0f} GB/s, copy "
        f"{meta['copy_gbps']:.0f} GB/s (read+write), bf16 matmul {meta['matmul_tflops']:.0f} TFLOP/s"
    )
    method = meta.get("method", "flush")  # bench.json files from before the option were all do_bench's
    head += f"\ntimed by: {method} ({BENCH_METHODS.get(method, 'unknown method')}), median per step"
    return head + "\n" + bench_clock_line(table, meta)


def render_bench(table, meta: dict, fits=None) -> str:
    """The benchmark table, one line per kernel x ctx_len x page_size x heads; then the scaling fits. A table
    with batches (the serving rows, --batch, --lens) adds the row's name, the batch and its KV MB."""
    head = _bench_head(table, meta)
    throttled = throttled_rows(table)
    masks = "mask" in table and table["mask"].nunique() > 1
    x_read = "x_read" in table and table["x_read"].notna().any()
    batched = bool((table["batch"] != 1).any()) or ("row" in table and table["row"].fillna("").astype(bool).any())
    rows = [
        ["kernel"]
        + (["row", "batch", "KV MB"] if batched else [])
        + ["ctx", "page", "heads"]
        + (["q_len"] if batched else [])
        + (["mask"] if masks else [])
        + ["ms", "KV GB/s", "% read BW", "TFLOP/s", "% matmul", "floor ms", "gap", "at-size ms", "gap at size"]
        + (["x read"] if x_read else [])
        + ["speedup"]
    ]
    skipped = []
    for i, r in table.iterrows():
        lens = ragged_lens(r)
        ctx = f"{ctx_text(min(lens))}-{ctx_text(max(lens))}" if lens else ctx_text(int(r.ctx_len))
        if batched and not lens and r.ctx_len % 1024:
            ctx = str(int(r.ctx_len))
        point = (
            [r.kernel]
            + (_batch_cells(r) if batched else [])
            + [ctx, str(r.page_size), str(r.heads)]
            + ([str(int(r.q_len))] if batched else [])
            + ([r["mask"]] if masks else [])
        )
        if r.get("error"):
            if str(r.error).startswith("skipped: "):
                skipped.append(f"{r.kernel} at {' '.join(point[1:])}: {r.error.removeprefix('skipped: ')}")
                continue
            rows.append(point + ["error: " + r.error[:60]] + [""] * (len(rows[0]) - len(point) - 1))
            continue
        flops = (
            ["-", "-"] if r.kernel == "read" or r.tflops != r.tflops else [f"{r.tflops:.1f}", f"{r.pct_of_matmul:.1f}"]
        )
        rows.append(
            point
            + [
                f"{r.median_ms:.4f}" + ("!" if throttled[i] else ""),
                f"{r.eff_gbps:.0f}",
                f"{r.pct_of_read_bw:.1f}",
                *flops,
                f"{r.floor_ms:.4f}",
                f"{r.gap:.2f}x",
                *_at_size_cells(r),
            ]
            + ([_times(r.get("x_read"))] if x_read else [])
            + ["-" if r.speedup_vs_triton_mla != r.speedup_vs_triton_mla else f"{r.speedup_vs_triton_mla:.1f}x"]
        )
    if "at_size_ms" in table.columns and table["at_size_ms"].notna().any():
        head += (
            "\nat-size floor: the KV bytes read at this GPU's measured read fit, fixed + bytes / rate "
            "(roofline/data/measured; `roofline calibrate` fits it), or the compute floor where longer"
        )
    out = head + "\n\n" + align(rows)
    if throttled.any():
        out += "\n! throttled: " + "; ".join(
            f"{r.kernel} {r.get('row') or ctx_text(r.ctx_len)}: {r.throttled}" for _, r in table[throttled].iterrows()
        )
    if x_read:
        out += "\nx read: the time over a bare read of the same KV bytes (kernel `read`), in the same run"
    if batched:
        out += "\nbatch: requests in the step; ctx: each one's prefix (a ragged batch: its shortest-longest)"
    if skipped:
        out += (
            "\nnot run (the kernel cannot): "
            + "; ".join(skipped[:6])
            + (f"; and {len(skipped) - 6} more" if len(skipped) > 6 else "")
        )
    return out + ("\n\n" + render_scaling(fits) if fits else "")


def _times(value) -> str:
    return "-" if value is None or value != value else f"{value:.2f}x"


def render_projection(p: dict) -> str:
    out = [f"projection onto {p['target_name']} (from {p['source']})"]
    if p.get("floor"):
        f = Floor.from_dict(p["floor"])
        out.append(
            f"  floor on target: {us(f.floor_ms)} µs per layer, {f.bound}-bound "
            f"({f.bandwidth_gbps:.0f} GB/s {f.bandwidth_kind}, {f.peak_tflops:.0f} TFLOP/s {f.peak_kind})"
        )
    for r in p["kernels"]:
        projected = f"{ms(r['projected_ms'])} ms" if r["projected_ms"] is not None else "-"
        measured = f"{ms(r['measured_ms'])} ms" if r["measured_ms"] is not None else "-"
        out.append(f"  {r['kernel']}: measured {measured} ({r['bound_measured']}) -> {projected}; {r['method']}")
    if p.get("projected_step_ms") is not None:
        out.append(f"  projected step: {ms(p['projected_step_ms'])} ms")
    out.append(f"  measured: {p['measured']}")
    out.append(f"  modelled: {p['modelled']}")
    if p.get("kernel_model"):
        out += wrap(f"  {p['kernel_model']['explanation']}")
    return "\n".join(out)


def render_timeline(timeline, analysis: Analysis | None = None, tools: dict | None = None) -> str:
    """The nsys timeline: per-kernel times (beside ncu's, when the run has counters) and what one
    step costs: kernels, idle gaps between them, launch calls, and the host's own time. `tools`: the
    run manifest's, whose nsys version is the one shown (reports.meta.nsys_version)."""
    s = timeline.summary
    version = nsys_version({"nsys": ((tools or {}).get("nsys") or {}).get("version")}, s)
    where = f"in the NVTX range {s['range']!r}" if s.get("range") else "in the whole trace (no NVTX range)"
    steps = f"{s['steps']} steps" if s["steps"] else "no NVTX step ranges"
    out = [
        f"timeline (nsys {version or '?'}, {s.get('launches_in_range') or s['launches']} launches {where}, {steps}):"
    ]
    ncu = {}
    if analysis is not None:
        for k in analysis.kernels:
            ncu.setdefault(k.kernel, k.duration_ms)
    header = ["kernel", "launches", "total ms", "median ms", "min ms", "max ms", "% of kernel time"]
    with_ncu = any(ncu.get(k) is not None for k in timeline.kernels["kernel"])
    if with_ncu:
        header.append("ncu ms (replayed)")
    rows = [header]
    names = short_names(list(timeline.kernels["kernel"]))
    for name, (_, k) in zip(names, timeline.kernels.iterrows()):
        row = [
            name,
            str(int(k["launches"])),
            ms(k["total_ms"]),
            ms(k["median_ms"]),
            ms(k["min_ms"]),
            ms(k["max_ms"]),
            f"{k['share_pct']:.1f}",
        ]
        if with_ncu:
            row.append(ms(ncu.get(k["kernel"]), "-"))
        rows.append(row)
    if len(rows) > 1:
        out.append(align(rows))
    if s.get("step_ms_median") is not None:
        line = (
            f"per step (median of {s['steps'] - s['steps_without_kernels']}): "
            f"{ms(s['step_ms_median'])} ms from first kernel start to last kernel end = "
            f"{ms(s['kernel_ms_per_step'])} ms of {s['kernels_per_step']:.0f} kernel(s) + "
            f"{ms(s['idle_ms_per_step'])} ms idle between them ({s['idle_pct']:.0f}%); "
            + _overlap_words(s)
            + f"launch API calls {ms(s.get('launch_api_ms_per_step'), '-')} ms"
        )
        out += wrap(line, "  ")
        if s.get("host_ms_per_step") is not None and s.get("gpu_busy_pct_of_range") is not None:
            out += wrap(
                f"host: {ms(s['host_ms_per_step'])} ms per step (the NVTX step range); the GPU ran "
                f"kernels {s['gpu_busy_pct_of_range']:.0f}% of the profiled range"
                + (" (it waits for the host: launch-bound)" if s["gpu_busy_pct_of_range"] < LAUNCH_BOUND_PCT else ""),
                "  ",
            )
    for n in s.get("notes", []):
        out += wrap(f"note: {n}", "  ")
    return "\n".join(out)


def _overlap_words(s: dict) -> str:
    """Where a step's launches overlap (a programmatic dependent launch, two streams): what their own times sum to."""
    summed = overlapping_launch_ms(s)
    return (
        "" if summed is None else f"the launches' own times sum to {ms(summed)} ms (they overlap: counted once above); "
    )
