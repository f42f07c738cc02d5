"""Useful work against executed work: what a kernel needed to do (the workload's FLOPs and bytes, or the
user's for a foreign capture: `roofline analyze R --useful-flops F --useful-bytes B`) beside what ncu counted
it doing (tensor and FP32 FLOPs, DRAM bytes). Padded MMA rows show as executed FLOPs above the useful ones,
and only then is "fewer padded rows" advice (a kernel whose rows fill its MMA tiles is told nothing of
padding: 64 heads x 9 queries are nine whole 64-row blocks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from kernels.errors import BadInput
from roofline.analysis.hierarchy import padding_note

PADDED_OVER = 1.05  # executed tensor FLOPs above the useful ones by more than 5%: padded rows
PADDING_KEYS = ("tensor-pipe-bound", "overlap the softmax")  # advice about the tensor pipe or the math


@dataclass(frozen=True)
class UsefulWork:
    """The useful work of one step (one launch of each kernel of the capture): FLOPs, bytes, either may be None."""

    flops: float | None = None
    bytes: float | None = None

    def __post_init__(self):
        for name, v in (("--useful-flops", self.flops), ("--useful-bytes", self.bytes)):
            if v is not None and (not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0):
                raise BadInput(f"{name}: a finite number of 0 or more expected, got {v!r}")
        if self.flops is None and self.bytes is None:
            raise BadInput("useful work: give FLOPs (--useful-flops), bytes (--useful-bytes) or both")

    def to_dict(self) -> dict:
        return {"flops": self.flops, "bytes": self.bytes}


def useful_line(k, useful: UsefulWork, kernels: int) -> str | None:
    """An evidence line: the user's useful work against what ncu counted for kernel `k` (a KernelSummary);
    with several kernels the useful FLOPs are split by their tensor FLOPs and the bytes are the step's."""
    h = k.hierarchy or {}
    parts = []
    if useful.flops is not None:
        executed = h.get("flops")
        if executed is not None and useful.flops > 0:
            tensor = h.get("tensor_flops") or 0.0
            mine = h.get("useful_flops") or useful.flops
            parts.append(
                f"FLOPs executed {executed / 1e9:,.2f} G against {mine / 1e9:,.2f} G useful ({executed / mine:.2f}x"
                + (f"; the tensor pipe alone {tensor / mine:.2f}x" if tensor else "")
                + ")"
            )
        elif executed is None:
            parts.append("FLOPs: the capture counts none (no FLOP counters)")
    dram = next((lv["bytes"] for lv in h.get("levels", []) if lv["level"] == "DRAM"), None)
    if useful.bytes is not None:
        if dram is None and k.dram_gbps and k.duration_ms:
            dram = k.dram_gbps * 1e9 * k.duration_ms * 1e-3
        if dram is not None and useful.bytes > 0:
            step = " (the step's, over every kernel)" if kernels > 1 else ""
            parts.append(
                f"DRAM moved {dram / 1e9:,.3f} GB against {useful.bytes / 1e9:,.3f} GB useful{step} "
                f"({dram / useful.bytes:.2f}x)"
            )
        elif dram is None:
            parts.append("bytes: the capture counts no DRAM bytes")
    if not parts:
        return None
    return "useful work (given: " + _given(useful) + "): " + "; ".join(parts)


def _given(useful: UsefulWork) -> str:
    out = []
    if useful.flops is not None:
        out.append(f"{useful.flops:.4g} FLOP")
    if useful.bytes is not None:
        out.append(f"{useful.bytes:.4g} bytes")
    return " and ".join(out) + " per step"


def padding_clause(k, q_len: int | None) -> str:
    """ "; fewer padded rows: ..." for advice about the tensor pipe or the math, only where the tensor cores ran
    more FLOPs than the useful work needs (PADDED_OVER); "" otherwise (useful work unknown, or no padding)."""
    h = k.hierarchy or {}
    if not any(key in (k.advice or "") for key in PADDING_KEYS):
        return ""
    if not h.get("useful_flops") or not h.get("tensor_flops"):
        return ""
    x = h["tensor_flops"] / h["useful_flops"]
    if x <= PADDED_OVER:
        return ""
    note = padding_note(x, q_len)
    if note.startswith("MMA padding:"):  # the ratio is whole padded tiles: the rows are padding
        return f"; fewer padded rows: the tensor cores ran {x:.2f}x the useful FLOPs ({note})"
    return f"; fewer padded rows or recomputed MMAs: the tensor cores ran {x:.2f}x the useful FLOPs"
