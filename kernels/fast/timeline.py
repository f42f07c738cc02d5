"""In-kernel stamps of the fast kernel's Gluon paths (sm_90): each warpgroup's thread 0 writes the SM's cycle
counter (%clock64) at the end of each stage of each tile into a buffer the launch passes, so that a reader
can rebuild a per-warpgroup timeline (profiler/timeline_reader.py). The layout and the stage names:
kernels/timeline_layout.py.

Off by default: the kernels take `Stamps=None, STAMP_TILES: gl.constexpr = 0` as their last parameters,
and with STAMP_TILES == 0 every helper here compiles to nothing (the code is the kernel's own; the sm_90
PTX digests of tests/ptx_check.py check it). With STAMP_TILES = n, Stamps is an int64 buffer of
[programs, ROLES, HEAD + n * PER_TILE] slots, zeroed before the launch (a zero slot was not written):

- a role's header (HEAD slots): its SM (%smid), %globaltimer and %clock64 at its start, %clock64 when its
  loop starts and ends and at its end, %globaltimer at its end, its tile count, and (role 0, the first
  partition) %clock64 and %globaltimer at the program's entry;
- then PER_TILE slots per tile (per pair of tiles in the staggered schedule): slot k holds the clock when
  stage STAGES[schedule][role][1][k] of that tile ended; the stage ran since the stamp before it.

The combine's record, and the special registers' reads both use: kernels/stamps.py.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kernels import timeline_layout
from kernels.stamps import _clock, _gtimer, stamp_start_at

ROLES = gl.constexpr(timeline_layout.ROLES)
HEAD = gl.constexpr(timeline_layout.HEAD)
PER_TILE = gl.constexpr(timeline_layout.PER_TILE)


@gluon.jit
def _role_ptr(Stamps, ROLE: gl.constexpr, STAMP_TILES: gl.constexpr):
    """This program's role ROLE's first slot."""
    pid = gl.program_id(0) + gl.num_programs(0) * (gl.program_id(1) + gl.num_programs(1) * gl.program_id(2))
    SLOTS: gl.constexpr = HEAD + STAMP_TILES * PER_TILE
    return Stamps + (pid.to(gl.int64) * ROLES + ROLE) * SLOTS


@gluon.jit
def stamp(Stamps, ROLE: gl.constexpr, t, K: gl.constexpr, STAMP_TILES: gl.constexpr):
    """The clock at the end of stage K of tile t (tiles past STAMP_TILES are not stamped)."""
    if STAMP_TILES > 0:
        if t < STAMP_TILES:
            gl.store(_role_ptr(Stamps, ROLE, STAMP_TILES) + HEAD + t * PER_TILE + K, _clock())


@gluon.jit
def stamp_start(Stamps, ROLE: gl.constexpr, STAMP_TILES: gl.constexpr):
    """A role's start: its SM, the global timer and the clock."""
    if STAMP_TILES > 0:
        stamp_start_at(_role_ptr(Stamps, ROLE, STAMP_TILES))


@gluon.jit
def stamp_head(Stamps, ROLE: gl.constexpr, FIELD: gl.constexpr, STAMP_TILES: gl.constexpr):
    """The clock into header field FIELD (3: the loop starts, 4: it ends, 8: the program's entry)."""
    if STAMP_TILES > 0:
        p = _role_ptr(Stamps, ROLE, STAMP_TILES)
        gl.store(p + FIELD, _clock())
        if FIELD == 8:
            gl.store(p + 9, _gtimer())


@gluon.jit
def stamp_end(Stamps, ROLE: gl.constexpr, n_tiles, STAMP_TILES: gl.constexpr):
    """A role's end: the clock, the global timer and its tile count."""
    if STAMP_TILES > 0:
        p = _role_ptr(Stamps, ROLE, STAMP_TILES)
        gl.store(p + 5, _clock())
        gl.store(p + 6, _gtimer())
        gl.store(p + 7, n_tiles.to(gl.int64))
