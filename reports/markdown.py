"""GitHub-flavoured markdown report of an analysis and its nsys timeline (a `ReportInput`), with charts.

`render_markdown` is a pure function of its inputs; `write_report` writes report.md and its charts
(PNG and SVG) side by side, linked by relative names so the folder can be moved or pasted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from profiler.nsys_reader import Timeline
from reports.charts.common import kernel_label
from reports.charts.roofline import floor_point, report_roofs, roofline_chart, roofline_layout, roofline_points
from reports.charts.stalls import stall_chart
from reports.charts.timeline import timeline_chart
from reports.charts.waits import waits_chart
from reports.meta import KINDS, LAUNCH_BOUND_PCT, STALL_UNIT, STALL_UNIT_SHORT, ReportMeta, nsys_version
from reports.numbers import known, ms, ratio, us
from reports.waits import waits_markdown
from roofline.analysis.floor import Floor, Step, at_size_line
from roofline.analysis.hierarchy import padding_note
from roofline.analysis.summary import Analysis, KernelSummary
from roofline.analysis.verdict import STALL_MEANING


@dataclass(frozen=True)
class ReportInput:
    """What a report renders: the analysis and, when the run has one, its nsys timeline (the rest
    of what it shows, commands, versions and roofs, is the `ReportMeta`)."""

    analysis: Analysis
    timeline: Timeline | None = None


class ReportExists(FileExistsError):
    def __str__(self) -> str:
        return (
            f"{self.args[0]} already exists (another run's report?): pass --force to overwrite it, "
            "or -o NEW/report.md to write a new one"
        )


def _f(value, spec: str, suffix: str = "", missing: str = "–") -> str:
    return missing if value is None else format(value, spec) + suffix


def _cell(text: str) -> str:
    """Text safe inside a table cell: pipes escaped, no line breaks."""
    return str(text).replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    text = str(text).replace("`", "'")
    return f"`{_cell(text)}`"


def _plain(text: str) -> str:
    """Tool text shown as prose: markdown and HTML specials escaped."""
    out = str(text)
    for ch in "\\`*_[]<>|#":
        out = out.replace(ch, "\\" + ch)
    return out


def _table(header: list[str], rows: list[list[str]], align: str = "") -> list[str]:
    align = align or "l" * len(header)
    marks = {"l": "---", "r": "---:", "c": ":---:"}
    return ["| " + " | ".join(header) + " |", "| " + " | ".join(marks[a] for a in align) + " |"] + [
        "| " + " | ".join(_cell(c) for c in r) + " |" for r in rows
    ]


def _details(summary: str, body: list[str]) -> list[str]:
    """A folded block; blank lines around the body so GitHub renders the markdown inside it."""
    return [f"<details><summary>{summary}</summary>", "", *body, "", "</details>", ""]


def _dram_level(k: KernelSummary) -> dict:
    return next((lv for lv in (k.hierarchy or {}).get("levels", []) if lv["level"] == "DRAM"), {})


def _dram_pct(k: KernelSummary) -> float | None:
    """DRAM throughput, % of the report's own peak (ncu's own number when the report has it)."""
    if k.dram_throughput_pct is not None:
        return k.dram_throughput_pct
    if k.dram_gbps and k.dram_peak_gbps:
        return 100 * k.dram_gbps / k.dram_peak_gbps
    return None


def _name(k: KernelSummary) -> str:
    """The row's distinct label (kernel + what tells it apart), else the kernel name."""
    return k.label or k.kernel


def _prose(text: str) -> str:
    """Tool or analysis text as prose: `quoted` commands become code spans, the rest is escaped."""
    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: nothing is code
        return _plain(text)
    return "".join(_code(p) if i % 2 else _plain(p) for i, p in enumerate(parts))


def _stalls(k: KernelSummary, n: int = 3) -> str:
    return ", ".join(f"{s['reason']} {s['cycles_per_issue']:.1f}" for s in k.top_stalls[:n]) or "–"


def _bound(k: KernelSummary) -> str:
    why = k.roof or k.cause
    return f"**{k.bound}**" + (f": {why}" if why else "")


def _measured_dram(meta: ReportMeta) -> float | None:
    return next((r.value for r in meta.roofs if r.level == "DRAM" and r.kind == "measured"), None)


