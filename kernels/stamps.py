"""The combine's in-kernel timeline record (kernels/combine.py, `STAMP`): one record of COMBINE_SLOTS int64 per
program (kernels.fast.timeline.COMBINE_FIELDS): its SM, %globaltimer and %clock64 at its start, %clock64 once
the split kernel's writes are visible (after the PDL wait), %clock64 and %globaltimer at its end, its linear
program id, and a written flag. Off by default: with STAMP False it compiles to nothing.

The special registers' reads and the start of a record (`stamp_start_at`) are the Gluon timeline's too
(kernels/fast/timeline.py): a Gluon kernel compiles a @triton.jit function it calls as Gluon.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _clock():
    return tl.inline_asm_elementwise("mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _gtimer():
    return tl.inline_asm_elementwise("mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1)


@triton.jit
def _smid():
    return tl.inline_asm_elementwise("mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1)


@triton.jit
def stamp_start_at(p):
    """A record's start at `p`: the SM (slot 0), %globaltimer (1) and %clock64 (2)."""
    tl.store(p + 1, _gtimer())
    tl.store(p + 2, _clock())
    tl.store(p, _smid().to(tl.int64))


@triton.jit
def combine_stamp(Stamps, FIELD: tl.constexpr, STAMP: tl.constexpr):
    """FIELD 0: the program's start (SM, timer, clock, id); 3: its partials are visible; 4: its end."""
    if STAMP:
        pid = tl.program_id(0) + tl.num_programs(0) * tl.program_id(1)
        p = Stamps + pid.to(tl.int64) * 8
        if FIELD == 0:
            stamp_start_at(p)
            tl.store(p + 6, pid.to(tl.int64))
            tl.store(p + 7, 1)
        elif FIELD == 3:
            tl.store(p + 3, _clock())
        else:
            tl.store(p + 4, _clock())
            tl.store(p + 5, _gtimer())
