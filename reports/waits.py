"""'Where the warps wait': each kernel's PC samples by wait class and its top source lines, as text and
markdown (roofline/analysis/waits.py makes the numbers; this module only renders them; the chart:
reports/charts/waits.py)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from profiler.ncu_pcs import STALLED_ON, opcode
from reports.numbers import pct
from reports.table import align
from roofline.analysis.summary import Analysis
from roofline.analysis.waits import WarpWaits

NO_SOURCE = (
    "no line text: the report embeds no source (`ncu --import-source yes`); each line shows "
    "its instruction with most samples"
)
NO_LINE_INFO = (
    "no line info: the kernel carries no file:line (a closed library kernel, or one built without "
    "-lineinfo), so each row is one instruction; `--import-source yes` cannot add it"
)


def no_text_note(waits: list[WarpWaits]) -> str | None:
    """Why the rows show no line text, when none does: no source embedded (which --import-source fixes)
    or no line info at all (which it cannot)."""
    if any(w.source_text for w in waits):
        return None
    return NO_SOURCE if any(w.line_info for w in waits) else NO_LINE_INFO


def stall_notes(w: WarpWaits) -> list[str]:
    """Why a line's instruction that is no memory access (SHF, CS2R) is in a memory class: its stall."""
    out = []
    for cls, said in STALLED_ON.items():
        ops = sorted({opcode(ln.sass).split(".")[0] for ln in w.lines if ln.by_stall and ln.wait_class == cls})
        if ops:
            out.append(f"{', '.join(ops)}: no memory access; classed {cls} by the stall its samples show ({said})")
    return out


def kernels_with_waits(analysis: Analysis) -> list[tuple[str, WarpWaits]]:
    """(name, waits) for each kernel with PC samples."""
    return [(k.label or k.kernel, k.waits) for k in analysis.kernels if k.waits is not None]


def _classes(w: WarpWaits) -> str:
    return ", ".join(f"{c} {100 * s:.1f}%" for c, s in w.by_class.items() if s >= 0.0005)


def waits_text(analysis: Analysis) -> list[str]:
    """The text section (empty when no kernel has PC samples)."""
    kernels = kernels_with_waits(analysis)
    if not kernels:
        return []
    out = ["", "where the warps wait (PC samples by instruction; profiler/ncu_source.py):"]
    for name, w in kernels:
        out += textwrap.wrap(f"{name} ({w.samples:.0f} samples): {_classes(w)}", 100, subsequent_indent="    ")
        rows = [["share", "where", "class", "line text" if w.source_text else "busiest instruction"]]
        for ln in w.lines:
            rows.append([pct(100 * ln.share), ln.where, ln.wait_class, ln.text[:70]])
        out += ["  " + r for r in align(rows).splitlines()]
        for note in stall_notes(w):
            out += textwrap.wrap(f"({note})", 100, initial_indent="  ", subsequent_indent="    ")
    if note := no_text_note([w for _, w in kernels]):
        out.append(f"  ({note})")
    return out


def waits_markdown(analysis: Analysis, chart: Path | None = None) -> list[str]:
    """The markdown section: per kernel a table of shares by wait class and one of its top lines."""
    kernels = kernels_with_waits(analysis)
    if not kernels:
        return []
    out = [
        "## Where the warps wait",
        "",
        (
            "ncu's PC samples, each instruction given a wait class (load barrier: mbarrier waits on a load's "
            "barrier and cp.async waits; role barrier: named barriers and mbarrier handoffs between warp roles, "
            "and every barrier of a kernel with warp roles; block barrier: __syncthreads in a kernel without "
            "them; MMA wait: warpgroup MMA waits)."
        ),
        "",
    ]
    if chart is not None:
        out += [
            f"![where the warps wait]({chart.as_posix()})",
            "",
            f"Share of PC samples by wait class ([SVG]({chart.with_suffix('.svg').as_posix()})).",
            "",
        ]
    for name, w in kernels:
        out += [f"**`{name}`** ({w.samples:.0f} samples)", "", "| class | share |", "| --- | ---: |"]
        out += [f"| {c} | {100 * s:.1f}% |" for c, s in w.by_class.items()]
        out += ["", "| share | where | class | text |", "| ---: | --- | --- | --- |"]
        out += [
            f"| {100 * ln.share:.1f}% | `{ln.where}` | {ln.wait_class} | `{ln.text.replace('|', '/')}` |"
            for ln in w.lines
        ]
        out += [""] + [f"*{note}.*" for note in stall_notes(w)] + ([""] if stall_notes(w) else [])
    if note := no_text_note([w for _, w in kernels]):
        out += [f"*{note}.*", ""]
    return out
