"""Launch shapes of the kernels, in plain Python (no torch), so models can reason about them."""

from __future__ import annotations


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def plan_splits(max_kv_len: int, batch: int, m_blocks: int, sm_count: int, block_n: int,
                programs_per_sm: float, min_split_len: int) -> tuple[int, int]:
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


# Default launch parameters, shared by the kernels and by roofline's models of them.
EXTEND_BLOCK_M = 32  # triton_mla: query rows per program (SGLang's extend kernel on sm_90)
DECODE_BLOCK_H = 16  # triton_mla_decode: heads per program
DECODE_KV_SPLITS = 8  # triton_mla_decode: splits per row (SGLang's default)
# triton_mla_fast: tail_m 0 = plain M blocks; partials "fp32" | "input" (the q dtype: bf16, fp16 in the interpreter); evict_first on KV loads.
# seesaw (gluon path only): the warp-specialised schedule (kernels/fast/seesaw.py); ring:
# its per-tile variant where there is a tail warpgroup (kernels/fast/ring.py); async_gather
# (ring only): gathered tiles complete their barriers as their copies land (cp.async.mbarrier.arrive).
FAST_DEFAULTS = dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0,
                     tail_m=0, partials="fp32", evict_first=False, seesaw=False, ring=False, async_gather=False)
FAST_MIN_SPLIT_LEN = 256

# Per architecture: the fast kernel's launch configs, one per (heads, paged) case; the entry with
# the nearest heads count and the same page class (page_size 1 vs >= 16) wins. "measured" entries
# come from a search on that GPU (docs/results/fast-kernel.md); "untuned" ones were only chosen
# to fit the chip's limits (checked by cross-compiling: `roofline compile`).
ARCH_FAST_CONFIGS: dict[str, dict] = {
    # The Triton kernels' configs (path="portable" or "hopper"); the default sm_90 path, Gluon, has GLUON_CONFIG.
    "sm_90": dict(status="measured on the H200 (docs/results/fast-kernel.md)", entries=[
        # portable kernel, 3 M blocks of 32 rows (mma.sync), 2 programs per SM (110 KB smem each)
        dict(heads=8, paged=False, config=dict(block_m=64 // 2, block_n=64, num_warps=4, num_stages=2,
                                               programs_per_sm=2.0)),
        # path="hopper" (Triton, TMA), 2 M blocks of 64 rows, 229 KB smem: one program per SM
        dict(heads=8, paged=True, config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2,
                                              programs_per_sm=1.0)),
        dict(heads=64, paged=False, config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2,
                                                programs_per_sm=2.0)),
        dict(heads=64, paged=True, config=dict(block_m=64, block_n=64, num_warps=8, num_stages=2,
                                               programs_per_sm=2.0)),
    ]),
    # B200: 228 KB shared memory per block, 148 SMs; tcgen05 code from the portable kernel. The
    # defaults (64-token tiles) ask for 356 KB there: 32-token tiles take 215 KB, no spills.
    "sm_100": dict(status="untuned: chosen to fit sm_100 limits (228 KB smem per block), never run", entries=[
        dict(heads=8, paged=False, config=dict(FAST_DEFAULTS, block_n=32)),
        dict(heads=64, paged=False, config=dict(FAST_DEFAULTS, block_n=32, programs_per_sm=2.0)),
    ]),
    # RTX PRO 6000 (consumer Blackwell): 99 KB shared memory per block, mma.sync only: 32-row M
    # blocks and 32-token KV tiles so that two pipeline stages fit.
    "sm_120": dict(status="untuned: chosen to fit sm_120 limits (99 KB smem per block), never run", entries=[
        dict(heads=8, paged=False, config=dict(FAST_DEFAULTS, block_m=32, block_n=32, num_warps=4)),
        dict(heads=64, paged=False, config=dict(FAST_DEFAULTS, block_m=32, block_n=32, num_warps=4,
                                                programs_per_sm=2.0)),
    ]),
}

