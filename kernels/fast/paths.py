"""triton_mla_fast's split kernels as path objects, in plain Python (no torch, no triton): each
checks a config against what its kernel can run, plans its rows, gives its `LaunchSpec` and
launches it (importing its kernel module only then). `plan_fast` picks the path for a workload and
architecture; `fast_specs` is its launches, the same specs `roofline compile` cross-compiles.

| path       | kernel (as ncu names it) | module                     |
|------------|--------------------------|----------------------------|
| portable   | `_fast_split_kernel`     | kernels/fast/portable.py   |
| hopper     | `_hopper_split_kernel`   | kernels/fast/hopper.py     |
| gluon      | `_gluon_seesaw_kernel`   | kernels/fast/seesaw.py     |
| gluon      | `_gluon_ring_kernel`     | kernels/fast/ring.py (ring=True, where there is a tail) |
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from importlib import import_module

from kernels.fast.common import (
    CUTS,
    FAST_MIN_SPLIT_LEN,
    GLUON_TAIL_MIN_SPLIT_LEN,
    NO_MMA_STAGES,
    RING_PADDED_MIN_BATCH,
    SCORES_AHEAD_MIN_BLOCKS,
    SEESAW_SLICE,
    BatchSchedule,
    FastConfig,
    gluon_tail_rows,
    plan_batch,
    plan_splits,
    resolve_config,
    split_rows,
)
from kernels.launch_spec import POINTER, LaunchSpec, combine_jobs_spec, combine_spec, pdl_arch, with_out_dtype
from kernels.plan import cdiv, code_path
from kernels.spec import VerifyWorkload


@dataclass(frozen=True)
class Rows:
    """How a path cuts the M = q_len x heads rows: blocks of block_m, plus a tail of tail_m rows in
    the same program (0: none), m_blocks programs along M."""

    block_m: int
    tail_m: int
    m_blocks: int
    m: int  # q_len x heads

    @property
    def whole(self) -> bool:
        """Whole block_m blocks, no tail and no padded rows (64 heads: 576 = 9 x 64)."""
        return not self.tail_m and self.m % self.block_m == 0


class SplitPath:
    """A split kernel of triton_mla_fast. The Triton paths' rows: one BLOCK_M tile plus one smaller
    tile in the same program where that fits `tail_m` (72 = 64 + 16), else BLOCK_M blocks."""

    path = ""  # the `path` a caller names ("portable", "hopper", "gluon")
    kernel = ""  # the jit function, as ncu names it
    module = ""  # its module, imported only to launch or compile it
    cuts: tuple[str, ...] = ()  # the removal experiments its kernel has (FastConfig fields, CUTS)
    no_cut = "none of its work has a switch"  # why a cut it lacks is not there

    @property
    def target(self) -> str:
        return f"{self.module}:{self.kernel}"

    def check(self, w: VerifyWorkload, cfg: FastConfig) -> None:
        """Raise ValueError for what this kernel cannot run."""

    def rows(self, w: VerifyWorkload, cfg: FastConfig, plan_split_len) -> Rows:
        """`plan_split_len(m_blocks)`: the tokens per split a plan with that many M blocks gives (None:
        the caller chose tail_m, so no default depends on it)."""
        block_m, tail_m = split_rows(w.q_len * w.heads, cfg.block_m, cfg.tail_m)
        m = w.q_len * w.heads
        return Rows(block_m, tail_m, 1 if tail_m else cdiv(m, block_m), m)

    def for_rows(self, rows: Rows, cfg: FastConfig) -> SplitPath:
        """The path that runs these rows (the ring hands rows without a tail to the seesaw)."""
        return self

    def signature(self, w: VerifyWorkload, cfg: FastConfig) -> dict[str, str]:
        """The runtime arguments before the tuple `args` (SPLIT_ARGS): the query, and the TMA descriptors of a
        kernel that takes them."""
        return {"Q": POINTER[w.dtype]}

    def constexprs(self, w: VerifyWorkload, cfg: FastConfig, rows: Rows) -> dict:
        return dict(
            HEADS=w.heads,
            Q_LEN=w.q_len,
            PAGE_SIZE=w.page_size,
            D_LATENT=w.v_dim,
            D_ROPE=w.rope_dim,
            BLOCK_M=rows.block_m,
            BLOCK_N=cfg.block_n,
            TAIL_M=rows.tail_m,
            **self.cut_constexprs(cfg),
        )

    def num_warps(self, cfg: FastConfig, rows: Rows) -> int:
        return cfg.num_warps

    def check_cuts(self, cfg: FastConfig) -> None:
        """Raise ValueError for a removal experiment this kernel does not have."""
        lacking = [c for c in CUTS if getattr(cfg, c) and c not in self.cuts]
        if lacking:
            raise ValueError(
                f"{self.kernel} ({self.path} path) has no removal experiment {', '.join(lacking)}: {self.no_cut} "
                f"(it has: {', '.join(self.cuts) or 'none'})"
            )

    def cut_constexprs(self, cfg: FastConfig) -> dict[str, bool]:
        """The removal experiments' switches (NO_MMA, ...) this kernel has, on or off."""
        return {c.upper(): getattr(cfg, c) for c in self.cuts}

    def spec(
        self,
        w: VerifyWorkload,
        cfg: FastConfig,
        rows: Rows,
        split_len: int,
        splits: int,
        schedule: BatchSchedule | None = None,
    ) -> LaunchSpec:
        """Grid (m_blocks, splits, batch) (the uniform schedule: Items and Out are None constexprs), or with the
        batch `schedule` (m_blocks, items): Items (its table) and Out (the output) are runtime pointers,
        total_rows the M = q_len x heads rows of one request (kernels/fast/portable.py's _split_program)."""
        sig = {**self.signature(w, cfg), **_arg_types(w, cfg)}
        if schedule is None:
            grid, sched, total_rows = (rows.m_blocks, splits, w.batch), dict(Items=None, Out=None), w.batch * rows.m
        else:
            grid, total_rows = (rows.m_blocks, len(schedule.items), 1), rows.m
            sig, sched = {**sig, "Items": "*i32", "Out": POINTER[w.dtype]}, {}
        return LaunchSpec(
            name=self.kernel,
            target=self.target,
            grid=grid,
            signature=sig,
            constexprs={**self.constexprs(w, cfg, rows), **sched, "ITEMS": schedule is not None},
            num_warps=self.num_warps(cfg, rows),
            num_stages=cfg.num_stages,
            int_args={
                "split_len": split_len,
                "stride_pt": cdiv(w.max_kv_len, w.page_size),
                "total_rows": total_rows,
            },
            tuples={"args": SPLIT_ARGS},
        )

    def launch(self, inp, spec: LaunchSpec, part_o, part_lse, items=None, out=None, stamps=None) -> None:
        """Run the kernel as `spec` says, writing the splits' partials (with the batch schedule: `items`, its
        table on the device, and `out`, where a request's only item writes; `stamps`: the Gluon kernels'
        in-kernel timeline buffer and tile count, kernels/fast/timeline.py)."""
        extra = {} if stamps is None else {"stamps": stamps}
        import_module(self.module).launch(inp, spec, part_o, part_lse, items, out, **extra)


