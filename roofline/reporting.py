"""What a markdown report needs besides the analysis: the run's commands and versions, the roofs
of the GPU catalogue. Reads a run directory's spec.json, commands.txt and harness.json by name."""

from __future__ import annotations

import json
import shlex
from importlib import metadata
from pathlib import Path

from profiler.errors import ReportError
from profiler.rundir import COMMANDS, RunDir
from reports.meta import ReportMeta, Roof
from roofline.gpus import GpuSpec, match_gpu

HARNESS = "harness.json"
REPORT_NAME = "report.md"


def catalogue_roofs(gpu: GpuSpec) -> list[Roof]:
    """The roofs the catalogue knows for this GPU: datasheet DRAM/bf16/FP32, measured read/L2/matmul."""
    s, m, src = gpu.sources, gpu.measured, gpu.measured.get("source", "")
    roofs = [Roof("DRAM", gpu.dram_gbps, "datasheet", s.get("dram_gbps", "")),
             Roof("tensor", gpu.bf16_dense_tflops, "datasheet", s.get("bf16_dense_tflops", "")),
             Roof("fp32", gpu.fp32_tflops, "datasheet", s.get("fp32_tflops", ""))]
    for key, level in (("read_gbps", "DRAM"), ("l2_read_gbps", "L2"), ("matmul_tflops", "tensor")):
        if m.get(key):
            roofs.append(Roof(level, m[key], "measured", src))
    return roofs


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _json(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise ReportError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ReportError(f"{path}: expected a JSON object, found {type(data).__name__}")
    return data


def _command_line(argv) -> str | None:
    """spec.json's argv as one shell line, with the installed script's path cut to its name."""
    if not isinstance(argv, list) or not argv:
        return None
    argv = [str(a) for a in argv]
    if Path(argv[0]).name == "roofline":
        argv[0] = "roofline"
    return shlex.join(argv)


def default_output(path: Path) -> Path:
    """./<run or report name>-report/report.md: never inside the run, never over another run's."""
    name = path.name if path.is_dir() else path.name.split(".")[0]
    return Path(f"{name}-report") / REPORT_NAME


def build_meta(path: Path, analysis: dict, out_md: Path | None = None) -> ReportMeta:
    """The metadata of a report on `path` (a run directory or a bare report)."""
    path = Path(path)
    versions: dict[str, str] = {}
    commands: list[str] = []
    kernel = iterations = None
    why = None
    if path.is_dir():
        spec = RunDir(path).read_spec()
        spec = spec if isinstance(spec, dict) else {}
        kernel, iterations = spec.get("kernel"), spec.get("iterations")
        first = _command_line(spec.get("command"))
        commands = ([first] if first else []) + [
            line for line in ((path / COMMANDS).read_text().splitlines() if (path / COMMANDS).exists() else [])
            if line.strip()]
        harness = _json(path / HARNESS)
        versions.update({k: str(harness[k]) for k in ("device", "torch", "triton", "cuda", "driver") if k in harness})
        if not analysis.get("workload"):
            why = f"the run directory {path} has no workload in its spec.json"
    else:
        why = f"{path.name} is a bare report: ncu does not record the workload that launched the kernels"
    for dist in ("roofline", "ncu-report", "matplotlib"):
        if (v := _version(dist)):
            versions[f"{dist} (this report)" if dist != "roofline" else "roofline"] = v
    gpu = match_gpu(analysis.get("gpu", {}).get("name"))
    report_cmd = f"roofline report {shlex.quote(str(path))}" + (f" -o {shlex.quote(str(out_md))}" if out_md else "")
    return ReportMeta(source=str(path), source_kind="run directory" if path.is_dir() else "report",
                      kernel=kernel, iterations=iterations if isinstance(iterations, int) else None,
                      commands=commands, report_command=report_cmd, versions=versions,
                      ceilings=[{"value": c.value, "unit": c.unit, "kind": c.kind, "source": c.source}
                                for c in gpu.ceilings()] if gpu else [],
                      roofs=catalogue_roofs(gpu) if gpu else [], why_no_floor=why)
