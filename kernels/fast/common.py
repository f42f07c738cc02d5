"""triton_mla_fast's launch configuration and split plan, in plain Python (no torch, no triton): a
frozen `FastConfig`, where its values come from (the defaults, the per-architecture configs, the
GPU's tuned entries in kernels/data/tuned.json, the Gluon path's own), the checks that no path owns,
and how the prefix is cut into splits and the rows into blocks.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from kernels.launch_spec import ARCHS
from kernels.plan import cdiv, next_pow2, normalise_arch
from kernels.tuned import tuned_config


@dataclass(frozen=True)
class FastConfig:
    """One launch's parameters, each at its default. tail_m 0: plain M blocks; partials "fp32" or
    "input" (the q dtype: bf16, fp16 in the interpreter); evict_first on KV loads. seesaw: the gluon
    path's warp-specialised schedule, and its only one (True there, False on the others;
    kernels/fast/seesaw.py); ring: its per-tile variant where
    there is a tail warpgroup (kernels/fast/ring.py); async_gather (ring only): gathered tiles complete
    their barriers as their copies land (cp.async.mbarrier.arrive); ring_whole (ring only): the ring
    also where the rows are whole 64-row blocks (64 heads), its third warpgroup then only loading; ring_padded
    (ring only): the ring also where the rows end in a padded 64-row block and have no tail (16 heads x 2 tokens:
    32 rows), its third warpgroup only loading; stagger
    (the seesaw kernel, 64-row blocks without a tail): FlashMLA's order of work (kernels/fast/stagger.py), the seesaw's
    removal experiments; scores_ahead (the stagger): each pair of tiles starts by reading the next pair's page-table
    entries, and warpgroup 0 issues the next tile's first scores under its second P V (FlashMLA's order within a
    pair; by default where each tile is read by SCORES_AHEAD_MIN_BLOCKS M blocks or more). schedule: "batch" (the
    default) cuts a ragged batch's KV (requests of different lengths)
    into work items of near-equal length over the SMs (plan_batch: one program per (M block, item), a request with
    one item writes its output directly, the combine merges only the requests that were cut); "uniform" is the
    schedule before it, grid (m_blocks, splits, batch) with one split length from the longest request
    (plan_splits), and what a batch of equal requests (batch 1 too) launches either way: plan_splits cuts it
    alike. item_cost, max_waves: plan_batch's knobs. Then the removal
    experiments (roofline/pipelines/removal_experiment.py, CUTS; each split path says which it has): wrong results on
    purpose, off by default; no_combine (every path, STEP_CUTS): the step without its merge launch (the partials are
    written, the rows of a request that was cut are not)."""

    block_m: int = 64
    block_n: int = 64
    num_warps: int = 8
    num_stages: int = 2
    programs_per_sm: float = 1.0
    tail_m: int = 0
    partials: str = "fp32"  # "fp32" | "input"
    evict_first: bool = False
    seesaw: bool = False
    ring: bool = False
    async_gather: bool = False
    ring_whole: bool = False
    ring_padded: bool = False
    stagger: bool = False
    scores_ahead: bool = False
    schedule: str = "batch"  # "batch" | "uniform"
    item_cost: float = 2.0  # plan_batch: a work item's fixed cost, in KV tiles
    max_waves: float = 4.0  # plan_batch: work items at most this many times the programs that run at once
    no_mma: bool = False
    no_softmax: bool = False
    no_gather: bool = False
    no_combine: bool = False

    @property
    def cuts(self) -> bool:
        """Whether any removal experiment is on."""
        return self.no_mma or self.no_softmax or self.no_gather or self.no_combine

    def to_dict(self) -> dict:
        return asdict(self)


CUTS = ("no_mma", "no_softmax", "no_gather")  # compiled into a split kernel (each path lists its own)
STEP_CUTS = ("no_combine",)  # the step's launches (every path)
SCHEDULES = ("batch", "uniform")
# The defaults as the per-architecture configs and the tuned entries give them (the removal experiments aside).
FAST_DEFAULTS = {k: v for k, v in FastConfig().to_dict().items() if k not in CUTS + STEP_CUTS}
FAST_MIN_SPLIT_LEN = 256
# no_mma in the Triton split kernels: Triton pipelines loads that feed no tl.dot only in a loop that names
# its stages, so the cut's prefix loop names these (the configs' num_stages; a launch with others is refused).
NO_MMA_STAGES = 2

# Per architecture: the fast kernel's launch configs, one per (heads, paged) case; the entry with
# the nearest heads count and the same page class (page_size 1 vs >= 16) wins. "measured" entries
# come from a search on that GPU (docs/results/fast-kernel.md); "untuned" ones were only chosen
# to fit the chip's limits (checked by cross-compiling: `roofline compile`).
ARCH_FAST_CONFIGS: dict[str, dict] = {
    # The Triton kernels' configs (path="portable" or "hopper"); the default sm_90 path, Gluon, has GLUON_CONFIG.
    "sm_90": dict(
        status="measured on the H200 (docs/results/fast-kernel.md)",
        entries=[
            # portable kernel, 3 M blocks of 32 rows (mma.sync), 2 programs per SM (110 KB smem each)
            dict(
                heads=8,
                paged=False,
                config=dict(block_m=64 // 2, block_n=64, num_warps=4, num_stages=2, programs_per_sm=2.0),
            ),
            # path="hopper" (Triton, TMA), 2 M blocks of 64 rows, 229 KB smem: one program per SM
            dict(
                heads=8, paged=True, config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0)
            ),
            dict(
                heads=64,
                paged=False,
                config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=2.0),
            ),
            dict(
                heads=64,
                paged=True,
                config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=2.0),
            ),
        ],
    ),
    # B200: 228 KB shared memory per block, 148 SMs; tcgen05 code from the portable kernel. The
    # defaults (64-token tiles) ask for 356 KB there: 32-token tiles take 215 KB, no spills.
    "sm_100": dict(
        status="untuned: chosen to fit sm_100 limits (228 KB smem per block), never run",
        entries=[
            dict(heads=8, paged=False, config=dict(FAST_DEFAULTS, block_n=32)),
            dict(heads=64, paged=False, config=dict(FAST_DEFAULTS, block_n=32, programs_per_sm=2.0)),
        ],
    ),
    # RTX PRO 6000 (consumer Blackwell): 99 KB shared memory per block, mma.sync only: 32-row M
    # blocks and 32-token KV tiles so that two pipeline stages fit.
    "sm_120": dict(
        status="untuned: chosen to fit sm_120 limits (99 KB smem per block), never run",
        entries=[
            dict(heads=8, paged=False, config=dict(FAST_DEFAULTS, block_m=32, block_n=32, num_warps=4)),
            dict(
                heads=64,
                paged=False,
                config=dict(FAST_DEFAULTS, block_m=32, block_n=32, num_warps=4, programs_per_sm=2.0),
            ),
        ],
    ),
}
# The Gluon kernel's launch parameters: 64-row M blocks, two warpgroups, 64-token tiles, one program per SM
# (222 KB of shared memory; 227 KB with the tail). seesaw=True: the warp-specialised schedule (each warpgroup
# scores its own tiles); False: the single-schedule kernel with a 2-stage ring. tail_m=8 (seesaw only): up to 8
# rows past the last whole block (72 = 64 + 8) go to a third, transposed warpgroup instead of a padded 64-row
# block (gluon_tail_rows), by default only where its plan (half the M blocks, so twice the splits) still gives
# every split GLUON_TAIL_MIN_SPLIT_LEN tokens; an explicit tail_m=8 forces it.
GLUON_TAIL_MIN_SPLIT_LEN = 512
# ring=True: where the tail is used, the per-tile ring schedule (kernels/fast/ring.py) instead of pairs of tiles,
# at every page size; async_gather=True: pages smaller than a tile complete their barriers as the copies land.
# ring_whole=True: where the rows are whole 64-row blocks, the ring too, its third warpgroup only loading.
# stagger=True: where the rows are 64-row blocks without a tail (whole, or the last one padded) and pages hold
# whole tiles (page >= 64), the seesaw kernel in FlashMLA's order of work (kernels/fast/stagger.py); off at page 1,
# where its warpgroups wait for their own gathers. ring_padded: where the rows end in a padded 64-row block, there
# is no tail and the stagger does not run (pages smaller than a tile), the ring too; the default for batches of
# several requests under the batch schedule (RING_PADDED_MIN_BATCH), off at batch 1.
# Each choice beat the alternative on the H200: docs/results/fast-kernel-defaults.md has the timings.
RING_PADDED_MIN_BATCH = 2
# scores_ahead: on where each tile is read by this many M blocks or more (64 heads x 9 tokens: 9), where the MMAs
# bound the stagger; on the H200 it took the 64-head row 6-7% quicker, and one-block rows (16 heads) 1-3% slower.
SCORES_AHEAD_MIN_BLOCKS = 9
GLUON_CONFIG = dict(
    FAST_DEFAULTS,
    block_m=64,
    num_warps=8,
    seesaw=True,
    tail_m=8,
    ring=True,
    async_gather=True,
    ring_whole=True,
    stagger=True,
)
# The seesaw schedule's tiles arrive in slices of this many latent dims, a barrier each, so that the
# score MMAs start on the first slice while the rest land (H200, 128k: 128 beat 256 and 512).
SEESAW_SLICE = 128

FAST_PATHS = ("portable", "hopper", "gluon")  # the `path` a caller asks for (kernels.plan.code_path picks)
# The GPU whose tuned entries (kernels/data/tuned.json) an architecture uses when the running GPU
# has none of its own. Only Hopper has measured entries; nothing Hopper-tuned reaches sm_100/sm_120.
TUNED_REFERENCE = {"sm_90": "NVIDIA H200"}


CONFIG_KEYS = tuple(f.name for f in fields(FastConfig))


def fast_launch_config(arch: str, heads: int, page_size: int, device_name: str | None = None) -> dict:
    """triton_mla_fast's launch parameters on `arch` (FAST_DEFAULTS' keys): the running GPU's tuned
    entry, else its architecture's reference GPU's, over the architecture's config (arch_fast_config)."""
    tuned = tuned_config("triton_mla_fast", device_name, heads, page_size) if device_name else {}
    if not tuned and arch in TUNED_REFERENCE:
        tuned = tuned_config("triton_mla_fast", TUNED_REFERENCE[arch], heads, page_size)
    return {**arch_fast_config(arch, heads, page_size), **tuned}


