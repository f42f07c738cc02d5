"""`roofline model` as an API: the floor of a verify workload on a GPU (both floors), and a kernel's
own model beside it, with no GPU. Returns a Model; reports.text.render_model prints it."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from kernels.errors import BadInput
from kernels.launch import ARCHS, SPECS
from kernels.spec import VerifyWorkload, check_workload
from roofline.analysis.floor import Floor, workload_floor
from roofline.analysis.kernel_models import KernelModel, assumption_note, kernel_model
from roofline.analysis.resources import kernel_resources
from roofline.catalogue.gpus import GpuSpec


@dataclass
class Model:
    """The floor over `layers` layers, and `kernel`'s model when one was asked for."""

    gpu: GpuSpec
    workload: VerifyWorkload
    layers: int
    floor: Floor
    kernel: str | None = None
    kernel_model: KernelModel | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def assumption(self) -> str | None:
        return assumption_note(self.kernel_model, self.gpu) if self.kernel_model else None

    def to_dict(self) -> dict:
        out = self.floor.to_dict()
        out["gpu_name"] = self.gpu.name
        out["ceilings"] = [dataclasses.asdict(c) for c in self.gpu.ceilings()]
        if self.notes:
            out["notes"] = list(self.notes)
        if self.kernel_model is not None:
            m = self.kernel_model
            out["kernel_model"] = {
                **dataclasses.asdict(m),
                "time_ms_all_layers": m.time_ms * self.layers,
                "gap_to_floor": m.time_ms * self.layers / self.floor.floor_ms,
                "assumption": self.assumption,
            }
        return out


def model(
    workload: VerifyWorkload, gpu: GpuSpec, layers: int = 1, kernel: str | None = None, compile_: bool = False
) -> Model:
    """The floor, and `kernel`'s model (a `_graph` kernel as the launches it replays); `compile_`
    cross-compiles the kernel for the GPU's architecture for its blocks per SM (needs triton)."""
    if layers < 1:
        raise BadInput("--layers must be at least 1")
    notes = []
    if kernel is not None:
        if kernel == "torch_ref":
            raise BadInput("torch_ref is the reference, not modelled; pick a Triton kernel")
        check_workload(kernel, workload)
        base = kernel.removesuffix("_graph")
        if kernel not in SPECS and base in SPECS:
            notes.append(f"{kernel} replays {base}'s launches as one CUDA graph: modelled as {base}")
            kernel = base
        elif kernel not in SPECS:
            notes.append(
                f"{kernel} has no kernel model (roofline models the Triton kernels it launches itself: "
                f"{', '.join(SPECS)}): the floor alone, which no kernel can beat"
            )
            kernel, compile_ = None, False
    if compile_ and kernel is not None and gpu.arch not in ARCHS:
        notes.append(
            f"no launch configuration for {gpu.arch} ({gpu.name}; roofline compiles for "
            f"{', '.join(ARCHS)}): modelled without --compile, blocks per SM assumed 1"
        )
        compile_ = False
    floor = workload_floor(workload, gpu, layers)
    km = None
    if kernel is not None:
        compiled = None
        if compile_:
            compiled = kernel_resources(kernel, workload, gpu.arch, gpu)
        km = kernel_model(kernel, workload, gpu, compiled)
    return Model(gpu, workload, layers, floor, kernel, km, notes)