def _title(report: ReportInput, meta: ReportMeta, s: Step | None) -> list[str]:
    name = Path(meta.source).name or meta.source
    gpu = report.analysis.gpu.name or "unknown GPU"
    ks = report.analysis.kernels
    line = f"{len(ks)} kernel{'s' if len(ks) != 1 else ''} on {gpu}"
    if s:
        line += (
            f"; {ms(s.kernel_ms_per_step)} ms of kernels per step against a floor of "
            f"{us(s.floor_ms)} µs: **{ratio(s.gap)}** from the floor"
        )
    elif ks:
        slowest = max(ks, key=lambda k: (k.duration_ms or 0) * k.launches)
        line += f"; most time in {_code(_name(slowest))} ({slowest.bound}-bound)"
    busy = report.timeline.summary.get("gpu_busy_pct_of_range") if report.timeline is not None else None
    if busy is not None and busy < LAUNCH_BOUND_PCT:
        line += f"; **launch-bound**: the GPU ran kernels only {busy:.0f}% of the profiled range (nsys)"
    return [
        f"# Roofline report: {_cell(name)}",
        "",
        f"{line}.",
        "",
        f"Source: {_code(meta.source)} ({meta.source_kind})"
        + (f", generated by roofline {meta.versions['roofline']}" if meta.versions.get("roofline") else "")
        + ".",
        "",
    ]


def _gpu(analysis: Analysis, meta: ReportMeta) -> list[str]:
    g = analysis.gpu
    out = [
        "## GPU",
        "",
        f"{g.name or 'unknown'}"
        + (f" (catalogue entry {_code(g.catalogue)})" if g.catalogue else " (not in the GPU catalogue)")
        + (f", {g.sm_count:.0f} SMs" if g.sm_count else "")
        + ".",
        "",
    ]
    order = ["DRAM", "L2", "L1", "tensor", "fp32"]
    roofs = sorted(report_roofs(analysis) + list(meta.roofs), key=lambda r: (order.index(r.level), -r.value))
    if roofs:
        out += _table(
            ["roof", "value", "kind"],
            [[r.level, f"{r.value:,.0f} {r.unit}", KINDS.get(r.kind, r.kind)] for r in roofs],
            "lrl",
        )
        out.append("")
        out.append(
            "*report's own*: the peak ncu reports for this GPU at the clock it ran (peak per cycle x clock); "
            "*datasheet*: the vendor's number; *measured*: `roofline calibrate` on this GPU model."
        )
        out.append("")
    if meta.ceilings:
        out += _details(
            "Every catalogue ceiling and its source",
            _table(
                ["ceiling", "value", "kind", "source"],
                [
                    [c["unit"], f"{c['value']:,.1f}", KINDS.get(c["kind"], c["kind"]), _plain(c.get("source") or "–")]
                    for c in meta.ceilings
                ],
                "lrll",
            ),
        )
    return out


def _workload(analysis: Analysis, meta: ReportMeta) -> list[str]:
    w = analysis.workload
    out = ["## Workload", ""]
    if w is None:
        why = meta.why_no_floor or (
            f"{meta.source} is a bare report: it does not record the workload that launched the kernels"
        )
        return out + [
            f"Not known: {_plain(why)}. So this report has **no floor section** and no gap to the "
            "floor; profile through `roofline profile` to get them.",
            "",
        ]
    fields = [
        "ctx_len",
        "ctx_lens",
        "batch",
        "heads",
        "q_len",
        "page_size",
        "dtype",
        "kv_lora_rank",
        "rope_dim",
        "tree_mask",
        "seed",
    ]
    values = {f: getattr(w, f) for f in fields}
    rows = [[_code(f), _code(list(v) if isinstance(v, tuple) else v)] for f, v in values.items() if v is not None]
    if meta.kernel:
        rows.insert(0, ["kernel", _code(meta.kernel)])
    if meta.iterations:
        rows.append(["launches per capture", str(meta.iterations)])
    return out + _table(["field", "value"], rows) + [""]