def arch_fast_config(arch: str, heads: int, page_size: int) -> dict:
    """triton_mla_fast's launch parameters on `arch` (e.g. "sm_90"); an unknown architecture
    (or "interpreter") gets FAST_DEFAULTS. The entry with the nearest heads count wins."""
    try:
        entry = ARCH_FAST_CONFIGS.get(normalise_arch(arch))
    except ValueError:
        entry = None
    if entry is None:
        return dict(FAST_DEFAULTS)
    paged = page_size > 1
    best = min(entry["entries"], key=lambda e: (abs(e["heads"] - heads), e["paged"] != paged, e["heads"]))
    return {**FAST_DEFAULTS, **best["config"]}


def fast_config_status(arch: str) -> str:
    """How the architecture's config was chosen ("measured ...", "untuned ...", or "default")."""
    try:
        entry = ARCH_FAST_CONFIGS.get(normalise_arch(arch))
    except ValueError:
        entry = None
    return entry["status"] if entry else "default: no config for this architecture"


# The config each architecture gets at 8 heads, page size 1 (for tables and tests).
FAST_ARCH_CONFIGS = {arch: fast_launch_config(arch, 8, 1) for arch in ARCHS}


def resolve_config(
    path: str, arch: str, heads: int, page_size: int, device_name: str | None, launch: dict
) -> FastConfig:
    """The config `path` runs with: `launch` over the path's base (the Triton paths: the
    architecture's and the GPU's tuned config; Gluon: GLUON_CONFIG) over FAST_DEFAULTS. Flags that
    belong to a schedule the caller turned off are turned off with it, unless asked for."""
    unknown = set(launch) - set(CONFIG_KEYS)
    if unknown:
        raise TypeError(f"triton_mla_fast: unknown launch parameters {sorted(unknown)}")
    if path not in FAST_PATHS:
        raise ValueError(f"triton_mla_fast: unknown path {path!r}; known: {', '.join(FAST_PATHS)}")
    base = GLUON_CONFIG if path == "gluon" else fast_launch_config(arch, heads, page_size, device_name)
    cfg = {**FAST_DEFAULTS, **base, **launch}
    if not cfg["ring"]:  # GLUON_CONFIG's async_gather and ring_whole are the ring's
        cfg.update({k: False for k in ("async_gather", "ring_whole", "ring_padded") if k not in launch})
    config = FastConfig(**cfg)
    check_flags(path, config)
    return config


