"""What each Triton kernel launches, in plain Python (no torch, no triton): one `LaunchSpec`
(kernels.launch_spec) per jit function a kernel runs, for a workload on an architecture.

The kernels' own launchers take grid, constexprs, num_warps, num_stages (and the split plan) from
these functions, and `roofline compile` cross-compiles exactly these specs, so the two cannot
drift apart. The fast kernel's specs are its paths' own (kernels/fast/paths.py).
"""

from __future__ import annotations

from kernels.fast.paths import fast_specs
from kernels.launch_spec import ARCHS, POINTER, LaunchSpec, combine_spec, next_power_of_2, pdl_arch, with_out_dtype
from kernels.plan import DECODE_BLOCK_H, DECODE_KV_SPLITS, EXTEND_BLOCK_M, cdiv
from kernels.spec import VerifyWorkload

# triton_mla's tiles per architecture, (BLOCK_M, BLOCK_N) at 8 warps and 1 stage, as SGLang's extend kernel
# (extend_attention.py) picks them for MLA (Lq = 576 > 256): its Hopper tile (32, 64) on sm_90 and sm_100.
# For capability 12 ("sm120 workstation Blackwell ... smaller shared memory") SGLang picks (32, 32), but
# under Triton 3.6 that tile asks for 102,400 B of shared memory per block, 1 KB over sm_120's 101,376 B.
# So sm_120 takes BLOCK_M = 16 (83,968 B, q_len up to 32): the KV tile (BLOCK_N = 32) and the walk over the
# prefix are SGLang's, and up to 16 draft rows the grid is too; only the padded query rows halve.
# EXTEND_DEPARTURES says so wherever the configuration is shown (`roofline compile`).
EXTEND_BLOCKS = {"sm_90": (EXTEND_BLOCK_M, 64), "sm_100": (EXTEND_BLOCK_M, 64), "sm_120": (16, 32)}
EXTEND_DEPARTURES = {
    "sm_120": (
        "triton_mla on sm_120 departs from SGLang: BLOCK_M=16, BLOCK_N=32 (SGLang: (32, 32) for capability 12, "
        "(32, 64) on Hopper); SGLang's (32, 32) needs 102,400 B of shared memory per block under Triton 3.6, "
        "over sm_120's 101,376 B. Up to 16 draft rows the grid and the KV walk are SGLang's."
    )
}


# --- what triton_mla's two kernels (extend, decode) read alike ------------------------------------


def _inputs(p: str) -> dict[str, str]:
    """The signature of the inputs: queries and the flat KV cache (pointer type `p`), each request's
    token slots and row pointers, the draft-tree mask."""
    return {"Q": p, "KV": p, "TokenSlots": "*i32", "KVIndptr": "*i32", "TreeMask": "*i8"}


def _input_strides(w: VerifyWorkload) -> dict[str, int]:
    """The query's token and head strides and the KV cache's token stride (elements)."""
    return {"stride_qt": w.heads * w.head_dim, "stride_qh": w.head_dim, "stride_kv": w.head_dim}


def _shape(w: VerifyWorkload) -> dict[str, int]:
    """The constexprs of the workload's shape: draft rows per request, latent and rope dims."""
    return dict(Q_LEN=w.q_len, D_LATENT=w.v_dim, D_ROPE=w.rope_dim)


# --- one function per kernel ----------------------------------------------------------------------


