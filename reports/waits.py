"""'Where the warps wait': each kernel's PC samples by wait class and its top source lines, as text,
markdown and a chart (roofline/waits.py makes the numbers; this module only renders them)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from reports.charts import _pyplot, _save
from reports.table import align
from roofline.analysis.summary import Analysis
from roofline.analysis.waits import WarpWaits

# One colour per wait class (profiler/ncu_source.py WAIT_CLASSES), the same in every chart.
CLASS_COLOURS = {
    "load barrier": "#1f77b4",
    "MMA wait": "#d62728",
    "role barrier": "#ff7f0e",
    "shared memory": "#2ca02c",
    "global memory": "#9467bd",
    "math": "#8c564b",
    "other": "#7f7f7f",
}
NO_SOURCE = (
    "no line text: the report embeds no source (`ncu --import-source yes`); each line shows "
    "its instruction with most samples"
)


def _kernels(analysis: Analysis) -> list[tuple[str, WarpWaits]]:
    """(name, waits) for each kernel with PC samples."""
    return [(k.label or k.kernel, k.waits) for k in analysis.kernels if k.waits is not None]


def _classes(w: WarpWaits) -> str:
    return ", ".join(f"{c} {100 * s:.1f}%" for c, s in w.by_class.items() if s >= 0.0005)


def waits_text(analysis: Analysis) -> list[str]:
    """The text section (empty when no kernel has PC samples)."""
    kernels = _kernels(analysis)
    if not kernels:
        return []
    out = ["", "where the warps wait (PC samples by instruction; profiler/ncu_source.py):"]
    embedded = False
    for name, w in kernels:
        out += textwrap.wrap(f"{name} ({w.samples:.0f} samples): {_classes(w)}", 100, subsequent_indent="    ")
        rows = [["share", "where", "class", "line text" if w.source_text else "busiest instruction"]]
        for ln in w.lines:
            rows.append([f"{100 * ln.share:.1f}%", ln.where, ln.wait_class, ln.text[:70]])
        out += ["  " + r for r in align(rows).splitlines()]
        embedded = embedded or w.source_text
    if not embedded:
        out.append(f"  ({NO_SOURCE})")
    return out


def waits_markdown(analysis: Analysis, chart: Path | None = None) -> list[str]:
    """The markdown section: per kernel a table of shares by wait class and one of its top lines."""
    kernels = _kernels(analysis)
    if not kernels:
        return []
    out = [
        "## Where the warps wait",
        "",
        (
            "ncu's PC samples, each instruction given a wait class (load barrier: mbarrier waits on a load's "
            "barrier and cp.async waits; role barrier: block/named barriers and mbarrier handoffs between warp "
            "roles; MMA wait: warpgroup MMA waits)."
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
        out.append("")
    if not any(w.source_text for _, w in kernels):
        out += [f"*{NO_SOURCE}.*", ""]
    return out


def waits_chart(analysis: Analysis, stem: Path, title: str = "") -> list[Path]:
    """A stacked bar per kernel: the share of samples in each wait class (PNG and SVG); [] without samples."""
    kernels = _kernels(analysis)
    if not kernels:
        return []
    _, plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 2.4 + 0.4 * len(kernels)))
    for row, (name, w) in enumerate(kernels):
        left = 0.0
        for cls, colour in CLASS_COLOURS.items():
            share = 100 * w.by_class.get(cls, 0.0)
            if share > 0:
                ax.barh(row, share, left=left, color=colour, label=cls if row == 0 else None)
                left += share
    ax.set_yticks(range(len(kernels)), [n[:40] for n, _ in kernels])
    ax.invert_yaxis()
    ax.set_xlabel("% of PC samples")
    ax.set_xlim(0, 100)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in CLASS_COLOURS.values()]
    ax.legend(handles, list(CLASS_COLOURS), fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title(f"where the warps wait{': ' + title if title else ''}", fontsize=9)
    fig.tight_layout()
    stem.parent.mkdir(parents=True, exist_ok=True)
    files = _save(fig, stem)
    plt.close(fig)
    return files
