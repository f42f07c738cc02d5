"""The roofline chart of an analysis (roofline.analysis.summary.Analysis): each kernel at its arithmetic
intensity against the memory and compute roofs, the workload's floor as a star; and the points, roofs
and axis it is drawn from (the markdown report names what falls off it)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from statistics import median

from reports.charts.common import KERNEL_COLORS, LEGEND, MAX_KERNELS, RC, kernel_label, pyplot, save
from reports.meta import KINDS, Roof
from reports.numbers import ratio, us
from roofline.analysis.floor import Floor
from roofline.analysis.summary import Analysis

LEVEL_COLOR = {"DRAM": "tab:blue", "L2": "tab:green", "L1": "tab:purple", "tensor": "tab:red", "fp32": "tab:orange"}
KIND_STYLE = {"report": "-", "datasheet": "--", "measured": ":"}
AXIS_DECADES = 3  # a roofline point farther than this from the median intensity (log10) falls off the axis


def report_roofs(analysis: Analysis) -> list[Roof]:
    """The report's own peaks (ncu's per-cycle peak x clock), median over the kernels that have them."""
    by_level: dict[str, list[float]] = {}
    for k in analysis.kernels:
        h = k.hierarchy or {}
        for lv in h.get("levels", []):
            if lv.get("peak_gbps"):
                by_level.setdefault(lv["level"], []).append(lv["peak_gbps"])
        if not h.get("levels") and k.dram_peak_gbps:
            by_level.setdefault("DRAM", []).append(k.dram_peak_gbps)
        if h.get("compute_peak_tflops"):
            by_level.setdefault(h["compute_kind"], []).append(h["compute_peak_tflops"])
    order = ["L1", "L2", "DRAM", "tensor", "fp32"]
    return [
        Roof(level, median(v), "report", "ncu's peak_sustained x clock, median over kernels")
        for level, v in sorted(by_level.items(), key=lambda kv: order.index(kv[0]))
    ]


def roofline_points(analysis: Analysis) -> list[dict]:
    """One point per kernel with FLOP counters: its DRAM (else L2, L1) intensity and TFLOP/s. Where
    the workload's own (useful) FLOPs are known, the point is the useful work and `executed` holds
    ncu's count (intensity, TFLOP/s) for a second marker."""
    points = []
    for i, k in enumerate(analysis.kernels):
        h = k.hierarchy or {}
        useful = bool(h.get("useful_flops"))
        key = "useful_arithmetic_intensity" if useful else "arithmetic_intensity"
        levels = {lv["level"]: lv[key] for lv in h.get("levels", []) if lv.get(key)}
        if not h.get("tflops") or not levels:
            continue
        main = next(lv for lv in ("DRAM", "L2", "L1") if lv in levels)
        executed = (
            {"ai": next(lv["arithmetic_intensity"] for lv in h["levels"] if lv["level"] == main), "tflops": h["tflops"]}
            if useful
            else None
        )
        points.append(
            {
                "index": i,
                "kernel": k.label or k.kernel,
                "tflops": h["useful_tflops"] if useful else h["tflops"],
                "level": main,
                "ai": levels[main],
                "levels": levels,
                "duration_ms": k.duration_ms or 0,
                "executed": executed,
                "gap": k.gap_to_floor,
            }
        )
    return points


def bandwidth_lines(analysis: Analysis) -> list[dict]:
    """The kernels with DRAM bytes and a time but no FLOP counts (a foreign capture's gather, a copy): each
    drawn as its achieved DRAM bandwidth, a line parallel to the memory roofs (where along it depends on the
    FLOPs the capture did not count); the MAX_KERNELS with the most time among them."""
    placed = {p["index"] for p in roofline_points(analysis)}
    lines = [
        {"index": i, "kernel": k.label or k.kernel, "gbps": k.dram_gbps, "duration_ms": k.duration_ms or 0}
        for i, k in enumerate(analysis.kernels)
        if i not in placed and k.dram_gbps and k.duration_ms
    ]
    return top_points(lines)


def floor_point(f: Floor | None) -> dict | None:
    """The workload's floor on the roofline: its own intensity (FLOPs over KV + Q/O bytes) at the
    rate it would run at the floor's time."""
    if f is None or not f.floor_ms or not f.arithmetic_intensity:
        return None
    return {"ai": f.arithmetic_intensity, "tflops": f.flops / (f.floor_ms * 1e-3) / 1e12, "floor_ms": f.floor_ms}


def _ridges(roofs: list[Roof]) -> list[float]:
    return [c.value * 1e3 / m.value for c in roofs if not c.is_memory for m in roofs if m.is_memory]


