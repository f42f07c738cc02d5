"""The hardware table (kernels/data/hardware.json) and `local_gpu()`, the one answer to "which GPU
is here". One record per GPU: name patterns, architecture, ncu chip, datasheet ceilings with their
sources, and (by its architecture) the per-SM limits. roofline.gpus adds the measured ceilings.
Standard library only: the CLI asks it without loading torch."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass, field
from functools import cache
from importlib import resources

from kernels.errors import BadInput, RooflineError

HARDWARE_FILE = "kernels/data/hardware.json"  # as messages name it


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM limits of one architecture (CUDA C++ Programming Guide), what an occupancy check needs."""

    arch: str
    family: str
    max_threads_per_block: int
    max_blocks_per_sm: int
    max_warps_per_sm: int
    registers_per_sm: int
    max_registers_per_block: int
    max_registers_per_thread: int
    register_alloc_unit: int  # registers per warp are allocated in units of this many
    shared_per_sm_bytes: int
    shared_per_block_bytes: int  # the most one block may ask for (opt-in above 48 KB)
    reserved_shared_per_block_bytes: int  # the driver's share of every block (ncu: _driver)
    shared_alloc_unit: int
    reference_gpu: str  # the GPU whose SM count sizes the grid when no --gpu is given
    sources: dict = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Gpu:
    """One GPU's record: how a device name is recognised, what it is, its datasheet ceilings."""

    short_name: str
    name: str
    match: tuple[str, ...] = ()  # device-name patterns (case-insensitive; the longest that occurs wins)
    arch: str
    chip: str | None  # `ncu --list-chips` name; None: no metric preset for it
    # datasheet numbers; `sources` says where each came from ('derived', 'lead': not read off a datasheet)
    sm_count: int
    boost_clock_mhz: float | None = None
    dram_gbps: float
    dram_type: str = ""
    l2_mb: float
    fp32_tflops: float
    bf16_dense_tflops: float
    fp16_dense_tflops: float | None = None
    fp8_dense_tflops: float | None = None
    sources: dict = field(default_factory=dict)

    @property
    def limits(self) -> ArchLimits | None:
        """The per-SM limits of its architecture; None where the table has none (sm_80, sm_89)."""
        return _table().archs.get(self.arch)


@dataclass(frozen=True)
class Table:
    gpus: tuple[Gpu, ...]
    archs: dict[str, ArchLimits]
    chips: dict[str, tuple[str, tuple[str, ...]]]  # chip -> (arch, patterns of boards with no record)


class UnknownArch(BadInput, KeyError):
    def __str__(self) -> str:
        return f"unknown architecture {self.args[0]!r}; known: {', '.join(ARCHS)}"


@cache
def _table() -> Table:
    data = json.loads(resources.files("kernels").joinpath("data/hardware.json").read_text())
    return Table(
        tuple(Gpu(**{**g, "match": tuple(g["match"])}) for g in data["gpus"]),
        {a["arch"]: ArchLimits(**a) for a in data["archs"]},
        {chip: (c["arch"], tuple(c["match"])) for chip, c in data["chips"].items()},
    )


ARCHS = tuple(_table().archs)  # the architectures with limits: the ones kernels are compiled and modelled for
CHIPS = tuple(_table().chips)  # the ncu chips metric presets are resolved for


def gpus() -> tuple[Gpu, ...]:
    return _table().gpus


def get_arch(arch: str) -> ArchLimits:
    try:
        return _table().archs[arch]
    except KeyError:
        raise UnknownArch(arch) from None


def reference_gpu(arch: str) -> Gpu:
    """The record of the GPU that stands for `arch` where no GPU is named (its SM count sizes grids)."""
    ref = get_arch(arch).reference_gpu
    return next(g for g in gpus() if g.short_name == ref)


def _longest(device_name: str | None, candidates):
    """The value whose pattern is the longest one occurring in `device_name` (first on a tie), else None."""
    if not device_name:
        return None
    hits = [(len(p), value) for patterns, value in candidates for p in patterns if p.lower() in device_name.lower()]
    return max(hits, key=lambda h: h[0])[1] if hits else None


def find_gpu(device_name: str | None) -> Gpu | None:
    """The record a device name ('NVIDIA H200') belongs to, else None."""
    return _longest(device_name, ((g.match, g) for g in gpus()))


def chip_of(device_name: str | None) -> str | None:
    """The ncu chip of a device: its record's, else the chip whose board patterns occur in the name
    ('NVIDIA H20' -> 'gh100'), else None."""
    gpu = find_gpu(device_name)
    if gpu is not None:
        return gpu.chip
    return _longest(device_name, ((patterns, chip) for chip, (_, patterns) in _table().chips.items()))


class NoLocalGpu(RooflineError):
    """There is no GPU to ask about here; the message says why. no_driver: nvidia-smi is not even installed."""

    def __init__(self, message: str, no_driver: bool = False):
        super().__init__(message)
        self.no_driver = no_driver


@dataclass(frozen=True)
class LocalGpu:
    """The first GPU the driver lists on this machine."""

    name: str  # as the driver names it ("NVIDIA H200")
    driver: str  # driver version ("" when nvidia-smi gave none)
    count: int  # GPUs the driver lists
    gpu: Gpu | None  # its record in the table, None when it has none

    @property
    def chip(self) -> str | None:
        return chip_of(self.name)


def local_gpu() -> LocalGpu:
    """Which GPU is here, by nvidia-smi (no torch); raises NoLocalGpu with the reason when none answers."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise NoLocalGpu("no NVIDIA driver here: nvidia-smi not found, so no GPU to profile", no_driver=True)
    try:
        p = subprocess.run(
            [smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise NoLocalGpu(f"nvidia-smi failed: {exc}") from exc
    rows = [line.strip() for line in p.stdout.splitlines() if line.strip()]
    if p.returncode != 0 or not rows:
        said = (p.stdout + p.stderr).strip().splitlines()
        raise NoLocalGpu(f"nvidia-smi failed: {said[-1] if said else f'exit {p.returncode}'}")
    name, _, driver = rows[0].rpartition(", ") if ", " in rows[0] else (rows[0], "", "")
    return LocalGpu(name.strip(), driver.strip(), len(rows), find_gpu(name))