def _floor(f: Floor | None, s: Step | None) -> list[str]:
    if not f:
        return []
    out = [
        "## Floor",
        "",
        f"The least time the GPU allows for this workload (one layer): **{us(f.floor_ms)} µs**, {f.bound}-bound.",
        "",
    ]
    out += _table(
        ["", "amount", "at", "time"],
        [
            [
                "memory",
                f"{f.kv_bytes / 1e6:,.1f} MB KV + {f.io_bytes / 1e6:,.2f} MB Q/O",
                f"{f.bandwidth_gbps:,.0f} GB/s ({KINDS.get(f.bandwidth_kind, f.bandwidth_kind)})",
                f"{us(f.memory_ms)} µs",
            ],
            [
                "compute",
                f"{f.flops / 1e9:,.2f} GFLOP ({f.arithmetic_intensity:.0f} FLOP/B)",
                f"{f.peak_tflops:,.0f} TFLOP/s ({KINDS.get(f.peak_kind, f.peak_kind)})",
                f"{us(f.compute_ms)} µs",
            ],
        ],
        "llll",
    )
    out += ["", at_size_line(f) or "No at-size floor: no measured read fit for this GPU (`roofline calibrate`)."]
    if s:
        out += [
            "",
            f"Kernels per step: **{ms(s.kernel_ms_per_step)} ms**, {ratio(s.gap)} the floor"
            + (f", {ratio(s.gap_at_size)} the at-size floor." if s.at_size_ms else "."),
        ]
    return out + [""]


def _kernel_table(analysis: Analysis, meta: ReportMeta) -> list[str]:
    floor = analysis.floor is not None
    useful = any((k.hierarchy or {}).get("useful_flops") for k in analysis.kernels)
    header = [
        "#",
        "kernel",
        "launches",
        "time (ms)",
        "% of step",
        "DRAM GB/s",
        "% of DRAM peak",
        "TFLOP/s",
        "FLOP/B (DRAM)",
        "L2 hit %",
        "occupancy %",
        f"top stalls ({STALL_UNIT_SHORT})",
        "bound",
    ]
    header += ["gap to floor"] if floor else []
    rows = []
    for i, k in enumerate(analysis.kernels):
        h = k.hierarchy or {}
        pct = _dram_pct(k)
        share = k.share_of_step
        rows.append(
            [
                f"K{i + 1}",
                _code(kernel_label(i, _name(k), 60).split(" ", 1)[1]),
                str(k.launches),
                ms(k.duration_ms),
                _f(None if share is None else 100 * share, ".1f"),
                _f(k.dram_gbps, ",.0f"),
                _f(pct, ".1f"),
                _f(h.get("useful_tflops", h.get("tflops")), ".2f"),
                _f(
                    _dram_level(k).get("useful_arithmetic_intensity", _dram_level(k).get("arithmetic_intensity")),
                    ",.1f",
                ),
                _f(k.l2_hit_rate_pct, ".1f"),
                _f(k.achieved_occupancy_pct, ".1f"),
                _stalls(k),
                _bound(k),
            ]
            + ([ratio(k.gap_to_floor)] if floor else [])
        )
    out = ["## Kernels", ""] + _table(header, rows, "llrrrrrrrrrll" + ("l" if floor else ""))
    out += [
        "",
        "Time is the median per launch; % of step is the kernel's share of all kernel time; "
        "% of DRAM peak is against the report's own peak; "
        f"{STALL_UNIT_SHORT}: {STALL_UNIT}, the unit of every stall number here. "
        + (
            "TFLOP/s and FLOP/B count the workload's own FLOPs where it is known (the floor's, split over the "
            "step's kernels by the tensor FLOPs ncu counted); ncu's executed count is in each kernel's section. "
            if useful
            else ""
        )
        + (
            "Gap to floor (only where one kernel is the whole step): its time over the workload's floor."
            if floor
            else "No gap to floor: the workload is not known."
        ),
        "",
    ]
    return out


def _flops_line(h: dict, q_len: int | None) -> str:
    """Useful (the workload's) and executed (ncu's) FLOPs, and what the ratio is."""
    x, tensor = h["executed_over_useful"], h["tensor_flops"] / h["useful_flops"]
    return (
        f"{h['useful_tflops']:.2f} TFLOP/s of useful work ({h['useful_flops'] / 1e9:,.2f} GFLOP, the "
        f"workload's); {h['tflops']:.2f} TFLOP/s executed ({h['flops'] / 1e9:,.2f} GFLOP counted by ncu: "
        f"{h['tensor_flops'] / 1e9:,.2f} tensor + {h['fp32_flops'] / 1e9:,.2f} FP32): {ratio(x)} the useful work"
        + (f"; tensor alone {ratio(tensor)}: {padding_note(tensor, q_len)}" if tensor > 1.05 else "")
    )


