"""The GPU catalogue: each record of the hardware table (kernels.hardware) with its measured
ceilings where they exist: the user's own from `roofline calibrate --save` (user_measured_dir())
first, then the ones shipped with the package (data/measured/<short_name>.json, the project's H200)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from importlib import resources
from pathlib import Path

from kernels.errors import BadInput
from kernels.hardware import Gpu, find_gpu, gpus
from profiler.checks import LIMIT, number_problem, strict_json, unknown_keys
from profiler.errors import special_file
from profiler.staging import Staged

PACKAGED_MEASURED_DIR = "data/measured"  # inside the package: defaults, never written at run time


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
        if f is None:
            return None
        # checked where the file was read (_check_read_fit); a hand-made GpuSpec is checked here
        _check_read_fit(f, self.measured_from or "measured ceilings")
        return ReadFit(
            float(f["fixed_us"]),
            float(f["gbps"]),
            int(f["min_bytes"]),
            int(f["max_bytes"]),
            str(f.get("source", self.measured.get("source", ""))),
        )

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


# What a measured file may hold, each number with its largest plausible value (GB/s, TFLOP/s, ns): a
# number past it (1e300) is refused as surely as a negative one, and a key roofline does not know (a
# misspelt "read_gpbs" would leave the datasheet's number in use without a word) is named.
MEASURED_LIMITS = {
    "read_gbps": 1e5,
    "copy_gbps": 1e5,
    "l2_read_gbps": 1e6,
    "matmul_tflops": 1e5,
    "load_latency_ns": 1e6,
}
MEASURED_TEXT = ("device", "source", "load_latency_source")
READ_FIT_LIMITS = {
    "fixed_us": (1e6, False),
    "gbps": (1e5, False),
    "min_bytes": (LIMIT, True),
    "max_bytes": (LIMIT, True),
}


def _read_measured(path: str) -> dict:
    """A measured-ceilings file, every field checked where it is read (MeasuredFileError naming the field)."""
    what = special_file(path)
    if what is not None:
        raise MeasuredFileError(f"{path}: is {what}, not a regular file: measured ceilings are read from a JSON file")
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise MeasuredFileError(
            f"{path}: cannot read measured ceilings ({exc}); rerun `roofline calibrate --save` or delete the file"
        ) from None
    if not isinstance(data, dict):
        raise MeasuredFileError(f"{path}: measured ceilings must be a JSON object")
    if unknown := unknown_keys(data, (*MEASURED_LIMITS, *MEASURED_TEXT, "read_fit")):
        raise MeasuredFileError(
            f"{path}: unknown field {unknown[0]!r} (known: {', '.join((*MEASURED_LIMITS, 'read_fit'))}); "
            "a misspelt ceiling would be ignored"
        )
    for key, maximum in MEASURED_LIMITS.items():
        if problem := number_problem(data.get(key), maximum=maximum, null=True):
            raise MeasuredFileError(f"{path}: {key} {problem}; rerun `roofline calibrate --save` or fix the file")
    for key in MEASURED_TEXT:
        if key in data and not isinstance(data[key], str):
            raise MeasuredFileError(f"{path}: {key} must be a string, got {json.dumps(data[key])}")
    if "read_fit" in data:
        _check_read_fit(data["read_fit"], path)
    return {k: v for k, v in data.items() if v is not None}  # null: not measured (calibrate found no L2 read)


def _check_read_fit(fit, path: str) -> None:
    """read_fit: an object of positive numbers in range, min_bytes <= max_bytes, nothing unknown."""
    need = ", ".join(READ_FIT_LIMITS)
    if not isinstance(fit, dict):
        raise MeasuredFileError(f"{path}: read_fit must be an object ({need}), got {json.dumps(fit)}")
    if unknown := unknown_keys(fit, (*READ_FIT_LIMITS, "source")):
        raise MeasuredFileError(f"{path}: read_fit: unknown field {unknown[0]!r} (known: {need}, source)")
    for key, (maximum, integer) in READ_FIT_LIMITS.items():
        if key not in fit:
            raise MeasuredFileError(f"{path}: read_fit needs {need}; {key} is missing")
        if problem := number_problem(fit[key], maximum=maximum, integer=integer):
            raise MeasuredFileError(f"{path}: read_fit.{key} {problem}")
    if fit["min_bytes"] > fit["max_bytes"]:
        raise MeasuredFileError(f"{path}: read_fit.min_bytes {fit['min_bytes']} is above max_bytes {fit['max_bytes']}")
    if "source" in fit and not isinstance(fit["source"], str):
        raise MeasuredFileError(f"{path}: read_fit.source must be a string, got {json.dumps(fit['source'])}")


def _measured(short_name: str) -> tuple[dict, str]:
    """(ceilings, file): the user's own file first, then the packaged default; ({}, "") when neither."""
    for path in (str(user_measured_dir() / f"{short_name}.json"), packaged_measured_file(short_name)):
        if os.path.exists(path):  # a FIFO or a folder in its place is refused, never skipped
            return _read_measured(path), path
    return {}, ""


def save_measured(path: Path, data: dict, seen: tuple | None = None, force: bool = False) -> Path:
    """Write measured ceilings to `path` (the user's file, user_measured_dir()/<gpu>.json) in one step
    (profiler/staging.py): written beside it and renamed over it, strict JSON. `seen`: the file's
    identity when the measuring began (None: absent); one that changed since is refused unless `force`
    (OutputExists), so two calibrations of one GPU never leave a mix."""
    path = Path(path)
    staged = Staged([path], replace=True, force=force, seen={path: seen}, hint="pass --force to replace it", keep=True)
    with staged:
        staged.path(path).write_text(strict_json(data) + "\n")
        staged.commit()
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
