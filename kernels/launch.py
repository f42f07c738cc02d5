"""What each Triton kernel launches, in plain Python (no torch, no triton): one `LaunchSpec` per
jit function a kernel runs, for a workload on an architecture.

The kernels' own launchers take grid, constexprs, num_warps, num_stages (and the split plan) from
these functions, and `roofline compile` cross-compiles exactly these specs, so the two cannot
drift apart. `signature` lists every runtime argument in the jit function's order with the
Triton type it gets at run time (pointers with the workload's dtype); `int_args` holds the values
of integer arguments that follow from the workload (strides, row counts, split lengths), which
Triton specializes on (1 becomes a constant, multiples of 16 get a divisibility hint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from importlib import import_module

from kernels.plan import (DECODE_BLOCK_H, DECODE_KV_SPLITS, EXTEND_BLOCK_M, FAST_DEFAULTS, FAST_MIN_SPLIT_LEN,
                          GLUON_CONFIG, GLUON_TAIL_MIN_SPLIT_LEN, SEESAW_SLICE, cdiv,
                          code_path, gluon_tail_rows, normalise_arch, plan_splits, split_rows)
from kernels.plan import fast_launch_config as arch_fast_config
from kernels.spec import VerifyWorkload
from kernels.tuned import tuned_config

ARCHS = ("sm_90", "sm_100", "sm_120")
FAST_PATHS = ("portable", "hopper", "gluon")  # triton_mla_fast's split kernels (kernels.plan.code_path picks)
POINTER = {"bf16": "*bf16", "fp16": "*fp16", "fp32": "*fp32"}


@dataclass(frozen=True)
class LaunchSpec:
    name: str  # the @triton.jit function's name, as ncu reports it
    target: str  # "module:attribute" of the jit function (imported only to compile or run it)
    grid: tuple[int, ...]
    signature: dict[str, str]  # runtime arguments in order -> Triton type ("*bf16", "i32", "fp32")
    constexprs: dict[str, int | str]
    num_warps: int
    num_stages: int
    int_args: dict[str, int] = field(default_factory=dict)

    def key(self) -> tuple:
        """Everything that decides the compiled code and the grid, as a hashable tuple."""
        return (self.target, self.grid, tuple(self.signature.items()), tuple(sorted(self.constexprs.items())),
                tuple(sorted(self.int_args.items())), self.num_warps, self.num_stages)

    def __hash__(self) -> int:
        return hash(self.key())

    @property
    def programs(self) -> int:
        n = 1
        for g in self.grid:
            n *= g
        return n

    @property
    def threads(self) -> int:
        return 32 * self.num_warps

    def load(self):
        module, attr = self.target.split(":")
        return getattr(import_module(module), attr)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


# --- the fast kernel's launch parameters per architecture --------------------------------------
# kernels.plan.ARCH_FAST_CONFIGS holds them (issue 11 item 3): sm_90 as measured on the H200,
# sm_100 and sm_120 chosen to fit their limits, untuned. FAST_ARCH_CONFIGS: the config each
# architecture gets at 8 heads, page size 1 (for tables and tests).
FAST_ARCH_CONFIGS = {arch: arch_fast_config(arch, 8, 1) for arch in ARCHS}
# The GPU whose tuned entries (kernels/data/tuned.json) an architecture uses when the running GPU
# has none of its own. Only Hopper has measured entries; nothing Hopper-tuned reaches sm_100/sm_120.
TUNED_REFERENCE = {"sm_90": "NVIDIA H200"}


def fast_launch_config(arch: str, heads: int, page_size: int, device_name: str | None = None) -> dict:
    """triton_mla_fast's launch parameters on `arch` (kernels.plan.FAST_DEFAULTS keys): the running
    GPU's tuned entry, else its architecture's reference GPU's, over kernels.plan's arch config."""
    tuned = tuned_config("triton_mla_fast", device_name, heads, page_size) if device_name else {}
    if not tuned and arch in TUNED_REFERENCE:
        tuned = tuned_config("triton_mla_fast", TUNED_REFERENCE[arch], heads, page_size)
    return {**arch_fast_config(arch, heads, page_size), **tuned}


# triton_mla's key tile per architecture, as SGLang's extend kernel picks it for MLA (Lq = 576 > 256):
# (32, 64) on sm_90 and sm_100; 64-token tiles need 128 KB of shared memory, more than sm_120's
# 99 KB per block, so sm_120 takes (32, 32): SGLang's extend_attention.py picks it for capability 12
# ("sm120 workstation Blackwell ... smaller shared memory") at Lq > 256, as on the 100 KB-shared sm_86/sm_89.
EXTEND_BLOCK_N = {"sm_90": 64, "sm_100": 64, "sm_120": 32}


def device_facts(device) -> tuple[str, int, str]:
    """(name, SM count, "sm_XY") of a torch device; the CPU interpreter is sized as an H100/H200."""
    return _device_facts(str(device))


@lru_cache(maxsize=None)
def _device_facts(device: str) -> tuple[str, int, str]:
    import torch  # only a launcher calls this, with torch already loaded

    dev = torch.device(device)
    if dev.type != "cuda":
        return "cpu", 132, "sm_90"
    props = torch.cuda.get_device_properties(dev)
    return props.name, props.multi_processor_count, f"sm_{props.major}{props.minor}"


# --- one function per kernel ----------------------------------------------------------------------

def pdl_arch(arch: str) -> bool:
    """Whether `arch` has programmatic dependent launch (sm_90 and later)."""
    try:
        return int(normalise_arch(arch).removeprefix("sm_")) >= 90
    except ValueError:
        return False


def combine_spec(splits: int, rows: int, v_dim: int, block_d: int | None = None, block_s: int | None = None,
                 part_o: str = "*fp32", num_warps: int = 4, pdl: bool = False) -> LaunchSpec:
    """kernels/combine.py: one program per (row, BLOCK_D columns); part_o: the partials' type.
    BLOCK_S splits are read per step (default: all of them, up to 256, so one round trip to memory),
    BLOCK_D columns (default: 64, fewer past 128 splits so that a step holds 8,192 values).
    pdl: launched as a programmatic dependent launch (the launcher drops it where the device has none)."""
    block_s = block_s or min(next_power_of_2(splits), 256)
    block_d = min(block_d or max(16, min(64, 8192 // block_s)), v_dim)
    return LaunchSpec(
        name="_combine_kernel", target="kernels.combine:_combine_kernel", grid=(rows, cdiv(v_dim, block_d)),
        signature={"PartO": part_o, "PartLse": "*fp32", "Out": "*bf16", "total_rows": "i32", "num_splits": "i32"},
        constexprs=dict(D=v_dim, BLOCK_D=block_d, BLOCK_S=block_s, PDL=pdl), num_warps=num_warps, num_stages=3,
        int_args={"total_rows": rows, "num_splits": splits})


def _with_out_dtype(spec: LaunchSpec, dtype: str) -> LaunchSpec:
    return LaunchSpec(**{**spec.__dict__, "signature": {**spec.signature, "Out": POINTER[dtype]}})


def extend_specs(w: VerifyWorkload, arch: str = "sm_90", sm_count: int | None = None, block_m: int = EXTEND_BLOCK_M,
                 block_n: int | None = None, num_warps: int = 8, num_stages: int = 1) -> list[LaunchSpec]:
    """triton_mla: grid (batch, heads, q blocks), one kernel. block_n: EXTEND_BLOCK_N for `arch`."""
    block_n = block_n or EXTEND_BLOCK_N.get(arch, 64)
    p = POINTER[w.dtype]
    return [LaunchSpec(
        name="_verify_extend_kernel", target="kernels.triton_mla:_verify_extend_kernel",
        grid=(w.batch, w.heads, cdiv(w.q_len, block_m)),
        signature={"Q": p, "KV": p, "TokenSlots": "*i32", "KVIndptr": "*i32", "TreeMask": "*i8", "Out": p,
                   "qk_scale": "fp32", "stride_qt": "i32", "stride_qh": "i32", "stride_kv": "i32",
                   "stride_ot": "i32", "stride_oh": "i32"},
        constexprs=dict(Q_LEN=w.q_len, D_LATENT=w.v_dim, D_ROPE=w.rope_dim, BLOCK_M=block_m, BLOCK_N=block_n,
                        BLOCK_Q=max(16, next_power_of_2(w.q_len))),
        num_warps=num_warps, num_stages=num_stages,
        int_args={"stride_qt": w.heads * w.head_dim, "stride_qh": w.head_dim, "stride_kv": w.head_dim,
                  "stride_ot": w.heads * w.v_dim, "stride_oh": w.v_dim})]


def decode_specs(w: VerifyWorkload, arch: str = "sm_90", sm_count: int | None = None,
                 kv_splits: int = DECODE_KV_SPLITS, block_h: int = DECODE_BLOCK_H, block_n: int = 32,
                 num_warps: int = 4, num_stages: int = 2) -> list[LaunchSpec]:
    """triton_mla_decode: split-KV stage 1 over every draft row, then the combine kernel."""
    if kv_splits < 1:
        raise ValueError(f"kv_splits must be >= 1, got {kv_splits}")
    p = POINTER[w.dtype]
    total_rows = w.batch * w.q_len * w.heads
    stage1 = LaunchSpec(
        name="_decode_stage1", target="kernels.triton_mla_decode:_decode_stage1",
        grid=(w.batch * w.q_len, cdiv(w.heads, block_h), kv_splits),
        signature={"Q": p, "KV": p, "TokenSlots": "*i32", "KVIndptr": "*i32", "TreeMask": "*i8",
                   "PartO": "*fp32", "PartLse": "*fp32", "qk_scale": "fp32", "stride_qt": "i32",
                   "stride_qh": "i32", "stride_kv": "i32", "total_rows": "i32"},
        constexprs=dict(HEADS=w.heads, Q_LEN=w.q_len, D_LATENT=w.v_dim, D_ROPE=w.rope_dim, BLOCK_H=block_h,
                        BLOCK_N=block_n, KV_SPLITS=kv_splits),
        num_warps=num_warps, num_stages=num_stages,
        int_args={"stride_qt": w.heads * w.head_dim, "stride_qh": w.head_dim, "stride_kv": w.head_dim,
                  "total_rows": total_rows})
    return [stage1, _with_out_dtype(combine_spec(kv_splits, total_rows, w.v_dim, pdl=pdl_arch(arch)), w.dtype)]


def fast_specs(w: VerifyWorkload, arch: str = "sm_90", sm_count: int = 132, device_name: str | None = None,
               split_len: int | None = None, min_split_len: int = FAST_MIN_SPLIT_LEN, path: str | None = None,
               **launch) -> list[LaunchSpec]:
    """triton_mla_fast: the split kernel of its code path (kernels.plan.code_path on `arch`, or
    `path`), its split plan in int_args['split_len'], then the combine.

    Launch parameters: `launch`, else fast_launch_config(arch, heads, page_size, device_name)."""
    unknown = set(launch) - set(FAST_DEFAULTS)
    if unknown:
        raise TypeError(f"triton_mla_fast: unknown launch parameters {sorted(unknown)}")
    max_kv = w.max_kv_len  # closed form: no per-request list at any batch
    path = path or code_path("triton_mla_fast", arch, w.page_size, max_kv)
    if path not in FAST_PATHS:
        raise ValueError(f"triton_mla_fast: unknown path {path!r}; known: {', '.join(FAST_PATHS)}")
    # The Triton kernels take the architecture's (and the GPU's tuned) configs; Gluon its own.
    base = GLUON_CONFIG if path == "gluon" else fast_launch_config(arch, w.heads, w.page_size, device_name)
    cfg = {**FAST_DEFAULTS, **base, **launch}
    if path == "gluon" and not cfg["seesaw"]:  # GLUON_CONFIG's tail and ring are the seesaw schedule's
        cfg.update({k: off for k, off in (("tail_m", 0), ("ring", False)) if k not in launch})
    if not cfg["ring"] and "async_gather" not in launch:  # GLUON_CONFIG's async_gather is the ring's
        cfg["async_gather"] = False
    if cfg["partials"] not in ("fp32", "input"):
        raise ValueError(f"triton_mla_fast: partials must be 'fp32' or 'input', got {cfg['partials']!r}")
    block_n = cfg["block_n"]
    if path == "hopper" and w.page_size % block_n:
        raise ValueError(f"the hopper path needs page_size a multiple of block_n={block_n}, got {w.page_size}")
    m = w.q_len * w.heads
    if cfg["seesaw"] and path != "gluon":
        raise ValueError("seesaw is a schedule of the gluon path")
    if cfg["ring"] and not (path == "gluon" and cfg["seesaw"]):
        raise ValueError("ring is a variant of the gluon path's seesaw schedule")
    if cfg["async_gather"] and not cfg["ring"]:
        raise ValueError("async_gather is an option of the ring schedule (ring=True)")
    if path == "gluon" and (cfg["block_m"] != 64 or cfg["evict_first"]
                            or cfg["num_warps"] % 4 or (cfg["seesaw"] and (cfg["num_warps"] != 8 or block_n != 64))
                            or cfg["tail_m"] not in ((0, 8) if cfg["seesaw"] else (0,))):
        raise ValueError("the gluon path has 64-row M blocks, no evict_first, warpgroups of 4 warps "
                         "(seesaw: 2 warpgroups, 64-token tiles, tail_m 0 or 8)")
    if path == "gluon" and w.q_len > 64:
        raise ValueError(f"the gluon path keeps a row's draft-tree mask in 64 bits: q_len <= 64, got {w.q_len}")
    if path == "gluon":  # rows past the last whole M block (at most tail_m) go to the tail warpgroup
        block_m, tail_m = cfg["block_m"], gluon_tail_rows(m, cfg["block_m"], cfg["tail_m"])
        if tail_m and "tail_m" not in launch:  # by default: only with long splits
            tail_split = cdiv(split_len, block_n) * block_n if split_len else plan_splits(
                max_kv, w.batch, m // block_m, sm_count, block_n, cfg["programs_per_sm"],
                max(min_split_len, block_n))[0]
            tail_m = tail_m if tail_split >= GLUON_TAIL_MIN_SPLIT_LEN else 0
        m_blocks = m // block_m if tail_m else cdiv(m, block_m)
    else:
        block_m, tail_m = split_rows(m, cfg["block_m"], cfg["tail_m"])
        m_blocks = 1 if tail_m else cdiv(m, block_m)
    if split_len is None:
        split_len, splits = plan_splits(max_kv, w.batch, m_blocks, sm_count, block_n, cfg["programs_per_sm"],
                                        max(min_split_len, block_n))
    else:
        split_len = cdiv(split_len, block_n) * block_n
        splits = cdiv(max_kv, split_len)
    total_rows = w.batch * m
    p = POINTER[w.dtype]
    part_o = "*fp32" if cfg["partials"] == "fp32" else p
    tail = {"PageTable": "*i32", "KVLens": "*i32", "TreeMask": "*i8", "PartO": part_o, "PartLse": "*fp32",
            "qk_scale": "fp32", "split_len": "i32", "stride_pt": "i32", "total_rows": "i32"}
    constexprs = dict(HEADS=w.heads, Q_LEN=w.q_len, PAGE_SIZE=w.page_size, D_LATENT=w.v_dim, D_ROPE=w.rope_dim,
                      BLOCK_M=block_m, BLOCK_N=block_n, TAIL_M=tail_m)
    dt = p.removeprefix("*")
    descs = {"KLat": f"tensordesc<{dt}[{block_n},{w.v_dim}]>", "KPe": f"tensordesc<{dt}[{block_n},{w.rope_dim}]>"}
    if path == "hopper":  # KV tiles by TMA: one descriptor per part of a token (latent, rope)
        name, target = "_hopper_split_kernel", "kernels.triton_mla_fast_hopper:_hopper_split_kernel"
        signature = {"Q": p, **descs, "KV": p, **tail}
    elif path == "gluon":  # the same descriptors, a hand-written schedule (kernels/triton_mla_fast_gluon.py)
        name = "_gluon_seesaw_kernel" if cfg["seesaw"] else "_gluon_split_kernel"
        target = f"kernels.triton_mla_fast_gluon:{name}"
        # The per-tile schedule (same arguments) where there is a tail warpgroup.
        if cfg["ring"] and tail_m:
            name, target = "_gluon_ring_kernel", "kernels.triton_mla_fast_ring:_gluon_ring_kernel"
            constexprs["ASYNC_GATHER"] = bool(cfg["async_gather"])
        if cfg["seesaw"]:  # its tiles arrive in slices of the latent dims
            descs["KLat"] = f"tensordesc<{dt}[{block_n},{min(SEESAW_SLICE, w.v_dim)}]>"
        signature = {"Q": p, **descs, "KV": p, **tail}
        # num_warps is a Gluon kernel's own constexpr. The seesaw one runs 4 more warps in its second
        # partition (and 4 more in a third with TAIL_M) and holds one tile buffer per warpgroup
        # instead of a NUM_STAGES ring.
        if cfg["seesaw"]:
            constexprs["num_warps"] = 4
        else:
            del constexprs["TAIL_M"]
            constexprs.update(NUM_STAGES=cfg["num_stages"], num_warps=cfg["num_warps"])
    else:
        name, target = "_fast_split_kernel", "kernels.triton_mla_fast:_fast_split_kernel"
        signature = {"Q": p, "KV": p, **tail}
        constexprs["EVICT"] = "evict_first" if cfg["evict_first"] else ""
    split = LaunchSpec(
        name=name, target=target, grid=(m_blocks, splits, w.batch), signature=signature, constexprs=constexprs,
        num_warps=cfg["num_warps"] + (4 if path == "gluon" and tail_m else 0), num_stages=cfg["num_stages"],
        int_args={"split_len": split_len, "stride_pt": cdiv(max_kv, w.page_size), "total_rows": total_rows})
    combine = combine_spec(splits, total_rows, w.v_dim, part_o=part_o, pdl=pdl_arch(arch))
    return [split, _with_out_dtype(combine, w.dtype)]


SPECS = {"triton_mla": extend_specs, "triton_mla_decode": decode_specs, "triton_mla_fast": fast_specs}


GRAPH_SUFFIX = "_graph"  # kernels.graph: a `K_graph` kernel replays K's launches as one CUDA graph


def launch_specs(kernel: str, w: VerifyWorkload, arch: str, sm_count: int = 132) -> list[LaunchSpec]:
    """Every Triton launch of registered kernel `kernel` for `w` on `arch`, in launch order (a `*_graph`
    kernel: the launches its graph replays)."""
    if kernel.endswith(GRAPH_SUFFIX) and kernel.removesuffix(GRAPH_SUFFIX) in SPECS:
        kernel = kernel.removesuffix(GRAPH_SUFFIX)
    if kernel not in SPECS:
        raise KeyError(f"{kernel} launches no Triton kernel; Triton kernels: {', '.join(SPECS)} (and their _graph forms)")
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}")
    return SPECS[kernel](w, arch=arch, sm_count=sm_count)
