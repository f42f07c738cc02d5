"""What each Triton launch of a kernel needs on an architecture, compiled without a GPU
(kernels.xcompile), against that architecture's limits (kernels.hardware, roofline.catalogue.archs): registers, spills,
shared memory, MMA family, blocks per SM, waves on a GPU of that architecture, and whether it fits."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from kernels.hardware import get_arch
from kernels.launch import config_notes, launch_specs
from kernels.spec import VerifyWorkload
from kernels.xcompile import compile_launches
from roofline.catalogue.archs import occupancy
from roofline.catalogue.gpus import GpuSpec, get_gpu


@dataclass(frozen=True)
class LaunchResources:
    name: str
    grid: tuple[int, ...]
    programs: int
    threads: int  # per block
    num_stages: int
    constexprs: dict
    registers: int
    spill_bytes: int  # spill stores per thread (ptxas)
    spill_loads: int
    shared_bytes: int  # per block, the kernel's own (Triton dynamic + static); + the driver's 1 KB at launch
    mma: str
    blocks_per_sm: int
    limited_by: str
    waves: float | None  # programs / (blocks_per_sm x SMs) on the GPU named in the report
    fits: bool
    problems: tuple[str, ...]


def kernel_resources(kernel: str, workload: VerifyWorkload, arch: str, gpu: GpuSpec | None = None) -> dict:
    """{"kernel", "arch", "gpu", "sm_count", "triton", "workload", "launches": [LaunchResources...], "fits",
    "notes"} (notes: where the launch configuration departs from the kernel's model, kernels.launch.config_notes).

    `gpu` sizes the grid (its SM count; split kernels plan by it); default: the architecture's
    reference GPU (kernels/data/hardware.json). Raises kernels.xcompile.CompileError when a launch does not compile."""

    limits = get_arch(arch)
    gpu = gpu or get_gpu(limits.reference_gpu)
    if gpu.arch != arch:
        raise ValueError(f"{gpu.short_name} is {gpu.arch}, not {arch}")
    launches, version = [], None
    specs = launch_specs(kernel, workload, arch, gpu.sm_count)
    for spec, c in zip(specs, compile_launches(specs, arch)):
        version = c.triton_version
        occ = occupancy(limits, spec.threads, c.registers, c.shared_bytes)
        waves = spec.programs / (occ.blocks_per_sm * gpu.sm_count) if occ.blocks_per_sm else None
        launches.append(
            LaunchResources(
                name=spec.name,
                grid=spec.grid,
                programs=spec.programs,
                threads=spec.threads,
                num_stages=spec.num_stages,
                constexprs=spec.constexprs,
                registers=c.registers,
                spill_bytes=c.spill_stores,
                spill_loads=c.spill_loads,
                shared_bytes=c.shared_bytes,
                mma=c.mma,
                blocks_per_sm=occ.blocks_per_sm,
                limited_by=occ.limited_by,
                waves=waves,
                fits=occ.fits,
                problems=occ.problems,
            )
        )
    return {
        "kernel": kernel,
        "arch": arch,
        "gpu": gpu.short_name,
        "sm_count": gpu.sm_count,
        "triton": version,
        "workload": asdict(workload),
        "fits": all(r.fits for r in launches),
        "launches": [asdict(r) for r in launches],
        "limits_source": limits.sources.get("shared_per_sm_bytes", ""),
        "notes": list(config_notes(kernel, arch)),
    }