def _kernel_section(i: int, k: KernelSummary, meta: ReportMeta, q_len: int | None = None) -> list[str]:
    h = k.hierarchy or {}
    measured = _measured_dram(meta)
    dram = _f(k.dram_gbps, ",.0f", " GB/s")
    if not k.dram_gbps and _dram_pct(k) is not None:
        dram = f"{_dram_pct(k):.1f}% of the report's own peak (no byte counts in the report)"
    elif k.dram_gbps and k.dram_peak_gbps:
        dram += f" ({100 * k.dram_gbps / k.dram_peak_gbps:.1f}% of the report's own {k.dram_peak_gbps:,.0f}"
        dram += f"; {100 * k.dram_gbps / measured:.1f}% of the measured {measured:,.0f})" if measured else ")"
    compute = "– (no FLOP counters in the report)"
    if h.get("useful_flops"):
        compute = _flops_line(h, q_len)
    elif h.get("tflops") is not None:
        compute = f"{h['tflops']:.2f} TFLOP/s {h['compute_kind']}"
        if h.get("compute_pct"):
            compute += f" ({h['compute_pct']:.1f}% of {h['compute_peak_tflops']:,.0f})"
    levels = h.get("levels", [])
    key = "useful_arithmetic_intensity" if h.get("useful_flops") else "arithmetic_intensity"
    intensity = ", ".join(f"{lv['level']} {lv[key]:,.1f}" for lv in levels) + " FLOP/B" if levels else "–"
    if levels and h.get("useful_flops"):
        intensity += (
            " of useful work (executed: "
            + ", ".join(f"{lv['level']} {lv['arithmetic_intensity']:,.1f}" for lv in levels)
            + ")"
        )
    stalls = (
        "; ".join(
            f"{s['reason']} {s['cycles_per_issue']:.1f}"
            + (f" ({STALL_MEANING[s['reason']]})" if s["reason"] in STALL_MEANING else "")
            for s in k.top_stalls
        )
        or "– (no stall metrics in the report)"
    )
    if k.top_stalls:
        stalls = f"in {STALL_UNIT_SHORT}: {stalls}"
    rows = [
        [
            "launches, grid x block",
            f"{k.launches}, {_f(k.grid_size, '.0f')} x {_f(k.block_size, '.0f')}",
        ],
        [
            "time per launch (median)",
            ms(k.duration_ms, "–") + (" ms" if k.duration_ms is not None else ""),
        ],
        ["DRAM throughput", dram],
        ["compute", compute],
        ["arithmetic intensity", intensity],
        ["SM / memory throughput", f"{_pct(k.sm_throughput_pct)} / {_pct(k.memory_throughput_pct)} of peak"],
        ["L2 hit rate", _pct(k.l2_hit_rate_pct)],
        ["occupancy achieved / theoretical", f"{_pct(k.achieved_occupancy_pct)} / {_pct(k.theoretical_occupancy_pct)}"],
        [
            "registers per thread, waves per SM",
            f"{_f(k.registers_per_thread, '.0f')}, {_f(k.waves_per_sm, '.2f')}",
        ],
        ["top stalls", stalls],
        ["bound", _bound(k)],
        ["busiest unit", k.unit or "–"],
        ["share of step", _pct(None if k.share_of_step is None else 100 * k.share_of_step)],
        ["gap to floor", ratio(k.gap_to_floor)],
    ]
    out = [f"### K{i + 1} {_code(_name(k))}", ""] + _table(["", ""], rows) + [""]
    if k.advice:
        out += [f"Try: {k.advice}.", ""]
    body = [f"- {_plain(e)}" for e in k.evidence]
    if k.mangled_name and k.mangled_name != k.kernel:
        body += ["", f"Full (mangled) name: {_code(k.mangled_name)}"]
    if k.ncu_rule:
        agree = {True: "agrees with this verdict", False: "**disagrees** with this verdict", None: "not comparable"}[
            k.agrees_with_ncu
        ]
        body += ["", f"ncu's own SOLBottleneck rule ({agree}):", "", f"> {_plain(k.ncu_rule)}"]
    if h.get("levels") and h.get("useful_flops"):
        body += [
            "",
            f"Hierarchical roofline (useful FLOPs: {h['useful_flops'] / 1e9:,.2f} G, the workload's; "
            f"executed: {h['tensor_flops'] / 1e9:,.2f} G tensor + {h['fp32_flops'] / 1e9:,.2f} G FP32, "
            f"{ratio(h['executed_over_useful'])}; peaks are the report's own). The roof is the useful "
            "work's, as in the floor section:",
            "",
        ]
        body += _table(
            [
                "level",
                "bytes",
                "FLOP/B useful",
                "FLOP/B executed",
                "GB/s",
                "% of peak",
                "attainable TFLOP/s",
                "roof",
                "roof (executed)",
            ],
            [_level_row(lv, useful=True) for lv in h["levels"]],
            "lrrrrrrll",
        )
    elif h.get("levels"):
        body += [
            "",
            f"Hierarchical roofline (FLOPs: {h['tensor_flops'] / 1e9:,.2f} G tensor + "
            f"{h['fp32_flops'] / 1e9:,.2f} G FP32, as ncu counted them; peaks are the report's own):",
            "",
        ]
        body += _table(
            ["level", "bytes", "FLOP/B", "GB/s", "% of peak", "attainable TFLOP/s", "roof"],
            [_level_row(lv, useful=False) for lv in h["levels"]],
            "lrrrrrl",
        )
    out += _details("Evidence, ncu's rule, hierarchical roofline", body)
    return out


