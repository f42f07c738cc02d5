"""timing.json: a run's timing samples, taken in a child process with no profiler attached.

    {"format": "roofline-timing/1", "method": "rotated", "unit": "ms per step",
     "samples_ms": [...], "n": 30, "input_sets": 8, "replays_per_sample": 4, ...}

Each sample is the mean time of one step over `replays_per_sample` replays of a CUDA graph that
runs the step once on each of `input_sets` independent input sets in turn (as a model's layers
each read their own KV cache; no L2 flush). Written by `python -m profiler.harness --timing-samples`,
named and checksummed by the run writer (tool "timing"), read back here. No torch needed.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from profiler.rundir import TIMING, RunDir, RunDirError

FORMAT = "roofline-timing/1"
METHODS = {
    "rotated": "CUDA-graph replays over rotated input sets, no L2 flush",
    "flush": "triton.testing.do_bench: L2 flushed (256 MB zeroed) before each call",
}


@dataclass(frozen=True)
class TimingSamples:
    samples_ms: tuple[float, ...]  # ms per step, one per sample
    method: str
    input_sets: int
    replays_per_sample: int
    kernel: str | None = None
    workload: dict | None = None
    host: dict = field(default_factory=dict)  # gpu, torch, triton, cuda
    kernels_ms: dict | None = None  # kernel name -> samples (ms per step), when taken

    @property
    def n(self) -> int:
        return len(self.samples_ms)

    def to_dict(self) -> dict:
        d = asdict(self)
        d["samples_ms"] = list(self.samples_ms)
        return {"format": FORMAT, "unit": "ms per step", "n": self.n, "method_text": METHODS.get(self.method), **d}


def _want(cond: bool, where: str, what: str, value) -> None:
    if not cond:
        raise RunDirError(f"{where}: {what}, got {json.dumps(value)[:80]}")


def _samples(values, where: str, name: str) -> tuple[float, ...]:
    _want(isinstance(values, list) and values != [], where, f"{name} must be a non-empty list of ms", values)
    ok = all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0 for v in values)
    _want(ok, where, f"{name} must hold positive finite numbers", values)
    return tuple(float(v) for v in values)


def parse_timing(data, where: str = TIMING) -> TimingSamples:
    """Validate a timing.json payload: one-line errors naming the file and the field."""
    _want(isinstance(data, dict), where, "must be a JSON object", type(data).__name__)
    _want(data.get("format") == FORMAT, where, f"format must be {FORMAT!r}", data.get("format"))
    samples = _samples(data.get("samples_ms"), where, "samples_ms")
    method = data.get("method")
    _want(method in METHODS, where, f"method must be one of {', '.join(METHODS)}", method)
    for key in ("input_sets", "replays_per_sample"):
        v = data.get(key)
        _want(isinstance(v, int) and not isinstance(v, bool) and v >= 1, where, f"{key} must be an integer >= 1", v)
    kernels = data.get("kernels_ms")
    _want(kernels is None or isinstance(kernels, dict), where, "kernels_ms must be an object", kernels)
    kernels_ms = (
        None if kernels is None else {str(k): _samples(v, where, f"kernels_ms[{k!r}]") for k, v in kernels.items()}
    )
    host = data.get("host") or {}
    _want(isinstance(host, dict), where, "host must be an object", host)
    return TimingSamples(
        samples_ms=samples,
        method=method,
        input_sets=data["input_sets"],
        replays_per_sample=data["replays_per_sample"],
        kernel=data.get("kernel"),
        workload=data.get("workload"),
        host=dict(host),
        kernels_ms=kernels_ms,
    )


def write_timing(path: str | Path, timing: TimingSamples) -> Path:
    path = Path(path)
    path.write_text(json.dumps(timing.to_dict(), indent=2) + "\n")
    return path


def read_timing(run: str | Path) -> TimingSamples | None:
    """The timing samples of a run directory (checked against the manifest's sha256); None when the
    run has none (taken with --timing-samples 0, or written before timing passes existed)."""
    files = RunDir(Path(run)).reports(tool="timing")
    if not files:
        return None
    try:
        data = json.loads(files[0].read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RunDirError(f"{files[0]}: not valid JSON ({exc})") from None
    return parse_timing(data, str(files[0]))
