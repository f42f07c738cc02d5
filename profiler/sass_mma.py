"""Register-blocked MMAs in a kernel's SASS: mma.sync-class instructions (HMMA, IMMA, DMMA, BMMA) that
accumulate in place (the destination registers are the accumulator operand: `HMMA.16816.F32.BF16 R68, R36,
R24, R68`) inside a loop (between a backward branch and its target). Such a kernel keeps its accumulators
in registers from one iteration to the next: the registers it needs for them are the design, and the
occupancy they allow follows. A warpgroup MMA (HGMMA) reads its operands from shared memory and a tcgen05
MMA keeps its accumulators in tensor memory: neither is register-blocked in this sense."""

from __future__ import annotations

import re

SYNC_MMA_OPS = ("HMMA", "IMMA", "DMMA", "BMMA")
INSTRUCTION_BYTES = 16
_BRANCH = re.compile(r"^(?:@!?U?P\w+\s+)?BRA\b[^;]*?(0x[0-9a-fA-F]+)\s*;?\s*$")
_OPERANDS = re.compile(r"^(?:@!?U?P\w+\s+)?(\S+)\s+(.*?)\s*;?\s*$")


def accumulates_in_place(sass: str) -> bool:
    """An mma.sync-class instruction whose destination is its accumulator operand (the last one)."""
    m = _OPERANDS.match(sass.strip())
    if not m or m.group(1).split(".")[0] not in SYNC_MMA_OPS:
        return False
    operands = [o.strip() for o in m.group(2).split(",")]
    return len(operands) >= 4 and operands[0] == operands[-1] and operands[0].startswith("R")


def loops(sass: list[str], start: int) -> list[tuple[int, int]]:
    """(first, last) instruction index of each loop: a branch whose target lies at or before it."""
    out = []
    for i, text in enumerate(sass):
        m = _BRANCH.match(text.strip())
        if not m:
            continue
        target = (int(m.group(1), 16) - start) // INSTRUCTION_BYTES
        if 0 <= target <= i:
            out.append((target, i))
    return out


def register_blocked_loop(sass: list[str], start: int) -> bool:
    """Whether an in-place mma.sync-class MMA sits inside a loop of this function (module doc)."""
    inside = [i for i, text in enumerate(sass) if accumulates_in_place(text)]
    if not inside:
        return False
    spans = loops(sass, start)
    return any(first <= i <= last for i in inside for first, last in spans)
