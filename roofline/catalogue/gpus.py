"""The GPU catalogue: each record of the hardware table (kernels.hardware) with its measured
ceilings where they exist: the user's own from `roofline calibrate --save` (user_measured_dir())
first, then the ones shipped with the package (data/measured/<short_name>.json, the project's H200)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path

from kernels.errors import BadInput
from kernels.hardware import Gpu, find_gpu, gpus

PACKAGED_MEASURED_DIR = "data/measured"  # inside the package: defaults, never written at run time
MEASURED_RATES = ("read_gbps", "copy_gbps", "l2_read_gbps", "matmul_tflops")  # each a positive finite number


@dataclass(frozen=True)
class Ceiling:
    """One roof: value, unit, and which kind of number it is: datasheet, report or measured."""

    value: float
    unit: str
    kind: str
    source: str


@dataclass(frozen=True)
class ReadFit:
    """The time to read n bytes once, measured at several sizes: fixed_us + n / gbps (roofline.analysis.scaling.line_fit)."""

    fixed_us: float
    gbps: float
    min_bytes: int  # the sizes it was fitted over
    max_bytes: int
    source: str

    def time_ms(self, nbytes: float) -> float:
        return self.fixed_us * 1e-3 + nbytes / (self.gbps * 1e9) * 1e3


@dataclass(frozen=True, kw_only=True)
class GpuSpec(Gpu):
    """A GPU's record (kernels.hardware.Gpu) with its measured ceilings, and every roof it has."""

    measured: dict = field(default_factory=dict)
    measured_from: str = ""  # the file `measured` came from ("" when there is none)

    def dram_ceiling(self) -> Ceiling:
        """Measured streaming-read bandwidth when calibrated, else the datasheet's."""
        if "read_gbps" in self.measured:
            return Ceiling(self.measured["read_gbps"], "GB/s", "measured", self.measured.get("source", ""))
        return Ceiling(self.dram_gbps, "GB/s", "datasheet", self.sources.get("dram_gbps", ""))

    def bf16_ceiling(self) -> Ceiling:
        """Measured bf16 matmul rate when calibrated, else the datasheet's dense rate."""
        if "matmul_tflops" in self.measured:
            return Ceiling(self.measured["matmul_tflops"], "TFLOP/s", "measured", self.measured.get("source", ""))
        return Ceiling(self.bf16_dense_tflops, "TFLOP/s", "datasheet", self.sources.get("bf16_dense_tflops", ""))

    def read_fit(self) -> ReadFit | None:
        """The measured time to read n bytes at any size (`read_fit` in the measured file), when there is one."""
        f = self.measured.get("read_fit")
        if not isinstance(f, dict):
            return None
        try:
            return ReadFit(
                float(f["fixed_us"]),
                float(f["gbps"]),
                int(f["min_bytes"]),
                int(f["max_bytes"]),
                str(f.get("source", self.measured.get("source", ""))),
            )
        except (KeyError, TypeError, ValueError):
            raise MeasuredFileError(
                f"{self.measured_from}: read_fit needs fixed_us, gbps, min_bytes and max_bytes as numbers, got {f!r}"
            ) from None

    def ceilings(self) -> list[Ceiling]:
        """Every roof this GPU has, datasheet and measured, each labelled."""
        out = [
            Ceiling(self.dram_gbps, "GB/s DRAM", "datasheet", self.sources.get("dram_gbps", "")),
            Ceiling(
                self.bf16_dense_tflops, "TFLOP/s bf16 dense", "datasheet", self.sources.get("bf16_dense_tflops", "")
            ),
            Ceiling(self.fp32_tflops, "TFLOP/s fp32", "datasheet", self.sources.get("fp32_tflops", "")),
        ]
        m, src = self.measured, self.measured.get("source", "")
        for key, unit in (
            ("read_gbps", "GB/s DRAM read"),
            ("copy_gbps", "GB/s DRAM copy (read+write)"),
            ("l2_read_gbps", "GB/s L2-resident read"),
            ("matmul_tflops", "TFLOP/s bf16 matmul"),
        ):
            if key in m:
                out.append(Ceiling(m[key], unit, "measured", src))
        return out


class UnknownGpu(BadInput, KeyError):
    def __str__(self) -> str:
        return f"unknown GPU {self.args[0]!r}; known: {', '.join(g.short_name for g in load_catalogue())}"


class MeasuredFileError(BadInput):
    """A measured-ceilings file that cannot be read."""


def user_measured_dir() -> Path:
    """Where `roofline calibrate --save` writes: $XDG_CONFIG_HOME/roofline/measured (~/.config/... by default)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "roofline" / "measured"


def packaged_measured_file(short_name: str) -> str:
    return str(resources.files("roofline").joinpath(f"{PACKAGED_MEASURED_DIR}/{short_name}.json"))


def _read_measured(path: str) -> dict:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise MeasuredFileError(
            f"{path}: cannot read measured ceilings ({exc}); rerun `roofline calibrate --save` or delete the file"
        ) from None
    if not isinstance(data, dict):
        raise MeasuredFileError(f"{path}: measured ceilings must be a JSON object")
    for key in MEASURED_RATES:
        value = data.get(key)
        if key in data and not (
            isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0
        ):
            raise MeasuredFileError(
                f"{path}: {key} must be a positive number, got {json.dumps(value)}; "
                "rerun `roofline calibrate --save` or fix the file"
            )
    if "source" in data and not isinstance(data["source"], str):
        raise MeasuredFileError(f"{path}: source must be a string, got {json.dumps(data['source'])}")
    return data


def _measured(short_name: str) -> tuple[dict, str]:
    """(ceilings, file): the user's own file first, then the packaged default; ({}, "") when neither."""
    for path in (str(user_measured_dir() / f"{short_name}.json"), packaged_measured_file(short_name)):
        if os.path.isfile(path):
            return _read_measured(path), path
    return {}, ""


def save_measured(short_name: str, data: dict) -> Path:
    """Write measured ceilings to the user's file (atomically) and return its path."""
    path = user_measured_dir() / f"{short_name}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)
    return path


def load_catalogue() -> list[GpuSpec]:
    """Every GPU of the hardware table, each with its measured ceilings (read afresh: calibrate may have saved)."""
    out = []
    for g in gpus():
        measured, source = _measured(g.short_name)
        device = measured.get("device")
        if device is not None and not (isinstance(device, str) and any(m.lower() in device.lower() for m in g.match)):
            raise MeasuredFileError(
                f"{source}: measured on {json.dumps(device)}, not a {g.name}: its ceilings "
                f"would be taken as the {g.short_name}'s; move it to the right GPU's file"
            )
        out.append(GpuSpec(**{f.name: getattr(g, f.name) for f in fields(g)}, measured=measured, measured_from=source))
    return out


def get_gpu(short_name: str) -> GpuSpec:
    for gpu in load_catalogue():
        if gpu.short_name == short_name.lower():
            return gpu
    raise UnknownGpu(short_name)


def match_gpu(device_name: str | None) -> GpuSpec | None:
    """The catalogue entry a report's device name ('NVIDIA H200') belongs to (kernels.hardware.find_gpu)."""
    gpu = find_gpu(device_name)
    return get_gpu(gpu.short_name) if gpu else None
