"""The GPU catalogue: datasheet ceilings with sources (data/gpus.json), plus measured ceilings
where they exist: the user's own from `roofline calibrate --save` (user_measured_dir()) first,
then the ones shipped with the package (data/measured/<short_name>.json, the project's H200)."""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from kernels.errors import BadInput

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
    """The time to read n bytes once, measured at several sizes: fixed_us + n / gbps (roofline.scaling.line_fit)."""

    fixed_us: float
    gbps: float
    min_bytes: int  # the sizes it was fitted over
    max_bytes: int
    source: str

    def time_ms(self, nbytes: float) -> float:
        return self.fixed_us * 1e-3 + nbytes / (self.gbps * 1e9) * 1e3


@dataclass(frozen=True)
class GpuSpec:
    short_name: str
    name: str
    arch: str
    sm_count: int
    dram_gbps: float
    l2_mb: float
    fp32_tflops: float
    bf16_dense_tflops: float
    fp16_dense_tflops: float | None = None
    fp8_dense_tflops: float | None = None
    boost_clock_mhz: float | None = None
    dram_type: str = ""
    match: tuple[str, ...] = ()
    sources: dict = field(default_factory=dict)
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
    data = json.loads(resources.files("roofline").joinpath("data/gpus.json").read_text())
    out = []
    for g in data["gpus"]:
        measured, source = _measured(g["short_name"])
        device = measured.get("device")
        if device is not None and not (
            isinstance(device, str) and any(m.lower() in device.lower() for m in g.get("match", ()))
        ):
            raise MeasuredFileError(
                f"{source}: measured on {json.dumps(device)}, not a {g['name']}: its ceilings "
                f"would be taken as the {g['short_name']}'s; move it to the right GPU's file"
            )
        out.append(GpuSpec(**{**g, "match": tuple(g.get("match", ())), "measured": measured, "measured_from": source}))
    return out


def get_gpu(short_name: str) -> GpuSpec:
    for gpu in load_catalogue():
        if gpu.short_name == short_name.lower():
            return gpu
    raise UnknownGpu(short_name)


def match_gpu(device_name: str | None) -> GpuSpec | None:
    """The entry whose longest match pattern occurs in a report's device name ('NVIDIA H200')."""
    if not device_name:
        return None
    hits = [(len(m), gpu) for gpu in load_catalogue() for m in gpu.match if m.lower() in device_name.lower()]
    return max(hits, key=lambda h: h[0])[1] if hits else None
