"""Check a kernel against `torch_ref` on the same fresh random inputs."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from kernels.inputs import build_inputs
from kernels.reference import torch_ref
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload

# Relative error ||out - ref|| / ||ref|| allowed per dtype: bf16 outputs carry ~3 significant
# digits and the kernel feeds bf16 probabilities to the PV product; fp16 has 3 more bits.
REL_TOL = {"bf16": 1e-2, "fp16": 2e-3, "fp32": 1e-3}


def rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref||, in fp32."""
    o, r = out.float(), ref.float()
    return float(torch.linalg.vector_norm(o - r) / torch.linalg.vector_norm(r))


def finite_rel_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    """rel_err, but inf where `out` holds a NaN or an inf (such an output is never close)."""
    return rel_err(out, ref) if bool(torch.isfinite(out).all()) else float("inf")


@dataclass(frozen=True)
class CheckResult:
    kernel: str
    workload: str
    device: str
    dtype: str
    max_abs_err: float
    rel_err: float
    rel_tol: float
    unwritten: int
    ok: bool


def check_kernel(
    name: str, workload: VerifyWorkload, device: str = "cuda", dtype: str | None = None, **kernel_kwargs
) -> CheckResult:
    """Run kernel `name` (with `kernel_kwargs`) and the reference; NaN or an unwritten element fails."""
    dtype = dtype or workload.dtype
    workload = dataclasses.replace(workload, dtype=dtype)
    info = get_kernel(name)
    info.require(workload)  # an optional kernel not built, or a workload it cannot run: one line
    fn = info.load()
    inp = build_inputs(workload, device=device, dtype=dtype)
    out = fn(inp, **kernel_kwargs)
    ref = torch_ref(inp)
    if out.shape != ref.shape:
        raise ValueError(f"{name} returned shape {tuple(out.shape)}, reference {tuple(ref.shape)}")
    out32, ref32 = out.float(), ref.float()
    unwritten = int((~torch.isfinite(out32)).sum())
    diff = (out32 - ref32).abs()
    max_abs = float(diff.max())
    rel = rel_err(out32, ref32)
    ok = unwritten == 0 and rel == rel and rel <= REL_TOL[dtype]
    return CheckResult(
        kernel=name,
        workload=workload.describe(),
        device=str(device),
        dtype=dtype,
        max_abs_err=max_abs,
        rel_err=rel,
        rel_tol=REL_TOL[dtype],
        unwritten=unwritten,
        ok=ok,
    )