# Which code path of each kernel runs on which architecture; anything not named: portable.
# On sm_90 the Gluon kernels (kernels/fast/) runs at every page size: whole-page
# tiles by TMA, smaller pages by cp.async gathers. The Triton TMA kernel ("hopper") stays
# selectable with path="hopper" (page_size a multiple of its block_n).
CODE_PATHS: dict[str, dict[str, str]] = {
    "triton_mla_fast": {"sm_90": "gluon"},
}
# The Gluon kernel's launch parameters: 64-row M blocks, two warpgroups, 64-token tiles, one
# program per SM (222 KB of shared memory; 227 KB with the tail). seesaw=True: the warp-specialised
# schedule (each warpgroup scores its own tiles); False: the single-schedule kernel with a 2-stage
# ring. Measured on the H200 against each other and against 32-token tiles (docs/results/fast-kernel.md).
# tail_m=8 (seesaw only): up to 8 rows past the last whole block (72 = 64 + 8) go to a third,
# transposed warpgroup instead of a padded 64-row block (gluon_tail_rows; 227 KB of shared memory).
# By default only where its plan (half the M blocks, so twice the splits) still gives every split
# GLUON_TAIL_MIN_SPLIT_LEN tokens: H200, 8 heads, graph replay, tail vs padded block: 128k (1024
# per split) 0.081 vs 0.094 ms at page 64, 0.085 vs 0.104 at page 1; 64k (512) 0.057 vs 0.060,
# 0.059 vs 0.065; 32k (256) 0.043 vs 0.041; 8k 0.032 vs 0.027. An explicit tail_m=8 forces it.
GLUON_TAIL_MIN_SPLIT_LEN = 512
# ring=True: where the tail is used, the per-tile ring schedule (kernels/fast/ring.py) instead
# of pairs of tiles, at every page size. H200, 8 heads, graph replay, ring vs seesaw with the tail: 128k
# 0.071 vs 0.081 ms at page 64; 64k page 64 0.051 vs 0.057. async_gather=True: pages smaller than a
# tile (every token gathered by cp.async) complete their barriers as the copies land, the tail loads a
# tile's page-table entries two tiles ahead; before it the ring lost at page 1 (0.095 vs the seesaw's
# 0.085 ms). With it, 128k page 1 0.0737 vs the seesaw's 0.0853, page 16 0.0743 vs 0.0825, page 64
# 0.0708 vs 0.0717; 64k page 1 0.0521 vs 0.0593 (docs/results/fast-kernel.md, step 12).
GLUON_CONFIG = dict(block_m=64, block_n=64, num_warps=8, num_stages=2, programs_per_sm=1.0, seesaw=True, tail_m=8,
                    ring=True, async_gather=True)
# The seesaw schedule's tiles arrive in slices of this many latent dims, a barrier each, so that the
# score MMAs start on the first slice while the rest land (H200, 128k: 128 beat 256 and 512).
SEESAW_SLICE = 128


def normalise_arch(arch: str) -> str:
    """"sm_90", "sm90", "90", "9.0" -> "sm_90"."""
    a = str(arch).strip().lower().removeprefix("sm_").removeprefix("sm").replace(".", "")
    if not a.isdigit():
        raise ValueError(f"architecture {arch!r} is not like sm_90, sm_100, sm_120")
    return f"sm_{a}"


def fast_launch_config(arch: str, heads: int, page_size: int) -> dict:
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


def code_path(kernel: str, arch: str, page_size: int = 1, max_kv_len: int | None = None) -> str:
    """The code path of `kernel` on `arch`: "gluon" where kernels.plan.CODE_PATHS selects it
    (triton_mla_fast on sm_90, any page size and length), else "portable" (every other GPU and
    the interpreter). `page_size` and `max_kv_len` are kept for callers; no rule uses them now."""
    try:
        arch = normalise_arch(arch)
    except ValueError:
        return "portable"
    return CODE_PATHS.get(kernel, {}).get(arch, "portable")
