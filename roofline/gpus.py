"""The GPU catalogue (roofline/data/gpus.json): datasheet ceilings with their sources."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources


@dataclass(frozen=True)
class Ceiling:
    """One roof: value, unit, and which kind of number it is (datasheet / measured / report)."""

    value: float
    unit: str
    kind: str
    source: str


@dataclass(frozen=True)
class GpuSpec:
    short_name: str
    name: str
    arch: str
    sm_count: int
    dram_gbps: float
    l2_mb: float
    bf16_dense_tflops: float
    fp32_tflops: float
    match: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict)
    measured: dict = field(default_factory=dict)

    def dram_ceiling(self) -> Ceiling:
        """Measured bandwidth when the catalogue has it, else the datasheet's."""
        if "dram_gbps" in self.measured:
            return Ceiling(self.measured["dram_gbps"], "GB/s", "measured", self.measured["source"])
        return Ceiling(self.dram_gbps, "GB/s", "datasheet", self.sources.get("dram_gbps", ""))

    def bf16_ceiling(self) -> Ceiling:
        if "bf16_dense_tflops" in self.measured:
            return Ceiling(self.measured["bf16_dense_tflops"], "TFLOP/s", "measured", self.measured["source"])
        return Ceiling(self.bf16_dense_tflops, "TFLOP/s", "datasheet",
                       self.sources.get("bf16_dense_tflops", ""))


class UnknownGpu(KeyError):
    def __str__(self) -> str:
        return f"unknown GPU {self.args[0]!r}; known: {', '.join(g.short_name for g in load_catalogue())}"


def load_catalogue() -> list[GpuSpec]:
    data = json.loads(resources.files("roofline").joinpath("data/gpus.json").read_text())
    return [GpuSpec(**{**g, "match": tuple(g.get("match", ()))}) for g in data["gpus"]]


def get_gpu(short_name: str) -> GpuSpec:
    for gpu in load_catalogue():
        if gpu.short_name == short_name.lower():
            return gpu
    raise UnknownGpu(short_name)


def match_gpu(device_name: str | None) -> GpuSpec | None:
    """The catalogue entry for a device name as a report gives it (e.g. 'NVIDIA H200'), or None."""
    if not device_name:
        return None
    for gpu in load_catalogue():
        if any(m.lower() in device_name.lower() for m in gpu.match):
            return gpu
    return None