def roofline_layout(analysis: Analysis, roofs: list[Roof]) -> dict:
    """The roofline chart's x range, robust to outliers: every filled point, the floor and the
    ridges, plus the hollow markers within AXIS_DECADES of the median intensity (log10). `off`
    lists what falls outside (label, level, FLOP/B): drawn at the edge and named under the chart."""
    points = top_points(roofline_points(analysis))
    roofs = [r for r in roofs if r.value and r.value > 0]
    fl = floor_point(analysis.floor)
    anchors = [p["ai"] for p in points] + _ridges(roofs) + ([fl["ai"]] if fl else [])
    extras = [(f"K{p['index'] + 1}", lv, ai) for p in points for lv, ai in p["levels"].items() if lv != p["level"]]
    extras += [(f"K{p['index'] + 1}", "executed", p["executed"]["ai"]) for p in points if p["executed"]]
    logs = sorted(math.log10(x) for x in anchors + [ai for *_, ai in extras])
    if not logs:
        return {"points": points, "x_lo": 1.0, "x_hi": 1e3, "off": []}
    mid = median(logs)
    lo_ok, hi_ok = 10 ** (mid - AXIS_DECADES), 10 ** (mid + AXIS_DECADES)
    core = [x for x in anchors if lo_ok <= x <= hi_ok] or anchors
    kept = core + [ai for *_, ai in extras if lo_ok <= ai <= hi_ok]
    x_lo, x_hi = min(kept) / 4, max(kept) * 4
    off = [(label, lv, ai) for label, lv, ai in extras if not x_lo <= ai <= x_hi]
    off += [(f"K{p['index'] + 1}", p["level"], p["ai"]) for p in points if not x_lo <= p["ai"] <= x_hi]
    return {"points": points, "x_lo": x_lo, "x_hi": x_hi, "off": off}


def top_points(points: list[dict]) -> list[dict]:
    """The MAX_KERNELS kernels with the most time, in table order."""
    keep = sorted(points, key=lambda p: -p["duration_ms"])[:MAX_KERNELS]
    return sorted(keep, key=lambda p: p["index"])


def _place_labels(ax, fig, xy: list[tuple[float, float]], texts: list[str]) -> None:
    """Annotate each point, trying offsets until the label's box overlaps no earlier label or point."""
    fig.canvas.draw()
    px = fig.dpi / 72.0
    pts = [ax.transData.transform(p) for p in xy]
    taken = [(x - 5 * px, y - 5 * px, x + 5 * px, y + 5 * px) for x, y in pts]
    candidates = [(8, 6), (8, -14), (-8, 6), (-8, -14), (8, 18), (8, -26), (-8, 18), (-8, -26), (20, 0), (-20, 0)]
    for (x, y), data_xy, text in zip(pts, xy, texts):
        w, h = (6.2 * len(text) + 4) * px, 12 * px
        for dx, dy in candidates:
            x0 = x + dx * px if dx > 0 else x + dx * px - w
            box = (x0, y + dy * px, x0 + w, y + dy * px + h)
            if not any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
                break
        taken.append(box)
        ax.annotate(
            text,
            data_xy,
            xycoords="data",
            xytext=(dx, dy),
            textcoords="offset points",
            ha="left" if dx > 0 else "right",
            va="bottom",
            fontsize=8,
            fontweight="bold",
            arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.6} if abs(dy) > 10 else None,
        )


@dataclass(frozen=True)
class _Axes:
    """The chart's x range and its highest roof, where the memory diagonals stop."""

    x_lo: float
    x_hi: float
    top: float

    def clamp(self, x: float) -> float:
        """An off-axis intensity, drawn at the edge."""
        return min(max(x, self.x_lo * 1.15), self.x_hi / 1.15)


def _draw_roofs(ax, mem: list[Roof], comp: list[Roof], axes: _Axes) -> list:
    """Memory roofs as diagonals up to the highest compute roof, compute roofs as horizontals."""
    handles = []
    for r in sorted(mem, key=lambda r: (-r.value, r.kind)) + sorted(comp, key=lambda r: (-r.value, r.kind)):
        if r.is_memory:
            x_end = axes.top * 1e3 / r.value  # where this diagonal meets the highest compute roof
            (line,) = ax.plot(
                [axes.x_lo, x_end],
                [axes.x_lo * r.value / 1e3, axes.top],
                color=LEVEL_COLOR[r.level],
                ls=KIND_STYLE.get(r.kind, "-."),
                lw=1.5,
            )
            label = f"{r.level} {r.value:,.0f} GB/s ({KINDS.get(r.kind, r.kind)})"
        else:
            (line,) = ax.plot(
                [axes.x_lo, axes.x_hi],
                [r.value, r.value],
                color=LEVEL_COLOR[r.level],
                ls=KIND_STYLE.get(r.kind, "-."),
                lw=1.5,
            )
            label = f"{r.level} {r.value:,.0f} TFLOP/s ({KINDS.get(r.kind, r.kind)})"
        line.set_label(label)
        handles.append(line)
    return handles