class TritonSplit(SplitPath):
    """The Triton split kernels (kernels/fast/portable.py's _split_program): no_mma pipelines their loads
    over NO_MMA_STAGES."""

    def check_cuts(self, cfg):
        super().check_cuts(cfg)
        if cfg.no_mma and cfg.num_stages != NO_MMA_STAGES:
            raise ValueError(
                f"no_mma in {self.kernel} pipelines the tile loads over {NO_MMA_STAGES} stages, "
                f"the launch's num_stages is {cfg.num_stages}: launch it with num_stages={NO_MMA_STAGES}"
            )


# The split kernels' launch ABI: (Q, [KLat, KPe,] args, constexprs...), `args` one tuple of these, in this order
# (Triton flattens it: the compiled kernel's parameters are Q, KLat, KPe, KV, ..., Out). The TMA descriptors stay
# parameters of their own: Triton 3.6's launcher expands a descriptor only at the top level.
SPLIT_ARGS = (
    "KV",
    "PageTable",
    "KVLens",
    "TreeMask",
    "PartO",
    "PartLse",
    "qk_scale",
    "split_len",
    "stride_pt",
    "total_rows",
    "Items",
    "Out",
)


def _arg_types(w: VerifyWorkload, cfg: FastConfig) -> dict[str, str]:
    """The types of SPLIT_ARGS' but the batch schedule's (Items and Out: runtime pointers only with it)."""
    part_o = "*fp32" if cfg.partials == "fp32" else POINTER[w.dtype]
    return {
        "KV": POINTER[w.dtype],
        "PageTable": "*i32",
        "KVLens": "*i32",
        "TreeMask": "*i8",
        "PartO": part_o,
        "PartLse": "*fp32",
        "qk_scale": "fp32",
        "split_len": "i32",
        "stride_pt": "i32",
        "total_rows": "i32",
    }


