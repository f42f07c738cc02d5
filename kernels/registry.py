"""Named kernels with one calling convention: `fn(inputs: VerifyInputs) -> out tensor`.

Listing the registry imports nothing heavy; `get_kernel` imports the kernel's module.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

from kernels.errors import BadInput
from kernels.fast.common import FAST_PATHS
from kernels.fast.paths import DEVICE_KERNELS as FAST_DEVICE_KERNELS
from kernels.plan import code_path as plan_code_path
from kernels.spec import check_workload  # noqa: F401 (re-exported: the registry names what each kernel can run)


@dataclass(frozen=True)
class KernelInfo:
    name: str
    description: str
    target: str  # "module:function"
    device_kernels: tuple[str, ...] = ()  # the GPU kernels it launches, as ncu names them
    # Its code paths; which one runs on which architecture: code_path() (kernels.plan.CODE_PATHS).
    paths: tuple[str, ...] = ("portable",)
    # An optional kernel: "module:function" -> why it cannot run here (None: it can); imports nothing heavy.
    availability: str | None = None
    # "module:function" (workload) -> what in the workload it does not support (None: all of it).
    limits: str | None = None
    # "module:function" (inputs) -> the launch plan it runs on them, as JSON (a run's plan.json); None: no plan.
    plan: str | None = None

    def load(self) -> Callable:
        module, func = self.target.split(":")
        return getattr(importlib.import_module(module), func)

    def plan_record(self, inputs) -> dict | None:
        """The launch plan this kernel runs on `inputs` as JSON, or None where it records none."""
        return _call(self.plan, inputs) if self.plan else None

    def unavailable(self) -> str | None:
        """Why this kernel cannot run here (an optional kernel not built), or None."""
        return _call(self.availability) if self.availability else None

    def unsupported(self, workload) -> str | None:
        """What in `workload` this kernel does not support, or None."""
        return _call(self.limits, workload) if self.limits else None

    def require(self, workload) -> None:
        """KernelUnsupported (one line) when the kernel is not available or cannot run `workload`."""
        problem = self.unavailable()
        if problem:
            raise KernelUnsupported(f"{self.name} is {problem}")
        problem = self.unsupported(workload)
        if problem:
            raise KernelUnsupported(problem)


class KernelUnsupported(BadInput):
    """A registered kernel that is not built here, or a workload it cannot run."""


def _call(target: str, *args):
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)(*args)


KERNELS: dict[str, KernelInfo] = {
    k.name: k
    for k in [
        KernelInfo(
            "torch_ref",
            "plain PyTorch, fp32 math through the page table, with the tree mask (the reference)",
            "kernels.reference:torch_ref",
        ),
        KernelInfo(
            "triton_mla",
            "SGLang-shaped extend kernel: grid (batch, heads, q blocks), each program walks the whole prefix",
            "kernels.triton_mla:triton_mla",
            ("_verify_extend_kernel",),
        ),
        KernelInfo(
            "triton_mla_decode",
            "SGLang-shaped split-KV decode: each draft token a decode row, 16 heads per program, 8 kv splits, LSE merge",
            "kernels.triton_mla_decode:triton_mla_decode",
            ("_decode_stage1", "_combine_kernel"),
        ),
        KernelInfo(
            "triton_mla_fast",
            "all q_len x heads rows share each KV tile, prefix split to fill the GPU, tensor-core dots, LSE merge",
            "kernels.fast.run:triton_mla_fast",
            FAST_DEVICE_KERNELS,
            FAST_PATHS,
            plan="kernels.fast.run:plan_record",
        ),
        KernelInfo(
            "triton_mla_fast_graph",
            "triton_mla_fast with its split and combine launches replayed as one CUDA graph (one launch per step)",
            "kernels.fast.run:triton_mla_fast_graph",
            FAST_DEVICE_KERNELS,
            FAST_PATHS,
            plan="kernels.fast.run:plan_record",
        ),
        KernelInfo(
            "flashmla",
            "FlashMLA's sm90 dense decode (deepseek-ai/FlashMLA), optional: q_len x heads rows as one "
            "query sequence, page size 64, chain mask (tools/build_flashmla.py builds it)",
            "kernels.flashmla:flashmla",
            ("flash_fwd_splitkv_mla_kernel", "flash_fwd_mla_combine_kernel", "get_mla_metadata_kernel"),
            availability="kernels.flashmla:unavailable",
            limits="kernels.flashmla:unsupported",
        ),
    ]
}


def code_path(kernel: str, arch: str, page_size: int = 1, max_kv_len: int | None = None) -> str:
    """Which code path of `kernel` runs on `arch` ("sm_90", "sm_120", ...): "portable" unless
    kernels.plan.CODE_PATHS selects another for that architecture."""
    base = kernel.removesuffix("_graph")
    return plan_code_path(base, arch, page_size, max_kv_len)


def project_kernel_of(device_kernel: str) -> str | None:
    """The registered kernel that launches this GPU kernel (first match), or None for any other kernel."""
    return next((k.name for k in KERNELS.values() if device_kernel in k.device_kernels), None)


class UnknownKernel(BadInput, KeyError):
    def __str__(self) -> str:
        return f"unknown kernel {self.args[0]!r}; known: {', '.join(KERNELS)}"


def get_kernel(name: str) -> KernelInfo:
    try:
        return KERNELS[name]
    except KeyError:
        raise UnknownKernel(name) from None
