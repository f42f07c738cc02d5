"""What every chart shares: matplotlib imported on first draw (Agg backend; ChartError when it is missing),
the rc settings, the kernel colours and labels (the same in tables and charts), and `save`, which writes
STEM.png and STEM.svg without dates, versions or random ids, so a rerun gives the same bytes."""

from __future__ import annotations

from pathlib import Path

from kernels.errors import RooflineError

MAX_KERNELS = 10  # on a chart; the tables list every kernel
KERNEL_COLORS = [
    "black",
    "tab:brown",
    "tab:pink",
    "tab:olive",
    "tab:cyan",
    "tab:gray",
    "darkgoldenrod",
    "navy",
    "maroon",
    "teal",
]
RC = {
    "svg.hashsalt": "roofline-report",
    "svg.fonttype": "none",
    "font.family": "DejaVu Sans",
    "font.size": 9,
    "axes.titlesize": 10,
    "figure.dpi": 120,
    "savefig.dpi": 120,
}


class ChartError(RooflineError, RuntimeError):
    """matplotlib is missing or a chart could not be written."""


def kernel_label(index: int, name: str, width: int = 38) -> str:
    """'K1 name', the name cut to `width` characters at a word ('_') boundary, what tells rows apart (a
    ' [grid 8]' suffix) kept whole: the same label in tables and charts."""
    if len(name) > width:
        base, sep, tail = name.partition(" [")
        tail = sep + tail
        room = max(8, width - len(tail) - 1)
        cut = base[:room]
        if "_" in cut and len(cut.rsplit("_", 1)[0]) >= room // 2:
            cut = cut.rsplit("_", 1)[0]
        name = cut + "…" + tail
    return f"K{index + 1} {name}"


def pyplot():
    try:
        import matplotlib  # lazy
    except ImportError:
        raise ChartError("charts need matplotlib: pip install 'roofline[report]' (or pip install matplotlib)") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt  # lazy

    return matplotlib, plt


# Every legend's text and frame: small, no box, left-aligned.
LEGEND = dict(fontsize=8, title_fontsize=8, frameon=False, alignment="left")


def save(fig, stem: Path) -> list[Path]:
    """The figure as STEM.png and STEM.svg (the folder made where missing), without the dates and versions that
    would make each save differ; the figure is closed after."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    png, svg = stem.with_suffix(".png"), stem.with_suffix(".svg")
    fig.savefig(png, bbox_inches="tight", metadata={"Software": None})
    matplotlib, _ = pyplot()
    with matplotlib.rc_context({"svg.hashsalt": RC["svg.hashsalt"]}):  # the SVG's ids, random without it
        fig.savefig(svg, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    _, plt = pyplot()
    plt.close(fig)
    return [png, svg]
