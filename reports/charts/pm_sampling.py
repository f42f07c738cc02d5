"""The PM sampling chart: per kernel (its first launch), a column of two panels over the launch's lifetime (µs from
its start): the throughputs (% of peak) with the share of SMs active shaded behind them, and below, the warp
states stacked (warps per SM sub-partition). The tail with fewer than half the SMs active is shaded in both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from profiler.ncu_pm import SMS_ACTIVE, STALL
from reports.charts.common import LEGEND, pyplot, save
from roofline.analysis.pm_sampling import PmLaunch, stall_means

MAX_COLUMNS = 4  # kernels on the chart; the table lists every kernel
TOP_STALLS = 6  # warp states drawn; the rest stacked as "other"
LINES = {  # series -> colour
    "dram %": "tab:blue",
    "L2 %": "tab:orange",
    "L1/shared %": "tab:green",
    "tensor pipe %": "tab:red",
    "issue %": "tab:purple",
}
TAIL_COLOUR = "#fbe3d6"
STALL_COLOURS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#c7c7c7"]


def _on_grid(frame: pd.DataFrame, name: str, grid: np.ndarray) -> np.ndarray:
    """The series' values at the sample starts `grid` (each series has its own pass's grid: nearest sample)."""
    s = frame[frame["series"] == name].sort_values("time_us")
    if s.empty:
        return np.zeros_like(grid)
    idx = np.clip(np.searchsorted(s["time_us"].to_numpy(), grid), 0, len(s) - 1)
    prev = np.clip(idx - 1, 0, len(s) - 1)
    t = s["time_us"].to_numpy()
    pick = np.where(np.abs(t[prev] - grid) <= np.abs(t[idx] - grid), prev, idx)
    return s["value"].to_numpy()[pick]


def _throughput(ax, frame: pd.DataFrame, grid: np.ndarray, summary: PmLaunch) -> None:
    edges = np.append(grid, grid[-1] + summary.interval_us)
    sms = _on_grid(frame, SMS_ACTIVE, grid)
    ax.stairs(sms, edges, fill=True, color="#dddddd", label="SMs active")
    for name, colour in LINES.items():
        if (frame["series"] == name).any():
            ax.stairs(_on_grid(frame, name, grid), edges, color=colour, linewidth=1.2, label=name.removesuffix(" %"))
    ax.set_ylim(0, 105)
    ax.set_ylabel("% of peak")


def top_stalls(frame: pd.DataFrame) -> list[str]:
    """The warp states drawn on their own, the same in every column: the largest on average over all of them."""
    return [str(n) for n, v in stall_means(frame).head(TOP_STALLS).items() if v > 0]


def _stalls(ax, frame: pd.DataFrame, grid: np.ndarray, summary: PmLaunch, top: list[str]) -> None:
    names = frame.loc[frame["series"].str.startswith(STALL), "series"].unique()
    ax.set_xlabel("µs from the launch's start")
    if len(names) == 0:
        ax.text(
            0.5,
            0.5,
            "no warp-state samples\n(section PmSampling_WarpStates)",
            ha="center",
            va="center",
            transform=ax.transAxes,
            fontsize=8,
            color="gray",
        )
        ax.set_yticks([])
        return
    values = [_on_grid(frame, n, grid) for n in top]
    rest = [_on_grid(frame, n, grid) for n in names if n not in top]
    values.append(np.sum(rest, axis=0) if rest else np.zeros_like(grid))
    labels = [n.removeprefix(STALL) for n in top] + ["other"]
    edges = np.append(grid, grid[-1] + summary.interval_us)
    base = np.zeros_like(grid)
    for v, label, colour in zip(values, labels, STALL_COLOURS):
        ax.stairs(base + v, edges, baseline=base, fill=True, color=colour, label=label)
        base = base + v
    ax.set_ylabel("warps per SMSP")


def _shade_tail(ax, s: PmLaunch) -> None:
    if s.body_end_us is not None and s.tail_us > 0:
        ax.axvspan(s.body_end_us, s.span_us, color=TAIL_COLOUR, zorder=0, label="tail: < half the SMs active")
    if s.window_us is not None:
        ax.axvline(s.window_us, color="black", linewidth=0.6, linestyle=":")


def _legend(row) -> tuple[list, list[str]]:
    """Each label of the row's panels once, in the order first drawn."""
    seen: dict[str, object] = {}
    for ax in row:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(label, handle)
    return list(seen.values()), list(seen)


def pm_chart(frame: pd.DataFrame | None, launches: list[PmLaunch], stem: Path, title: str = "") -> list[Path]:
    """The chart (PNG and SVG) of each kernel's first launch, up to MAX_COLUMNS; [] without PM samples."""
    if frame is None or frame.empty or not launches:
        return []
    shown = launches[:MAX_COLUMNS]
    top_states = top_stalls(frame[frame["launch"].isin([s.launch for s in shown])])
    _, plt = pyplot()
    fig, axes = plt.subplots(
        2, len(shown), figsize=(4.6 * len(shown) + 1.6, 5.4), squeeze=False, height_ratios=(3, 2), sharex="col"
    )
    for col, s in enumerate(shown):
        own = frame[frame["launch"] == s.launch]
        grid = np.sort(own.loc[own["series"] == SMS_ACTIVE, "time_us"].unique())
        top, bottom = axes[0][col], axes[1][col]
        _throughput(top, own, grid, s)
        _stalls(bottom, own, grid, s, top_states)
        for ax in (top, bottom):
            _shade_tail(ax, s)
            ax.set_xlim(min(0.0, grid[0]), max(s.span_us, grid[-1] + s.interval_us))
        top.set_title(f"{s.kernel}\n{s.span_us:.1f} µs, {s.interval_us:.1f} µs samples", fontsize=9)
        if col > 0:
            top.set_ylabel("")
            bottom.set_ylabel("")
    for row, what in ((0, "throughput"), (1, "warp state")):
        handles, labels = _legend(axes[row])
        if handles:
            axes[row][-1].legend(handles, labels, title=what, loc="center left", bbox_to_anchor=(1.01, 0.5), **LEGEND)
    fig.suptitle(f"ncu PM sampling{': ' + title if title else ''}", fontsize=10)
    fig.tight_layout()
    return save(fig, stem)