def check_flags(path: str, cfg: FastConfig) -> None:
    """The flags that say which path or schedule they belong to."""
    if cfg.schedule not in SCHEDULES:
        raise ValueError(f"triton_mla_fast: schedule must be one of {SCHEDULES}, got {cfg.schedule!r}")
    if cfg.item_cost < 0 or cfg.max_waves < 1:
        raise ValueError(f"triton_mla_fast: item_cost >= 0 and max_waves >= 1, got {cfg.item_cost}, {cfg.max_waves}")
    if cfg.partials not in ("fp32", "input"):
        raise ValueError(f"triton_mla_fast: partials must be 'fp32' or 'input', got {cfg.partials!r}")
    if cfg.seesaw != (path == "gluon"):
        raise ValueError(
            "seesaw is the gluon path's schedule, and the gluon path's only one: its single-schedule kernel "
            "(seesaw=False) was retired on 2026-12-02 (docs/results/fast-kernel.md, steps 1-5); path='hopper' "
            "is the Triton TMA kernel"
        )
    if cfg.stagger and path != "gluon":
        raise ValueError("stagger is a schedule of the gluon path's seesaw kernel")
    if cfg.scores_ahead and not cfg.stagger:
        raise ValueError("scores_ahead is an option of the gluon path's staggered schedule (stagger=True)")
    if cfg.ring and path != "gluon":
        raise ValueError("ring is a variant of the gluon path's seesaw schedule")
    if cfg.ring_whole and not cfg.ring:
        raise ValueError("ring_whole is an option of the ring schedule (ring=True)")
    if cfg.ring_padded and not cfg.ring:
        raise ValueError("ring_padded is an option of the ring schedule (ring=True)")
    if cfg.async_gather and not cfg.ring:
        raise ValueError("async_gather is an option of the ring schedule (ring=True)")


