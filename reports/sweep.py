"""Rendering a sweep: the summary table (text, markdown) and a chart of step time vs context length."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from kernels.spec import ctx_text
from reports.numbers import fmt, known
from reports.text import align


def _ctx(v) -> str:
    if known(v) is None:
        return "-"
    return ctx_text(int(v))


def _point(r, batched: bool) -> list[str]:
    """The kernel and ctx cells (a ragged batch: its lengths as `--lens` takes them), and the batch where any
    point has several requests."""
    lens = getattr(r, "lens", "") if batched else ""
    ctx = lens if isinstance(lens, str) and lens else _ctx(r.ctx_len)
    return [str(r.kernel), ctx[:40] + ("..." if len(ctx) > 40 else "")] + (
        [fmt(known(r.batch), ".0f")] if batched else []
    )


def summary_rows(table: pd.DataFrame) -> list[list[str]]:
    batched = "batch" in table.columns
    head = ["page", "heads", "q_len", "step ms", "floor ms", "gap", "bound"]
    rows = [["kernel", "ctx"] + (["batch"] if batched else []) + head]
    for r in table.itertuples():
        ints = [fmt(known(x), ".0f") for x in (r.page_size, r.heads, r.q_len)]
        if r.status == "done":
            rows.append(
                [
                    *_point(r, batched),
                    *ints,
                    fmt(known(r.step_ms), ".4f"),
                    fmt(known(r.floor_ms), ".4f"),
                    fmt(known(r.gap), ".1f") + ("x" if r.gap == r.gap and r.gap is not None else ""),
                    str(r.bound or "-"),
                ]
            )
        else:
            error = str(r.error or "")
            rows.append(
                [
                    *_point(r, batched),
                    *ints,
                    r.status.upper(),
                    "",
                    "",
                    error[:90] + ("..." if len(error) > 90 else ""),
                ]
            )
    return rows


def render_summary_text(table: pd.DataFrame) -> str:
    return align(summary_rows(table))


def render_runs_text(table: pd.DataFrame) -> str:
    """A folder of run directories: the summary table with each row's run directory first."""
    rows = summary_rows(table)
    return align([["run", *rows[0]]] + [[str(run), *row] for run, row in zip(table["run"], rows[1:])])


def render_summary_markdown(table: pd.DataFrame) -> str:
    rows = [[c.replace("|", "\\|") for c in r] for r in summary_rows(table)]
    out = ["| " + " | ".join(rows[0]) + " |", "|" + "|".join(" --- " for _ in rows[0]) + "|"]
    return "\n".join(out + ["| " + " | ".join(r) + " |" for r in rows[1:]]) + "\n"


def plot_sweep(table: pd.DataFrame, out_base: str | Path, title: str | None = None) -> list[Path]:
    """Step time vs context length, log-log: one line per kernel (and page size, heads, q_len when
    they vary), the floor of each (heads, q_len) dashed. Writes <out_base>.png and .svg."""
    import matplotlib  # lazy

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # lazy
    from matplotlib.ticker import FixedLocator, NullLocator  # lazy

    done = table[(table["status"] == "done") & table["step_ms"].notna()].copy()
    if done.empty:
        raise ValueError("no finished point with a step time to plot")
    vary = [c for c in ("page_size", "heads", "q_len") if done[c].nunique() > 1]
    kernels = list(dict.fromkeys(done["kernel"]))
    colors = plt.get_cmap("tab10")
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "P"]
    pages = sorted(done["page_size"].unique())
    fig, ax = plt.subplots(figsize=(8, 5.2), dpi=150)
    for (kernel, *rest), g in done.groupby(["kernel"] + vary, sort=False):
        g = g.sort_values("ctx_len")
        page = dict(zip(vary, rest)).get("page_size", pages[0])
        label = kernel + "".join(f", {c.replace('_size', '')} {v:g}" for c, v in zip(vary, rest))
        ax.plot(
            g["ctx_len"],
            g["step_ms"],
            color=colors(kernels.index(kernel) % 10),
            linestyle=styles[pages.index(page) % len(styles)],
            marker=markers[pages.index(page) % len(markers)],
            markersize=5,
            linewidth=1.6,
            label=label,
        )
    floors = done.dropna(subset=["floor_ms"]).groupby(["heads", "q_len", "ctx_len"], as_index=False)["floor_ms"].first()
    for i, ((heads, q_len), g) in enumerate(floors.groupby(["heads", "q_len"])):
        ax.plot(
            g["ctx_len"],
            g["floor_ms"],
            color="black",
            linestyle=(0, (4, 2)),
            linewidth=1.2 + 0.4 * i,
            label=f"floor (heads {heads:g}, q_len {q_len:g})",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ticks = sorted(done["ctx_len"].unique())
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xticklabels([_ctx(t) for t in ticks])
    ax.set_xlabel("context length (tokens in the KV cache)")
    ax.set_ylabel("step time per layer (ms of kernels, log)")
    gpu = title or "kernel time per verify step vs context length"
    ax.set_title(gpu)
    ax.grid(True, which="major", alpha=0.3)
    ax.grid(True, which="minor", axis="y", alpha=0.1)
    ax.legend(fontsize=8, loc="upper left", frameon=False)
    fig.tight_layout()
    out_base = Path(out_base)
    paths = [out_base.with_suffix(".png"), out_base.with_suffix(".svg")]
    for p in paths:
        fig.savefig(p)
    plt.close(fig)
    return paths