def _draw_kernel(ax, p: dict, color, axes: _Axes):
    """One kernel: its filled point, hollow markers at its other levels' intensity, an x for the work ncu
    counted; returns the filled point's handle."""
    others = [(lv, axes.clamp(ai)) for lv, ai in p["levels"].items() if lv != p["level"]]
    if others:
        ax.plot(
            [ai for _, ai in others] + [p["ai"]],
            [p["tflops"]] * (len(others) + 1),
            color=color,
            lw=0.6,
            alpha=0.6,
            zorder=3,
        )
    for lv, ai in others:
        ax.scatter(
            [ai],
            [p["tflops"]],
            s=36,
            marker="s" if lv == "L2" else "^",
            facecolors="white",
            edgecolors=color,
            linewidths=1.2,
            zorder=4,
        )
    if p["executed"]:
        ex = p["executed"]
        ax.plot([p["ai"], axes.clamp(ex["ai"])], [p["tflops"], ex["tflops"]], color=color, lw=0.8, ls=":", zorder=3)
        ax.scatter([axes.clamp(ex["ai"])], [ex["tflops"]], s=44, marker="x", color=color, linewidths=1.4, zorder=5)
    return ax.scatter(
        [axes.clamp(p["ai"])],
        [p["tflops"]],
        s=70,
        color=color,
        edgecolors="white",
        linewidths=0.8,
        zorder=5,
        label=kernel_label(p["index"], p["kernel"]) + (f" ({p['level']} intensity)" if p["level"] != "DRAM" else ""),
    )


def _draw_bandwidth_lines(ax, lines: list[dict], first_color: int, axes: _Axes) -> list:
    """The kernels without FLOP counts: their achieved DRAM bandwidth, a dashed line beside the memory roofs."""
    handles = []
    for n, b in enumerate(lines, first_color):
        x_end = min(axes.x_hi, axes.top * 1e3 / b["gbps"])  # up to the highest compute roof, as the memory roofs
        (line,) = ax.plot(
            [axes.x_lo, x_end],
            [axes.x_lo * b["gbps"] / 1e3, x_end * b["gbps"] / 1e3],
            color=KERNEL_COLORS[n % len(KERNEL_COLORS)],
            lw=2.2,
            ls=(0, (5, 2)),
            zorder=4,
        )
        line.set_label(f"{kernel_label(b['index'], b['kernel'])}: {b['gbps']:,.0f} GB/s DRAM, no FLOPs counted")
        handles.append(line)
    return handles


def _marker_keys(ax, points: list[dict]) -> list:
    """Legend keys for the hollow markers and the executed x actually drawn."""
    handles = []
    for level, marker in (("L2", "s"), ("L1", "^")):
        if any(level in p["levels"] and level != p["level"] for p in points):
            handles.append(
                ax.scatter(
                    [],
                    [],
                    s=36,
                    marker=marker,
                    facecolors="white",
                    edgecolors="0.3",
                    label=f"same kernel, {level} intensity",
                )
            )
    if any(p["executed"] for p in points):
        handles.append(
            ax.scatter(
                [],
                [],
                s=44,
                marker="x",
                color="0.3",
                linewidths=1.4,
                label="same kernel, FLOPs ncu counted (executed, padding included)",
            )
        )
    return handles


def _draw_floor(ax, fl: dict | None, points: list[dict], axes: _Axes) -> list:
    """The workload's floor as a star, and from each kernel a dashed line up to it with its gap, labelled
    log-midway (the chart's headline); returns the star's legend handle, if drawn."""
    if not fl:
        return []
    star = ax.scatter(
        [fl["ai"]],
        [fl["tflops"]],
        s=150,
        marker="*",
        color="gold",
        edgecolors="black",
        linewidths=0.8,
        zorder=6,
        label=f"the workload's floor ({us(fl['floor_ms'])} µs)",
    )
    for p in points:
        if p["gap"]:
            x = axes.clamp(p["ai"])
            ax.plot([x, fl["ai"]], [p["tflops"], fl["tflops"]], color="goldenrod", lw=1, ls="--", zorder=2)
            ax.text(
                math.sqrt(x * fl["ai"]) * 1.12,
                math.sqrt(p["tflops"] * fl["tflops"]),
                f"{ratio(p['gap'])} from the floor",
                fontsize=8,
                color="darkgoldenrod",
                va="center",
            )
    return [star]