def _pct(value: float | None) -> str:
    return _f(value, ".1f", "%")


def _level_row(lv: dict, useful: bool) -> list[str]:
    """A row of the hierarchical roofline table; `useful`: with the useful work's intensity and the executed roof."""
    intensity = [f"{lv['useful_arithmetic_intensity']:,.1f}"] if useful else []
    return [
        lv["level"],
        f"{lv['bytes'] / 1e6:,.1f} MB",
        *intensity,
        f"{lv['arithmetic_intensity']:,.1f}",
        f"{lv['gbps']:,.0f}",
        _f(lv.get("pct_of_peak"), ".2f"),
        _f(lv.get("attainable_tflops"), ",.1f"),
        lv.get("roof") or "–",
        *([lv.get("executed_roof") or "–"] if useful else []),
    ]


def _timeline(report: ReportInput, meta: ReportMeta) -> list[str]:
    """What nsys saw: per step the kernels, the idle gaps between them, the launch calls, the host."""
    t = report.timeline
    if t is None:
        return []
    s = t.summary
    where = f"the NVTX range '{s['range']}'" if s.get("range") else "the whole trace (no NVTX range)"
    out = [
        "## Timeline",
        "",
        f"From nsys {nsys_version(meta.versions, s) or '(version unknown)'}: "
        f"{s.get('launches_in_range') or s['launches']} launches in {where}, {s['steps']} steps.",
        "",
    ]
    if s.get("step_ms_median") is not None:
        busy = s.get("gpu_busy_pct_of_range")
        bound = (
            f"**launch-bound**: the GPU ran kernels only {busy:.0f}% of the profiled range; it waits for the host"
            if busy is not None and busy < LAUNCH_BOUND_PCT
            else f"not launch-bound: the GPU ran kernels {busy:.0f}% of the profiled range"
            if busy is not None
            else "launch-bound or not: unknown (no NVTX range)"
        )
        n = s["steps"] - s["steps_without_kernels"]
        out += _table(
            ["per step (median of " + str(n) + ")", "ms"],
            [
                ["first kernel start to last kernel end", ms(s["step_ms_median"])],
                [
                    f"kernel time ({s['kernels_per_step']:.0f} kernel{'s' if s['kernels_per_step'] != 1 else ''})",
                    ms(s["kernel_ms_per_step"]),
                ],
                [
                    f"idle between kernels ({s['idle_pct']:.0f}%)"
                    if s.get("idle_pct") is not None
                    else "idle between kernels",
                    ms(s["idle_ms_per_step"]),
                ],
                ["launch API calls (host)", ms(s.get("launch_api_ms_per_step"))],
                ["host time (the NVTX step range)", ms(s.get("host_ms_per_step"))],
            ],
            "lr",
        )
        out += ["", f"Verdict: {bound}.", ""]
    if not t.kernels.empty:
        ncu = {k.kernel: k.duration_ms for k in report.analysis.kernels}
        kernels = list(t.kernels.itertuples(index=False))
        with_ncu = not _timeline_only(report) and any(ncu.get(k.kernel) is not None for k in kernels)
        rows = [
            [
                _code(k.kernel),
                str(int(k.launches)),
                ms(known(k.median_ms)),
                ms(known(k.min_ms)),
                ms(known(k.max_ms)),
                f"{k.share_pct:.1f}",
            ]
            + ([ms(ncu.get(k.kernel))] if with_ncu else [])
            for k in kernels
        ]
        out += _details(
            "Kernels on the timeline (median, min, max per launch, ms)",
            _table(
                ["kernel", "launches", "median", "min", "max", "% of kernel time"]
                + (["ncu (replayed)"] if with_ncu else []),
                rows,
                "lrrrrr" + ("r" if with_ncu else ""),
            ),
        )
    out += [f"- {_prose(n)}" for n in s.get("notes", [])]
    return out