def _descriptors(w: VerifyWorkload, block_n: int, lat_cols: int) -> dict[str, str]:
    """TMA descriptors of the KV cache's latent part (boxes `lat_cols` wide) and rope part."""
    dt = w.dtype
    return {"KLat": f"tensordesc<{dt}[{block_n},{lat_cols}]>", "KPe": f"tensordesc<{dt}[{block_n},{w.rope_dim}]>"}


class Portable(TritonSplit):
    """Triton, every architecture and the interpreter: per-thread address gathers through the page table."""

    path, kernel, module = "portable", "_fast_split_kernel", "kernels.fast.portable"
    cuts = ("no_mma", "no_softmax")
    no_cut = "its every tile load is a gather through the page table"

    def constexprs(self, w, cfg, rows):
        return {**super().constexprs(w, cfg, rows), "EVICT": "evict_first" if cfg.evict_first else ""}


class Hopper(TritonSplit):
    """Triton with TMA tensor descriptors (sm_90, page_size a multiple of block_n)."""

    path, kernel, module = "hopper", "_hopper_split_kernel", "kernels.fast.hopper"
    cuts = CUTS  # no_gather: the gathers of the partial tile and the draft tokens

    def check(self, w, cfg):
        if w.page_size % cfg.block_n:
            raise ValueError(f"the hopper path needs page_size a multiple of block_n={cfg.block_n}, got {w.page_size}")

    def signature(self, w, cfg):
        return {"Q": POINTER[w.dtype], **_descriptors(w, cfg.block_n, w.v_dim)}