def extend_specs(
    w: VerifyWorkload,
    arch: str = "sm_90",
    sm_count: int | None = None,
    block_m: int | None = None,
    block_n: int | None = None,
    num_warps: int = 8,
    num_stages: int = 1,
    no_mma: bool = False,
    no_softmax: bool = False,
) -> list[LaunchSpec]:
    """triton_mla: grid (batch, heads, q blocks), one kernel. block_m, block_n: EXTEND_BLOCKS for `arch`
    (the sm_90 tile elsewhere); no_mma, no_softmax: its removal experiments (kernels/triton_mla.py)."""
    default_m, default_n = EXTEND_BLOCKS.get(arch, EXTEND_BLOCKS["sm_90"])
    block_m, block_n = block_m or default_m, block_n or default_n
    p = POINTER[w.dtype]
    return [
        LaunchSpec(
            name="_verify_extend_kernel",
            target="kernels.triton_mla:_verify_extend_kernel",
            grid=(w.batch, w.heads, cdiv(w.q_len, block_m)),
            signature={
                **_inputs(p),
                "Out": p,
                "qk_scale": "fp32",
                **dict.fromkeys(_input_strides(w), "i32"),
                "stride_ot": "i32",
                "stride_oh": "i32",
            },
            constexprs=dict(
                **_shape(w),
                BLOCK_M=block_m,
                BLOCK_N=block_n,
                BLOCK_Q=max(16, next_power_of_2(w.q_len)),
                NO_MMA=no_mma,
                NO_SOFTMAX=no_softmax,
            ),
            num_warps=num_warps,
            num_stages=num_stages,
            int_args={**_input_strides(w), "stride_ot": w.heads * w.v_dim, "stride_oh": w.v_dim},
        )
    ]


def decode_specs(
    w: VerifyWorkload,
    arch: str = "sm_90",
    sm_count: int | None = None,
    kv_splits: int = DECODE_KV_SPLITS,
    block_h: int = DECODE_BLOCK_H,
    block_n: int = 32,
    num_warps: int = 4,
    num_stages: int = 2,
) -> list[LaunchSpec]:
    """triton_mla_decode: split-KV stage 1 over every draft row, then the combine kernel."""
    if kv_splits < 1:
        raise ValueError(f"kv_splits must be >= 1, got {kv_splits}")
    p = POINTER[w.dtype]
    total_rows = w.batch * w.q_len * w.heads
    stage1 = LaunchSpec(
        name="_decode_stage1",
        target="kernels.triton_mla_decode:_decode_stage1",
        grid=(w.batch * w.q_len, cdiv(w.heads, block_h), kv_splits),
        signature={
            **_inputs(p),
            "PartO": "*fp32",
            "PartLse": "*fp32",
            "qk_scale": "fp32",
            **dict.fromkeys(_input_strides(w), "i32"),
            "total_rows": "i32",
        },
        constexprs=dict(
            HEADS=w.heads,
            **_shape(w),
            BLOCK_H=block_h,
            BLOCK_N=block_n,
            KV_SPLITS=kv_splits,
        ),
        num_warps=num_warps,
        num_stages=num_stages,
        int_args={**_input_strides(w), "total_rows": total_rows},
    )
    return [stage1, with_out_dtype(combine_spec(kv_splits, total_rows, w.v_dim, pdl=pdl_arch(arch)), w.dtype)]


SPECS = {"triton_mla": extend_specs, "triton_mla_decode": decode_specs, "triton_mla_fast": fast_specs}


GRAPH_SUFFIX = "_graph"  # kernels.graph: a `K_graph` kernel replays K's launches as one CUDA graph
DEPARTURES = {"triton_mla": EXTEND_DEPARTURES}  # kernel -> arch -> where its default launch is not its model's


def config_notes(kernel: str, arch: str) -> tuple[str, ...]:
    """Where `kernel`'s default launch configuration on `arch` departs from the one it reproduces
    (triton_mla: SGLang's), one line each; none for the others."""
    note = DEPARTURES.get(kernel.removesuffix(GRAPH_SUFFIX), {}).get(arch)
    return (note,) if note else ()


def launch_specs(kernel: str, w: VerifyWorkload, arch: str, sm_count: int = 132) -> list[LaunchSpec]:
    """Every Triton launch of registered kernel `kernel` for `w` on `arch`, in launch order (a `*_graph`
    kernel: the launches its graph replays)."""
    if kernel.endswith(GRAPH_SUFFIX) and kernel.removesuffix(GRAPH_SUFFIX) in SPECS:
        kernel = kernel.removesuffix(GRAPH_SUFFIX)
    if kernel not in SPECS:
        raise KeyError(
            f"{kernel} launches no Triton kernel; Triton kernels: {', '.join(SPECS)} (and their _graph forms)"
        )
    if arch not in ARCHS:
        raise ValueError(f"unknown architecture {arch!r}; known: {', '.join(ARCHS)}")
    return SPECS[kernel](w, arch=arch, sm_count=sm_count)
