"""The batch chart: a ragged batch's prefix lengths as a histogram (power-of-two bins), each bar labelled with its
requests and its share of the batch's tokens, so one long request among short ones shows at a glance."""

from __future__ import annotations

import math
from pathlib import Path

from kernels.spec import VerifyWorkload, ctx_text
from reports.charts.common import RC, pyplot, save


def bins(ctx_lens) -> list[tuple[int, int, int, int]]:
    """(low, high, requests, tokens) per power-of-two bin [low, high) from the shortest prefix's to past the
    longest's; empty bins between them kept (the gap is what the chart shows)."""
    lens = [int(c) for c in ctx_lens]
    lo = 2 ** math.floor(math.log2(min(lens)))
    hi = 2 ** (math.floor(math.log2(max(lens))) + 1)
    out = []
    while lo < hi:
        inside = [c for c in lens if lo <= c < 2 * lo]
        out.append((lo, 2 * lo, len(inside), sum(inside)))
        lo *= 2
    return out


def batch_chart(workload: VerifyWorkload | None, stem: Path, title: str = "") -> list[Path]:
    """The histogram of a ragged batch's prefixes (PNG and SVG); [] for a batch of equal requests or none."""
    if workload is None or not workload.ctx_lens:
        return []
    matplotlib, plt = pyplot()
    rows = bins(workload.ctx_lens)
    total = sum(t for *_, t in rows)
    with matplotlib.rc_context(RC):
        fig, ax = plt.subplots(figsize=(7, 2.8))
        xs = range(len(rows))
        ax.bar(xs, [n for _, _, n, _ in rows], color="tab:blue", width=0.8)
        for x, (_, _, n, t) in zip(xs, rows):
            if n:
                ax.annotate(f"{n}\n{100 * t / total:.0f}% of tokens", (x, n), ha="center", va="bottom", fontsize=7)
        ax.set_xticks(list(xs), [f"{ctx_text(lo)}-{ctx_text(hi)}" for lo, hi, _, _ in rows], rotation=30)
        ax.set_xlabel("prefix length (tokens, power-of-two bins)")
        ax.set_ylabel("requests")
        ax.set_ylim(0, max(n for _, _, n, _ in rows) * 1.35)
        ax.set_title(f"the batch: {len(workload.ctx_lens)} requests" + (f"; {title}" if title else ""), fontsize=9)
        fig.tight_layout()
        files = save(fig, stem)
    return files