def _label_axes(ax, points: list[dict], off: list[tuple], title: str) -> None:
    """Axis labels, title, grid, and the line naming what sits at the edge, off the axis."""
    ax.set_xlabel(
        "arithmetic intensity (FLOP / byte"
        + ("; the workload's FLOPs where a kernel does them)" if any(p["executed"] for p in points) else ")")
    )
    ax.set_ylabel("performance (TFLOP/s)")
    ax.set_title(title or "Roofline")
    ax.grid(True, which="major", color="0.88", lw=0.6)
    ax.grid(True, which="minor", color="0.95", lw=0.4, ls="-")
    ax.set_axisbelow(True)
    if off:
        ax.text(
            0.99,
            0.01,
            "at the edge, off the axis: " + ", ".join(f"{label} {lv} {ai:.2g} FLOP/B" for label, lv, ai in off),
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            color="0.35",
        )


def _legends(fig, ax, roof_handles: list, kernel_handles: list, shown: str, lines: list[dict]) -> None:
    """The roofs' legend right of the axes, the kernels' below them."""
    # fig.legend, not ax.add_artist(ax.legend(...)): with two axes legends, bbox_inches="tight"
    # drops the first one at some dpi values (seen with matplotlib 3.11 at 110 and 120 dpi)
    fig.legend(
        handles=roof_handles,
        title="roofs (solid: report's own, dashed: datasheet, dotted: measured)",
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        bbox_transform=ax.transAxes,
        **LEGEND,
    )
    ax.legend(
        handles=kernel_handles,
        title=f"kernels (filled: DRAM intensity{shown}; dashed: bandwidth alone)"
        if lines
        else f"kernels (filled: DRAM intensity{shown})",
        loc="upper left",
        bbox_to_anchor=(0.0, -0.11),
        ncol=2 if len(kernel_handles) > 4 else 1,
        **LEGEND,
    )


def roofline_chart(analysis: Analysis, roofs: list[Roof], stem: Path, title: str = "") -> list[Path]:
    """Log-log roofline: each kernel a filled point at its DRAM intensity (hollow: L2 and L1; an x:
    the work ncu counted, where it differs from the workload's), the workload's floor as a star,
    memory roofs as diagonals and compute roofs as horizontals, coloured by level and dashed by kind.
    Points beyond the axis (roofline_layout) sit at its edge; a kernel with bytes and no FLOP counts is its
    achieved DRAM bandwidth, a dashed line beside the memory roofs (bandwidth_lines). Writes stem.png and
    stem.svg; [] when no kernel has bytes and a time."""
    layout = roofline_layout(analysis, roofs)
    points, x_lo, x_hi = layout["points"], layout["x_lo"], layout["x_hi"]
    every = roofline_points(analysis)
    lines = bandwidth_lines(analysis)
    if not points and not lines:
        return []
    matplotlib, plt = pyplot()
    fl = floor_point(analysis.floor)
    roofs = [r for r in roofs if r.value and r.value > 0]
    mem = [r for r in roofs if r.is_memory]
    comp = [r for r in roofs if not r.is_memory]
    ys = [p["tflops"] for p in points] + [p["executed"]["tflops"] for p in points if p["executed"]]
    ys += [x_lo * b["gbps"] / 1e3 for b in lines]
    top = max([r.value for r in comp] + ys + ([fl["tflops"]] if fl else []))
    y_lo = min(ys + [x_lo * m.value / 1e3 for m in mem if m.level == "DRAM"]) / 3
    axes = _Axes(x_lo, x_hi, top)
    with matplotlib.rc_context(RC):
        fig, ax = plt.subplots(figsize=(9.5, 5.6))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(x_lo, x_hi)
        ax.set_ylim(y_lo, top * 2.5)
        roof_handles = _draw_roofs(ax, mem, comp, axes)
        kernel_handles = [
            _draw_kernel(ax, p, KERNEL_COLORS[n % len(KERNEL_COLORS)], axes) for n, p in enumerate(points)
        ]
        kernel_handles += _draw_bandwidth_lines(ax, lines, len(points), axes)
        kernel_handles += _marker_keys(ax, points)
        kernel_handles += _draw_floor(ax, fl, points, axes)
        _place_labels(
            ax, fig, [(axes.clamp(p["ai"]), p["tflops"]) for p in points], [f"K{p['index'] + 1}" for p in points]
        )
        _label_axes(ax, points, layout["off"], title)
        shown = "" if len(points) == len(every) else f"; the {len(points)} of {len(every)} with the most time"
        _legends(fig, ax, roof_handles, kernel_handles, shown, lines)
        out = save(fig, stem)
    return out
