"""The Batch section: a ragged batch's prefixes (how many, shortest / median / longest, the tokens in all) and its
histogram chart; nothing for a batch of equal requests (the workload table says it all)."""

from __future__ import annotations

from kernels.batches import BatchShape, lens_text
from reports.markdown.blocks import code, figure, table
from reports.markdown.context import Context


def batch(ctx: Context) -> list[str]:
    w = ctx.analysis.workload
    if w is None or not w.ctx_lens:
        return []
    shape = BatchShape.of(w.ctx_lens)
    med = f"{shape.median:,.0f}" if shape.median == int(shape.median) else f"{shape.median:,.1f}"
    longest = max(range(len(w.ctx_lens)), key=lambda i: w.ctx_lens[i])
    out = [
        "## Batch",
        "",
        f"A ragged batch of {shape.count} requests: {code(lens_text(w.ctx_lens))} (`--lens`; the lengths "
        "themselves are in spec.json).",
        "",
    ]
    out += table(
        ["requests", "shortest prefix", "median", "longest", "prefix tokens in all", "the longest's share"],
        [
            [
                str(shape.count),
                f"{shape.min:,}",
                med,
                f"{shape.max:,} (request {longest})",
                f"{shape.tokens:,}",
                f"{100 * shape.max / shape.tokens:.0f}%",
            ]
        ],
        "rrrrrr",
    )
    out.append("")
    if "batch" in ctx.charts:
        out += figure(
            ctx.charts["batch"],
            "The batch's prefix lengths",
            "Batch",
            ": requests per power-of-two bin of prefix length, each bar with its share of the batch's tokens.",
        )
    return out
