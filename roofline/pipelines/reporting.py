"""What a markdown report needs besides the analysis: the run's commands, tool and library
versions (from its manifest and spec), and the roofs of the GPU catalogue. `report` writes it."""

from __future__ import annotations

import shlex
from importlib import metadata
from pathlib import Path

from profiler.rundir import RunDir, RunDirError
from reports.markdown import ReportInput, write_report
from reports.meta import ReportMeta, Roof, nsys_version
from roofline.catalogue.gpus import GpuSpec, match_gpu

REPORT_NAME = "report.md"


def catalogue_roofs(gpu: GpuSpec) -> list[Roof]:
    """The roofs the catalogue knows for this GPU: datasheet DRAM/bf16/FP32, measured read/L2/matmul."""
    s, m, src = gpu.sources, gpu.measured, gpu.measured.get("source", "")
    roofs = [
        Roof("DRAM", gpu.dram_gbps, "datasheet", s.get("dram_gbps", "")),
        Roof("tensor", gpu.bf16_dense_tflops, "datasheet", s.get("bf16_dense_tflops", "")),
        Roof("fp32", gpu.fp32_tflops, "datasheet", s.get("fp32_tflops", "")),
    ]
    for key, level in (("read_gbps", "DRAM"), ("l2_read_gbps", "L2"), ("matmul_tflops", "tensor")):
        if m.get(key):
            roofs.append(Roof(level, m[key], "measured", src))
    return roofs


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _command_line(argv) -> str | None:
    """spec.json's argv as the `roofline ...` command a user types: the installed script's path, a
    checkout's roofline/__main__.py or `python -m roofline` all become `roofline`."""
    argv = [str(a) for a in argv or ()]
    if not argv:
        return None
    first = Path(argv[0])
    if first.name == "roofline" or (first.name == "__main__.py" and first.parent.name == "roofline"):
        argv = ["roofline"] + argv[1:]
    elif argv[1:3] == ["-m", "roofline"]:
        argv = ["roofline"] + argv[3:]
    return shlex.join(argv)


def default_output(source: Path) -> Path:
    """./<run or report name>-report/report.md: never inside the run, never over another run's."""
    source = Path(source)
    name = source.name if source.is_dir() else source.name.split(".")[0]
    return Path(f"{name or 'roofline'}-report") / REPORT_NAME


def build_meta(run, out_md: Path | None = None, source: str | Path | None = None) -> ReportMeta:
    """The metadata of a report on a loaded `Run` (roofline.load): commands, versions, roofs.
    `source` is the path as the user named it (default: run.source)."""
    src = Path(source) if source is not None else Path(run.source)
    versions: dict[str, str] = {}
    commands: list[str] = []
    why = preset = None
    if run.manifest is not None:
        m = run.manifest
        first = _command_line(run.spec.command) if run.spec is not None else None
        commands = ([first] if first else []) + [c for c in m.commands if c.strip()]
        versions.update({k: str(v) for k, v in (m.host or {}).items() if v is not None})
        versions.update(
            {
                name: str(t.get("version"))
                for name, t in (m.tools or {}).items()
                if isinstance(t, dict) and t.get("version")
            }
        )
        if versions.get("nsys"):
            versions["nsys"] = nsys_version(versions)
        kind = "run directory"
        preset = next((r.preset for r in m.reports if r.tool == "ncu" and getattr(r, "preset", None)), None)
        if not run.analysis.workload:
            why = f"the run directory {src} has no workload in its spec.json"
    elif not run.launch_table.counters:  # an nsys timeline alone: in nsys's words
        kind = "Nsight Systems timeline"
        why = f"{src.name} is an {kind}: it records each launch's time, grid and block, not the workload behind them"
    else:
        kind = "folder of reports" if src.is_dir() else "report"
        why = f"{src.name} is a bare {kind}: ncu does not record the workload that launched the kernels"
    for dist in ("roofline", "ncu-report", "matplotlib"):
        if v := _version(dist):
            versions["roofline" if dist == "roofline" else f"{dist} (this report)"] = v
    gpu = match_gpu(run.analysis.gpu.name)
    report_cmd = (
        f"roofline report {shlex.quote(str(src))}"
        + (
            f" --removal {shlex.quote(str(run.removal))}"
            if run.removal and run.removal.resolve().parent != src.resolve()
            else ""
        )
        + (f" --useful-flops {run.useful.flops:g}" if run.useful and run.useful.flops is not None else "")
        + (f" --useful-bytes {run.useful.bytes:g}" if run.useful and run.useful.bytes is not None else "")
        + (f" -o {shlex.quote(str(out_md))}" if out_md else "")
    )
    return ReportMeta(
        source=str(src),
        source_kind=kind,
        kernel=run.spec.kernel if run.spec is not None else None,
        iterations=run.spec.iterations if run.spec is not None else None,
        commands=commands,
        report_command=report_cmd,
        versions=versions,
        ceilings=[{"value": c.value, "unit": c.unit, "kind": c.kind, "source": c.source} for c in gpu.ceilings()]
        if gpu
        else [],
        roofs=catalogue_roofs(gpu) if gpu else [],
        why_no_floor=why,
        preset=preset,
    )


def report(run, out_md: str | Path | None = None, force: bool = False, source: str | Path | None = None) -> list[Path]:
    """Write a markdown report of a loaded `run` (roofline.api.Run; `roofline.report` also takes a
    path) with its charts. Default place: ./<run name>-report/report.md. Returns the files written;
    refuses to replace an existing report unless `force` (reports.markdown.ReportExists)."""
    out = Path(out_md) if out_md is not None else default_output(Path(run.source))
    where = out.resolve().parent
    for folder in (where, *where.parents):
        if RunDir.is_run(folder):  # evidence holds only what its capture wrote
            raise RunDirError(
                f"{out}: inside the run directory {folder}; a report goes beside a run, never into it "
                "(choose another -o)"
            )
    meta = build_meta(run, out if out_md is not None else None, source)
    in_kernel = getattr(run, "in_kernel", None)
    pm = (run.pm_samples, run.pm_sampling) if getattr(run, "pm_sampling", None) else (None, [])
    return write_report(ReportInput(run.analysis, run.timeline, in_kernel, run.timing, *pm), meta, out, force=force)