# --- the split plan ------------------------------------------------------------------------------


def plan_splits(
    max_kv_len: int, batch: int, m_blocks: int, sm_count: int, block_n: int, programs_per_sm: float, min_split_len: int
) -> tuple[int, int]:
    """(split_len, splits) for triton_mla_fast: at most programs_per_sm x SMs programs in all (never
    a few over: 9 M blocks x 15 splits = 135 programs on 132 SMs is a second, nearly empty wave
    that cost the H200 1.8x at 64 heads), split_len a multiple of block_n, >= min_split_len."""
    target_splits = max(1, int(programs_per_sm * sm_count) // (batch * m_blocks))
    split_len = max(min_split_len, cdiv(max_kv_len, target_splits))
    split_len = cdiv(split_len, block_n) * block_n
    return split_len, cdiv(max_kv_len, split_len)


def split_rows(m: int, block_m: int, tail_m: int) -> tuple[int, int]:
    """(block_m, tail) for M = q_len x heads rows: tail > 0 when the rows are one BLOCK_M tile
    plus one smaller power-of-two tile of at least 16 rows and at most `tail_m` (72 = 64 + 16,
    not 128); tail 0 means M blocks of block_m rows."""
    if tail_m <= 0 or m <= block_m:
        return block_m, 0
    tail = max(16, next_pow2(m - block_m))
    return (block_m, tail) if tail <= min(tail_m, block_m) else (block_m, 0)


def gluon_tail_rows(m: int, block_m: int, tail_m: int) -> int:
    """The Gluon seesaw kernel's tail: `tail_m` when the M = q_len x heads rows are whole BLOCK_M
    blocks plus 1..tail_m more (72 = 64 + 8: a third warpgroup takes the 8, transposed, instead
    of a second, padded 64-row block); else 0 (every block padded to block_m)."""
    return tail_m if tail_m and m > block_m and 0 < m % block_m <= tail_m else 0


# --- the batch schedule (schedule="batch") -------------------------------------------------------

# A work item's row in the table the split kernels read (int32): its request, its tokens [lo, hi), the
# request's prefix length, and its partial slot (-1: the request's only item, written to the output directly).
ITEM_FIELDS = ("request", "lo", "hi", "ctx_len", "slot")
# A combine job's row (int32): a request that was cut, its first partial slot and how many it has.
JOB_FIELDS = ("request", "first_slot", "slots")


@dataclass(frozen=True)
class BatchSchedule:
    """The batch's work items, computed once per batch (as FlashMLA's get_mla_metadata): `items` in launch
    order (longest first, so the GPU's in-order dispatch of programs packs them as a longest-first list
    schedule), each (request, lo, hi, ctx_len, slot); `jobs` the requests that were cut, each (request,
    first_slot, slots), their items' partials in slots first_slot.. (rows slot x M .. slot x M + M - 1).
    split_len: the longest item's tokens."""

    split_len: int
    items: tuple[tuple[int, int, int, int, int], ...]
    jobs: tuple[tuple[int, int, int], ...]
    makespan: float  # the list schedule's finish, in tiles (plan_batch's estimate)

    @property
    def max_slots(self) -> int:
        """The most partials one request merges (the combine's splits)."""
        return max((j[2] for j in self.jobs), default=0)


def _cut(kv_len: int, piece_tiles: int, block_n: int, min_tiles: int) -> list[tuple[int, int]]:
    """A request's tokens cut into near-equal pieces of at most `piece_tiles` tiles (each at least `min_tiles`
    where the request is longer), on tile boundaries: [(lo, hi), ...]."""
    tiles = cdiv(kv_len, block_n)
    n = max(1, min(cdiv(tiles, piece_tiles), tiles // max(min_tiles, 1)))
    bounds = [min(kv_len, (tiles * i // n) * block_n) for i in range(n + 1)]
    return [(bounds[i], bounds[i + 1]) for i in range(n)]


def _list_schedule(tiles: list[int], workers: int, cost: float) -> float:
    """Finish time of items (tiles each, longest first) dealt in order to `workers` as each frees up, each
    item costing `cost` more (the GPU starts a grid's programs in order as SMs free up)."""
    import heapq

    if len(tiles) <= workers:
        return max(tiles, default=0) + cost
    free = [0.0] * workers
    for t in tiles:
        heapq.heapreplace(free, free[0] + t + cost)
    return max(free)


def plan_batch(
    kv_lens: tuple[int, ...],
    q_len: int,
    m_blocks: int,
    sm_count: int,
    min_split_len: int,
    cfg: FastConfig | None = None,
    split_len: int | None = None,
) -> BatchSchedule:
    """The batch schedule of `cfg`'s tiles (block_n tokens), programs per SM and knobs (item_cost,
    max_waves; None: FastConfig's defaults): every request's tokens (prefix + draft) cut into near-equal
    pieces of at most P tiles (at least min_split_len tokens each), P chosen so that a longest-first list
    schedule of all the pieces over the programs that run at once (programs_per_sm x SMs / m_blocks), each
    piece costing `item_cost` tiles more (a program's start, its partial, its share of the combine), finishes
    first; pieces from cdiv(tokens, max_waves x slots) to one per request are tried. At batch 1 the prefix is
    cut as plan_splits cuts it (the same split length, the same programs). `split_len` given: every request
    cut into pieces of that many tokens (whole tiles), the last shorter."""
    cfg = cfg or FastConfig()
    block_n, programs_per_sm, item_cost = cfg.block_n, cfg.programs_per_sm, cfg.item_cost
    batch = len(kv_lens)
    min_tiles = cdiv(max(min_split_len, block_n), block_n)
    if split_len is not None or batch == 1:
        if split_len is None:
            split_len, _ = plan_splits(
                kv_lens[0], 1, m_blocks, sm_count, block_n, programs_per_sm, max(min_split_len, block_n)
            )
        tiled = cdiv(split_len, block_n) * block_n
        pieces = [[(lo, min(lo + tiled, n)) for lo in range(0, n, tiled)] for n in kv_lens]
        return _finish(kv_lens, q_len, pieces, tiled, block_n, m_blocks, sm_count, programs_per_sm, item_cost)
    slots = max(1, int(programs_per_sm * sm_count) // m_blocks)
    tiles = [cdiv(n, block_n) for n in kv_lens]
    lo_p = max(min_tiles, cdiv(sum(tiles), int(cfg.max_waves * slots)))
    hi_p = max(lo_p, max(tiles))
    cands, p = [], lo_p
    while p < hi_p:  # every piece length up to 64 tiles, then steps of about 2%
        cands.append(p)
        p = p + 1 if p < 64 else max(p + 1, int(p * 1.02))
    cands.append(hi_p)
    best = None
    for p in cands:
        lens = sorted(
            (cdiv(hi - lo, block_n) for n in kv_lens for lo, hi in _cut(n, p, block_n, min_tiles)), reverse=True
        )
        t = _list_schedule(lens, slots, item_cost)
        if best is None or t <= best[0] + 1e-9:  # a tie: the longer pieces (fewer items, fewer partials)
            best = (t, p)
    p = best[1]
    pieces = [_cut(n, p, block_n, min_tiles) for n in kv_lens]
    longest = max(hi - lo for ps in pieces for lo, hi in ps)
    return _finish(
        kv_lens,
        q_len,
        pieces,
        cdiv(longest, block_n) * block_n,
        block_n,
        m_blocks,
        sm_count,
        programs_per_sm,
        item_cost,
    )


def _finish(kv_lens, q_len, pieces, split_len, block_n, m_blocks, sm_count, programs_per_sm, item_cost):
    slots = max(1, int(programs_per_sm * sm_count) // m_blocks)
    jobs, first, slot = [], {}, 0
    for b, ps in enumerate(pieces):
        if len(ps) > 1:
            first[b] = slot
            jobs.append((b, slot, len(ps)))
            slot += len(ps)
    items = [
        (b, lo, hi, kv_lens[b] - q_len, first[b] + i if b in first else -1)
        for b, ps in enumerate(pieces)
        for i, (lo, hi) in enumerate(ps)
    ]
    items.sort(key=lambda it: (-(it[2] - it[1]), it[0], it[1]))
    makespan = _list_schedule([cdiv(it[2] - it[1], block_n) for it in items], slots, item_cost)
    return BatchSchedule(split_len, tuple(items), tuple(jobs), makespan)


def schedule_args(spec, items, out) -> dict:
    """The batch schedule's runtime arguments of a split launch (Items: its item table on the device, Out: the
    output) where the spec has them (ITEMS), else none (without ITEMS they are None constexprs in the spec)."""
    if not spec.constexprs.get("ITEMS"):
        return {}
    if items is None or out is None:
        raise ValueError(f"{spec.name} runs the batch schedule: pass its item table and the output")
    return {"Items": items, "Out": out}
