"""The in-kernel timeline's buffer layout and stage names (pure Python: the capture, the reader and the Gluon
stamps, kernels/fast/timeline.py, all read it from here).

The split kernel's buffer is int64 [programs, ROLES, HEAD + STAMP_TILES * PER_TILE]; a zero slot was not written.
Each role (warpgroup) of a program writes a header of HEAD slots (HEADER_FIELDS) and PER_TILE slots per tile (per
pair of tiles in the staggered schedule): slot k holds %clock64 when stage STAGES[schedule][role][1][k] of that
tile ended (it ran since the stamp before it). The combine writes COMBINE_FIELDS per program.
"""

from __future__ import annotations

ROLES = 3  # warpgroups per program: two main ones and the tail/producer (a kernel with two leaves role 2 empty)
HEAD = 10
PER_TILE = 12
HEADER_FIELDS = (
    "smid",
    "gt_start",
    "clk_start",
    "clk_loop",
    "clk_loop_end",
    "clk_end",
    "gt_end",
    "n_tiles",
    "clk_entry",
    "gt_entry",
)
GT_FIELDS = (1, 6, 9)  # %globaltimer (ns)
RAW_FIELDS = (0, 7)  # the SM and the tile count; every other slot is a %clock64
COMBINE_SLOTS = 8
COMBINE_FIELDS = ("smid", "gt_start", "clk_start", "clk_waited", "clk_end", "gt_end", "program", "written")

_RING_MAIN = ("wait loads", "score MMA", "softmax", "wait tail", "post P", "wait P", "value MMA")
# Per schedule: each role's name and the stage that ends at each tile slot.
STAGES = {
    "ring": (
        ("main 0", _RING_MAIN),
        ("main 1", _RING_MAIN),
        ("producer + tail rows", ("wait loads", "score MMA", "softmax", "value MMA", "wait buffer", "issue loads")),
    ),
    "stagger": (
        (
            "main 0",
            ("softmax", "wait maxima", "post P", "value MMA", "issue loads", "wait P", "value MMA 2", "issue loads 2")
            + ("wait loads", "score MMA"),
        ),
        (
            "main 1",
            ("wait maxima", "softmax", "post P", "wait P", "value MMA", "issue loads", "value MMA 2", "issue loads 2")
            + ("wait loads", "score MMA"),
        ),
    ),
}
# With scores_ahead (SCORES_AHEAD), warpgroup 0's second P V runs with the next tile's first scores issued under it
# (a capture's meta names this schedule).
STAGES["stagger-ahead"] = (
    ("main 0", STAGES["stagger"][0][1][:6] + ("value MMA + scores ahead",) + STAGES["stagger"][0][1][7:]),
    STAGES["stagger"][1],
)
# The split kernel that runs each schedule, and how a capture tells them apart.
SCHEDULE_KERNELS = {"_gluon_ring_kernel": "ring", "_gluon_seesaw_kernel": "stagger"}


def slots(stamp_tiles: int) -> int:
    """Slots per role for `stamp_tiles` tiles."""
    return HEAD + stamp_tiles * PER_TILE


def stamp_tiles_for(max_tiles: int) -> int:
    """The STAMP_TILES a launch compiles with for programs of up to `max_tiles` tiles: a power of two (few compiles)."""
    n = 16
    while n < max_tiles:
        n *= 2
    return n