def _off_chart(analysis: Analysis, roofs: list) -> str:
    """Which kernels the roofline chart leaves out, and why (no FLOPs, not among the slowest, or
    beyond the axis)."""
    points = roofline_points(analysis)
    layout = roofline_layout(analysis, roofs)
    shown = {p["index"] for p in layout["points"]}
    no_flops = [f"K{i + 1}" for i in range(len(analysis.kernels)) if i not in {p["index"] for p in points}]
    dropped = [f"K{p['index'] + 1}" for p in points if p["index"] not in shown]
    out = ""
    if no_flops:
        out += f" Not on the chart, no FLOPs counted: {', '.join(no_flops)}."
    if dropped:
        out += f" Left out to keep it readable (least time): {', '.join(dropped)}."
    if layout["off"]:
        out += (
            " Beyond the axis, drawn at its edge (the axis spans the points within a few decades of the "
            "median intensity): "
            + ", ".join(f"{label} {lv} at {ai:,.3g} FLOP/B" for label, lv, ai in layout["off"])
            + "."
        )
    return out


def _timeline_only(report: ReportInput) -> bool:
    """The kernels came from an nsys timeline alone: no counter, no bound."""
    ks = report.analysis.kernels
    return (
        report.timeline is not None
        and bool(ks)
        and all(k.bound == "unknown" and k.sm_throughput_pct is None for k in ks)
    )


def _charts(charts: dict[str, Path], report: ReportInput, meta: ReportMeta, floor: Floor | None) -> list[str]:
    out = ["## Charts", ""]
    analysis = report.analysis
    gpu = analysis.gpu.name or "the GPU"
    if "roofline" in charts:
        out += _figure(
            charts["roofline"],
            f"Roofline: each kernel against the {gpu} roofs",
            "Roofline",
            ": each kernel a filled point at its "
            "DRAM arithmetic intensity, hollow markers at its L2 and L1 intensity; roofs coloured by level, "
            "solid the report's own, dashed the datasheet's, dotted measured."
            + (
                " Where the workload is known, a kernel's point is its useful work (the workload's FLOPs, split "
                "over the step's kernels by the tensor FLOPs ncu counted); an x marks the work ncu counted "
                "(executed, padded MMA rows included)."
                if any(p["executed"] for p in roofline_points(analysis))
                else ""
            )
            + (
                " The star is the workload's floor: the vertical distance from a point to it is the gap."
                if floor_point(floor)
                else ""
            )
            + _off_chart(analysis, report_roofs(analysis) + list(meta.roofs)),
        )
    elif roofline_points(analysis):
        out += ["No roofline chart: charts were not written with this report.", ""]
    elif _timeline_only(report):
        out += [
            "No roofline or stall chart: the source is an nsys timeline, without hardware counters "
            f"(profile with {_code('--tool ncu')} or {_code('both')} for them).",
            "",
        ]
    else:
        out += [
            "No roofline chart: no kernel in the report has FLOP and byte counters ("
            + (
                f"this run's preset, {_code(meta.preset)}, does not collect them; {_code('--preset roofline')} "
                f"(the default) and {_code('--preset full')} do"
                if meta.preset
                else f"ncu's default sections lack them; {_code('roofline profile')} collects them"
            )
            + ").",
            "",
        ]
    if "stalls" in charts:
        out += _figure(
            charts["stalls"],
            "Top warp stalls per kernel",
            "Top warp stalls",
            f", {STALL_UNIT}, each reason in its own colour in every report.",
        )
    elif any(k.top_stalls for k in analysis.kernels):
        out += ["No stall chart: charts were not written with this report.", ""]
    elif not _timeline_only(report):
        out += ["No stall chart: the report has no warp-stall metrics.", ""]
    if "timeline" in charts:
        out += _figure(
            charts["timeline"],
            "Timeline: the host's steps and the GPU's kernels",
            "Timeline",
            " from nsys: per step the host's NVTX range (orange) and the GPU's span from first kernel start to "
            "last kernel end (blue); gaps in the GPU's row are time it waited for the host.",
        )
    return out