class GluonPath(SplitPath):
    """The Gluon kernels (sm_90): 64-row M blocks in warpgroups of 4 warps, the draft tree as 64 bits a
    row. Rows past the last whole block (at most tail_m) go to a tail warpgroup (gluon_tail_rows), by
    default only where the plan still gives each split GLUON_TAIL_MIN_SPLIT_LEN tokens."""

    path = "gluon"

    def check(self, w, cfg):
        if cfg.block_m != 64 or cfg.block_n != 64 or cfg.num_warps != 8 or cfg.evict_first or cfg.tail_m not in (0, 8):
            raise ValueError(
                "the gluon path has 64-row M blocks, 64-token tiles, 2 main warpgroups (num_warps 8), "
                "no evict_first, tail_m 0 or 8"
            )
        if w.q_len > 64:
            raise ValueError(f"the gluon path keeps a row's draft-tree mask in 64 bits: q_len <= 64, got {w.q_len}")

    def rows(self, w, cfg, plan_split_len):
        m = w.q_len * w.heads
        tail_m = gluon_tail_rows(m, cfg.block_m, cfg.tail_m)
        if tail_m and plan_split_len is not None:  # by default: only with long splits
            tail_m = tail_m if plan_split_len(m // cfg.block_m) >= GLUON_TAIL_MIN_SPLIT_LEN else 0
        return Rows(cfg.block_m, tail_m, m // cfg.block_m if tail_m else cdiv(m, cfg.block_m), m)

    def signature(self, w, cfg):
        return {"Q": POINTER[w.dtype], **_descriptors(w, cfg.block_n, self.lat_cols(w))}

    def lat_cols(self, w: VerifyWorkload) -> int:
        """The width of a latent TMA box: all of the latent dims."""
        return w.v_dim

    def num_warps(self, cfg, rows):  # the tail warpgroup is 4 more
        return cfg.num_warps + (4 if rows.tail_m else 0)


class Seesaw(GluonPath):
    """Warp-specialised, pairs of tiles; latent tiles in SEESAW_SLICE-wide slices. A Gluon kernel's
    num_warps constexpr is its first partition's: 4 (a second runs 4 more, a tail a third 4). Its
    removal experiments (no_mma, no_softmax, no_gather) are compile-time switches."""

    kernel, module = "_gluon_seesaw_kernel", "kernels.fast.seesaw"
    cuts = CUTS

    def lat_cols(self, w):
        return min(SEESAW_SLICE, w.v_dim)

    def constexprs(self, w, cfg, rows):
        if cfg.stagger and rows.tail_m:
            raise ValueError("stagger needs the rows in 64-row blocks, whole or padded, without a tail warpgroup")
        ahead = {"SCORES_AHEAD": True} if cfg.stagger and cfg.scores_ahead else {}
        return {**super().constexprs(w, cfg, rows), "num_warps": 4, "STAGGER": bool(cfg.stagger), **ahead}


class Ring(Seesaw):
    """The seesaw's per-tile variant (ring=True), where there is a tail warpgroup, and where the rows are
    whole 64-row blocks (ring_whole: the third warpgroup only loads); other rows go to the seesaw. The
    seesaw's removal experiments."""

    kernel, module = "_gluon_ring_kernel", "kernels.fast.ring"

    def for_rows(self, rows, cfg):
        if cfg.stagger and not rows.tail_m:  # the seesaw kernel's staggered schedule
            return SEESAW
        padded = not rows.tail_m and not rows.whole
        return self if rows.tail_m or (cfg.ring_whole and rows.whole) or (cfg.ring_padded and padded) else SEESAW

    def num_warps(self, cfg, rows):  # the tail warpgroup, also where it only loads (ring_whole)
        return cfg.num_warps + 4

    def constexprs(self, w, cfg, rows):
        seesaw_only = ("STAGGER", "SCORES_AHEAD")
        c = {k: v for k, v in super().constexprs(w, cfg, rows).items() if k not in seesaw_only}
        return {
            **c,
            "TAIL_M": rows.tail_m or 8,  # whole or padded blocks: the tail's buffers, unused by a producer-only tail
            "ASYNC_GATHER": bool(cfg.async_gather),
            "TAIL_ROWS": bool(rows.tail_m),
        }


PORTABLE, HOPPER, SEESAW, RING = Portable(), Hopper(), Seesaw(), Ring()
SPLIT_PATHS = (PORTABLE, HOPPER, SEESAW, RING)
# Every GPU kernel triton_mla_fast may launch, as ncu names them (kernels.registry lists them).
DEVICE_KERNELS = tuple(p.kernel for p in SPLIT_PATHS) + ("_combine_kernel",)


def _split_path(path: str, cfg: FastConfig) -> SplitPath:
    if path == "portable":
        return PORTABLE
    if path == "hopper":
        return HOPPER
    return RING if cfg.ring else SEESAW


@dataclass(frozen=True)
class FastPlan:
    """triton_mla_fast for one workload: its split path, the config, the split launch and the combine (None
    where the batch schedule cut no request: every item wrote its request's output; and with no_combine), and the
    batch schedule (None: the uniform one)."""

    path: SplitPath
    config: FastConfig
    split: LaunchSpec
    combine: LaunchSpec | None
    schedule: BatchSchedule | None = None

    @property
    def launches(self) -> list[LaunchSpec]:
        return [self.split] + ([self.combine] if self.combine is not None else [])


def plan_fast(
    w: VerifyWorkload,
    arch: str = "sm_90",
    sm_count: int = 132,
    device_name: str | None = None,
    split_len: int | None = None,
    min_split_len: int = FAST_MIN_SPLIT_LEN,
    path: str | None = None,
    **launch,
) -> FastPlan:
    """The split path of `path` (default: kernels.plan.code_path on `arch`), its config (`launch`
    over the path's defaults: kernels.fast.common.resolve_config), the split plan (schedule "batch": the
    batch's tokens cut into work items to fill `sm_count` SMs, kernels.fast.common.plan_batch; "uniform":
    every request cut into splits of one split_len, plan_splits) and both launches."""
    name = path or code_path("triton_mla_fast", arch, w.page_size, w.max_kv_len)
    cfg = resolve_config(name, arch, w.heads, w.page_size, device_name, launch)
    split_path = _split_path(name, cfg)
    split_path.check(w, cfg)
    block_n = cfg.block_n
    batches: dict[int, BatchSchedule] = {}
    # The batch schedule where the requests differ in length; equal requests (batch 1 too) are cut alike either
    # way, and launched as the uniform schedule launches them (no item table; at batch 1 the same code as before).
    items = cfg.schedule == "batch" and ragged(w)

    def split_plan(m_blocks: int) -> tuple[int, int, BatchSchedule | None]:
        """(split_len, splits, schedule) for `m_blocks`: the batch schedule (plan_batch; splits: its items), or
        the uniform one (the caller's split_len in whole tiles, else plan_splits')."""
        if items:
            if m_blocks not in batches:
                batches[m_blocks] = plan_batch(
                    w.kv_lens, w.q_len, m_blocks, sm_count, max(min_split_len, block_n), cfg, split_len
                )
            s = batches[m_blocks]
            return s.split_len, len(s.items), s
        if split_len is None:
            return (
                *plan_splits(
                    w.max_kv_len,
                    w.batch,
                    m_blocks,
                    sm_count,
                    block_n,
                    cfg.programs_per_sm,
                    max(min_split_len, block_n),
                ),
                None,
            )
        tiled = cdiv(split_len, block_n) * block_n
        return tiled, cdiv(w.max_kv_len, tiled), None

    rows = split_path.rows(w, cfg, None if "tail_m" in launch else lambda m_blocks: split_plan(m_blocks)[0])
    asked_ring = launch.get("ring_padded") and not rows.whole  # the ring asked for by name for padded blocks
    if cfg.stagger and "stagger" not in launch and (rows.tail_m or w.page_size < cfg.block_n or asked_ring):
        # the default only where it applies and was measured faster (64-row blocks, whole or padded, in pages of
        # whole tiles: at page 1 it lost)
        cfg = replace(cfg, stagger=False)
    if cfg.stagger and "scores_ahead" not in launch:  # by default where the MMAs bound it (SCORES_AHEAD_MIN_BLOCKS)
        cfg = replace(cfg, scores_ahead=rows.m_blocks >= SCORES_AHEAD_MIN_BLOCKS)
    if (
        cfg.ring and items and w.batch >= RING_PADDED_MIN_BATCH and "ring_padded" not in launch and not cfg.ring_padded
    ):  # serving batches: the ring for padded blocks too (measured: kernels/fast/common.py, RING_PADDED_MIN_BATCH)
        cfg = replace(cfg, ring_padded=True)
    split_path = split_path.for_rows(rows, cfg)
    split_path.check_cuts(cfg)
    tokens, splits, schedule = split_plan(rows.m_blocks)
    split = split_path.spec(w, cfg, rows, tokens, splits, schedule)
    part_o, pdl = split.signature["PartO"], pdl_arch(arch)
    if schedule is None:
        combine = combine_spec(splits, w.batch * rows.m, w.v_dim, part_o=part_o, pdl=pdl)
    elif schedule.jobs:
        combine = combine_jobs_spec(schedule.jobs, rows.m, w.v_dim, part_o=part_o, pdl=pdl)
    else:
        combine = None
    combine = with_out_dtype(combine, w.dtype) if combine is not None and not cfg.no_combine else None
    return FastPlan(split_path, cfg, split, combine, schedule)


def ragged(w: VerifyWorkload) -> bool:
    """Whether the batch's requests differ in length (the batch schedule's case)."""
    return w.ctx_lens is not None and len(set(w.ctx_lens)) > 1


def fast_specs(w: VerifyWorkload, arch: str = "sm_90", sm_count: int = 132, **plan) -> list[LaunchSpec]:
    """triton_mla_fast's launches for `w` on `arch`: its split kernel, then the combine where there is one
    (`plan`: plan_fast's other keywords)."""
    return plan_fast(w, arch, sm_count, **plan).launches
