"""The registered kernels `triton_mla_fast` and `triton_mla_fast_graph`: plan the step
(kernels.fast.paths.plan_fast), launch the split path's kernel into partials, merge them by LSE
(kernels/combine.py).
"""

from __future__ import annotations

from functools import cache, lru_cache

import torch

from kernels.combine import combine_splits
from kernels.fast.common import FAST_MIN_SPLIT_LEN
from kernels.fast.paths import FastPlan, plan_fast
from kernels.graph import GraphedKernel
from kernels.inputs import VerifyInputs
from kernels.launch_spec import LaunchSpec, device_facts
from kernels.plan import code_path
from kernels.spec import check_workload

PART_DTYPES = {"*fp32": torch.float32, "*bf16": torch.bfloat16, "*fp16": torch.float16}


def check_shapes(inp: VerifyInputs) -> None:
    check_workload("triton_mla_fast", inp.workload)  # the check the CLI's model and check run too


def partials(inp: VerifyInputs, split: LaunchSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """Empty (part_o, part_lse) for the split kernel's grid, part_o in the spec's dtype."""
    w = inp.workload
    splits, total_rows = split.grid[1], split.int_args["total_rows"]
    dev = inp.q.device
    part_o = torch.empty(splits, total_rows, w.v_dim, dtype=PART_DTYPES[split.signature["PartO"]], device=dev)
    return part_o, torch.empty(splits, total_rows, dtype=torch.float32, device=dev)


@cache
def _gluon_importable() -> bool:
    try:
        import kernels.fast.gluon  # noqa: F401  # lazy: a Triton without Gluon still runs the portable path
    except (ImportError, AttributeError):
        return False
    return True


def gluon_runs_on(device: torch.device) -> bool:
    """Whether the Gluon split kernels can run on `device`: a CUDA sm_90 GPU and an importable Gluon."""
    return _gluon_runs_on(str(device))


@cache
def _gluon_runs_on(device: str) -> bool:  # asked before every launch: answered once per device
    dev = torch.device(device)
    return dev.type == "cuda" and torch.cuda.get_device_capability(dev)[0] == 9 and _gluon_importable()


@lru_cache(maxsize=64)
def _plan(
    w, arch: str, sm_count: int, device_name: str, split_len, min_split_len: int, path, launch: tuple
) -> FastPlan:
    """plan_fast, remembered: the same step shape is planned once (host time on every launch)."""
    return plan_fast(
        w,
        arch=arch,
        sm_count=sm_count,
        device_name=device_name,
        split_len=split_len,
        min_split_len=min_split_len,
        path=path,
        **dict(launch),
    )


def triton_mla_fast(
    inp: VerifyInputs,
    split_len: int | None = None,
    min_split_len: int = FAST_MIN_SPLIT_LEN,
    path: str | None = None,
    **launch,
) -> torch.Tensor:
    """Split-KV verify with all query rows of a request sharing each KV tile.

    `path`: "gluon", "hopper" or "portable"; default kernels.plan.code_path for this GPU's architecture.
    Launch parameters (kernels.fast.common.FastConfig): `launch`, else the path's defaults for this GPU
    and architecture (tuned entries in kernels/data/tuned.json, else kernels.fast.common's tables).
    """
    check_shapes(inp)
    w = inp.workload
    device_name, sm_count, arch = device_facts(inp.q.device)
    if path is None:
        path = code_path("triton_mla_fast", arch, w.page_size, w.max_kv_len)
        if path == "gluon" and not gluon_runs_on(inp.q.device):
            path = "portable"  # the interpreter, or a Triton without Gluon: the portable kernel
    elif path == "gluon" and not gluon_runs_on(inp.q.device):
        raise ValueError("the gluon path needs an sm_90 GPU and a Triton with Gluon (not the interpreter)")
    plan = _plan(w, arch, sm_count, device_name, split_len, min_split_len, path, tuple(sorted(launch.items())))
    part_o, part_lse = partials(inp, plan.split)
    plan.path.launch(inp, plan.split, part_o, part_lse)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    return combine_splits(part_o, part_lse, out, spec=plan.combine)


triton_mla_fast_graph = GraphedKernel(triton_mla_fast)
triton_mla_fast_graph.__doc__ = "triton_mla_fast with split + combine replayed as one CUDA graph (one launch per step)."