def _figure(png: Path, alt: str, name: str, caption: str) -> list[str]:
    """A chart: its PNG, then `name`, a link to its SVG and the caption."""
    png = Path(png).as_posix()
    return [f"![{alt}]({png})", "", f"{name} ([SVG]({Path(png).with_suffix('.svg').as_posix()})){caption}", ""]


def _reproduce(meta: ReportMeta) -> list[str]:
    out = ["## Reproduce", ""]
    if meta.commands:
        first, rest = meta.commands[0], meta.commands[1:]
        out += ["The capture, exactly as run:", "", "```console", first, "```", ""]
        if rest:
            out += _details(
                f"The tool command lines it ran ({len(rest)}, from commands.txt)", ["```console", *rest, "```"]
            )
    else:
        out += ["The capture command is not recorded (a bare report holds no command line).", ""]
    if meta.report_command:
        out += ["This report:", "", "```console", meta.report_command, "```", ""]
    if meta.versions:
        out += _table(["component", "version"], [[k, _code(v)] for k, v in meta.versions.items()]) + [""]
    return out


def render_markdown(report: ReportInput, meta: ReportMeta, charts: dict[str, Path] | None = None) -> str:
    """The whole report as GitHub-flavoured markdown (a timeline adds the timeline section).
    `charts` maps 'roofline'/'stalls'/'timeline'/'waits' to PNG paths relative to where the
    markdown will live (each with an SVG of the same stem beside it)."""
    charts = charts or {}
    analysis = report.analysis
    floor, step = analysis.floor, analysis.step
    out = _title(report, meta, step) + _gpu(analysis, meta) + _workload(analysis, meta) + _floor(floor, step)
    out += _kernel_table(analysis, meta)
    q_len = analysis.workload.q_len if analysis.workload is not None else None
    for i, k in enumerate(analysis.kernels):
        out += _kernel_section(i, k, meta, q_len)
    out += _timeline(report, meta)
    out += waits_markdown(analysis, charts.get("waits"))
    out += _charts(charts, report, meta, floor) + _reproduce(meta)
    if analysis.notes:
        out += ["## Notes", ""] + [f"- {_prose(n)}" for n in analysis.notes] + [""]
    if analysis.missing_metrics:
        out += _details(
            f"The {len(analysis.missing_metrics)} ncu metrics this report lacks",
            [", ".join(_code(m) for m in analysis.missing_metrics)],
        )
    return "\n".join(out).rstrip() + "\n"


def chart_paths(out_md: Path) -> dict[str, Path]:
    """Where the charts of a report go: beside it, named after it (report.md -> report_roofline.png)."""
    return {name: out_md.with_name(f"{out_md.stem}_{name}.png") for name in ("roofline", "stalls", "timeline", "waits")}


def write_report(report: ReportInput, meta: ReportMeta, out_md: Path, force: bool = False) -> list[Path]:
    """Write out_md and its charts (PNG + SVG); returns the files written. Refuses to replace an
    existing report or chart unless `force` (ReportExists)."""
    out_md = Path(out_md)
    pngs = chart_paths(out_md)
    mine = [out_md] + [p for png in pngs.values() for p in (png, png.with_suffix(".svg"))]
    if not force:
        for p in mine:
            if p.exists():
                raise ReportExists(p)
    out_md.parent.mkdir(parents=True, exist_ok=True)
    analysis = report.analysis
    title = f"{analysis.gpu.name or 'unknown GPU'}: {Path(meta.source).name}"
    written, links = [], {}
    roofs = report_roofs(analysis) + list(meta.roofs)
    for name, files in (
        ("roofline", roofline_chart(analysis, roofs, pngs["roofline"].with_suffix(""), title)),
        ("stalls", stall_chart(analysis, pngs["stalls"].with_suffix(""), title)),
        ("timeline", timeline_chart(report.timeline, pngs["timeline"].with_suffix(""), title)),
        ("waits", waits_chart(analysis, pngs["waits"].with_suffix(""), title)),
    ):
        if files:
            written += files
            links[name] = Path(files[0].name)
    for p in mine[1:]:
        if p not in written and p.exists():
            p.unlink()  # a chart of an earlier report that this one does not have (only with force)
    out_md.write_text(render_markdown(report, meta, links))
    return [out_md] + written
