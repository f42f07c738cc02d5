"""Where the warps wait: PC samples (profiler/ncu_source.py) summed by wait class and by source line."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from profiler.ncu_pcs import by_stall

TOP_LINES = 5


@dataclass(frozen=True)
class WaitLine:
    """One source line (or, without line info, one instruction) and the samples taken there."""

    where: str  # "file:line", or "pc 0x..." when the kernel has no line info
    text: str  # the line's text when the report embeds the source, else the top instruction's SASS
    samples: float
    share: float  # of the kernel's samples
    wait_class: str  # the class with most samples on this line
    sass: str = ""  # the line's instruction with most samples
    by_stall: bool = False  # that instruction is in its memory class by its stall, not its opcode (ncu_pcs)


@dataclass(frozen=True)
class WarpWaits:
    """One kernel's PC samples: the share of each wait class, and the lines with most samples."""

    samples: float
    by_class: dict[str, float]  # wait class -> share of samples, largest first
    lines: list[WaitLine] = field(default_factory=list)
    line_info: bool = False  # whether the kernel carries file:line
    source_text: bool = False  # whether the report embeds the source (else `text` is SASS)

    def share(self, *classes: str) -> float:
        return sum(self.by_class.get(c, 0.0) for c in classes)


def stalls_by_class(pc: pd.DataFrame) -> pd.DataFrame:
    """kernel, wait_class, samples, share (of the kernel's samples); largest first within a kernel."""
    if pc.empty:
        return pd.DataFrame(columns=["kernel", "wait_class", "samples", "share"])
    g = pc.groupby(["kernel", "wait_class"], sort=False)["samples"].sum().reset_index()
    g["share"] = g["samples"] / g.groupby("kernel")["samples"].transform("sum")
    order = {k: i for i, k in enumerate(pc["kernel"].drop_duplicates())}
    return (
        g.assign(_k=g["kernel"].map(order))
        .sort_values(["_k", "samples"], ascending=[True, False])
        .drop(columns="_k")
        .reset_index(drop=True)
    )


def stalls_by_line(pc: pd.DataFrame, top: int | None = None) -> pd.DataFrame:
    """kernel, file, line, line_text, samples, share, wait_class (the line's largest), sass (its
    instruction with most samples); lines without info are grouped per PC. `top`: per kernel."""
    cols = ["kernel", "file", "line", "line_text", "samples", "share", "wait_class", "sass"]
    if pc.empty:
        return pd.DataFrame(columns=cols)
    pc = pc.assign(where=[f"{f}:{n}" if f else f"pc {p:#x}" for f, n, p in zip(pc["file"], pc["line"], pc["pc"])])
    rows = []
    for kernel, k in pc.groupby("kernel", sort=False):
        total = float(k["samples"].sum())
        for _, g in k.groupby("where", sort=False):
            by_class = g.groupby("wait_class")["samples"].sum()
            by_pc = g.groupby("sass")["samples"].sum()
            rows.append(
                {
                    "kernel": kernel,
                    "file": g["file"].iloc[0],
                    "line": int(g["line"].iloc[0]),
                    "line_text": g["line_text"].iloc[0],
                    "samples": float(g["samples"].sum()),
                    "share": float(g["samples"].sum()) / total if total else 0.0,
                    "wait_class": by_class.idxmax(),
                    "sass": by_pc.idxmax(),
                    "pc": int(g["pc"].min()),
                }
            )
    out = pd.DataFrame(rows).sort_values(["kernel", "samples"], ascending=[True, False], kind="stable")
    order = {k: i for i, k in enumerate(pc["kernel"].drop_duplicates())}
    out = out.assign(_k=out["kernel"].map(order)).sort_values(["_k", "samples"], ascending=[True, False])
    if top is not None:
        out = out.groupby("kernel", sort=False).head(top)
    return out.drop(columns="_k").reset_index(drop=True)[cols + ["pc"]]


def warp_waits(pc: pd.DataFrame, top: int = TOP_LINES) -> WarpWaits | None:
    """The summary of one kernel's PC samples (None when there are none)."""
    if pc.empty or float(pc["samples"].sum()) <= 0:
        return None
    pc = pc.assign(kernel="k")
    classes = stalls_by_class(pc)
    by_class = {c: float(s) for c, s in zip(classes["wait_class"], classes["share"])}
    lines = []
    for _, r in stalls_by_line(pc, top).iterrows():
        where = f"{_short(r['file'])}:{r['line']}" if r["file"] else f"pc {r['pc']:#x}"
        text, samples, share, cls, sass = (
            r["line_text"] or r["sass"],
            r["samples"],
            r["share"],
            r["wait_class"],
            r["sass"],
        )
        lines.append(WaitLine(where, text, float(samples), float(share), cls, sass, by_stall(sass, cls)))
    return WarpWaits(
        float(pc["samples"].sum()), by_class, lines, bool((pc["file"] != "").any()), bool((pc["line_text"] != "").any())
    )


def _short(path: str) -> str:
    """The last two parts of a source path (kernels/x.py): the capture machine's folders say little."""
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])
