"""Run a command under Nsight Compute (`ncu`) in a child process, keep its log, fail clearly."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from profiler.errors import (
    ApplicationFailed,
    CounterPermission,
    NoKernelsProfiled,
    ProfilerError,
    ReportError,
    exit_hint,
)
from profiler.launch_table import LaunchTable
from profiler.metrics import BASE_CHIP, DEFAULT_PRESET, STALL_REASONS, ResolvedPreset, resolve_preset, stall_metric  # noqa: F401
from profiler.nvtx import RANGE, include_filter
from profiler.proc import PLAIN_RUN, ToolControl, find_tool, run_tool, tool_version
from profiler.run_writer import RunWriter
from profiler.rundir import run_files

_INSTALL_GLOBS = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu")


def find_ncu(explicit: str | None = None) -> str:
    """`explicit`, then $NCU, then PATH, then the usual install folders."""
    return find_tool("ncu", explicit, "NCU", _INSTALL_GLOBS, "Nsight Compute")


def ncu_version(ncu: str) -> str | None:
    """`ncu --version`'s version line (e.g. 'Version 2025.3.1.0 (build ...)'), None if it fails."""
    return tool_version(ncu, lambda line: line.lower().startswith("version"))


@dataclass
class NcuRun:
    """What an ncu run left behind."""

    command: list[str]
    report: Path
    log: Path
    returncode: int
    passes: list[int] = field(default_factory=list)

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)


def ncu_command(
    ncu: str,
    app: list[str],
    report_base: Path,
    preset: ResolvedPreset | str = DEFAULT_PRESET,
    nvtx_range: str | None = RANGE,
    extra: list[str] | None = None,
) -> list[str]:
    """The ncu command line for a preset resolved for the GPU's chip (profiler.metrics.resolve_preset;
    a name is taken with the gh100 metric names). Clocks are left alone; caches flushed between replay passes."""
    preset = resolve_preset(preset, BASE_CHIP) if isinstance(preset, str) else preset
    cmd = [ncu, "--config-file", "off", "--clock-control", "none", "--cache-control", "all"]
    if nvtx_range:
        cmd += ["--nvtx", "--nvtx-include", include_filter(nvtx_range)]
    cmd += preset.ncu_args()
    cmd += ["--export", str(report_base), "--force-overwrite"]
    return cmd + list(extra or []) + list(app)


_PASSES = re.compile(r"(\d+) pass(?:es)?\b")
_APP_ERROR = re.compile(r"==ERROR== The application returned an error code \((-?\d+)\)")


def classify_failure(lines: list[str], returncode: int, log: Path) -> ProfilerError | None:
    """Turn ncu's own messages into a typed error; None when the run is fine."""
    text = "\n".join(lines)
    if "ERR_NVGPUCTRPERM" in text:
        return CounterPermission(
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root or "
            "allow non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0)",
            lines,
            str(log),
        )
    match = _APP_ERROR.search(text)
    if match:
        code = int(match.group(1))
        return ApplicationFailed(f"the profiled program failed with exit code {code}{exit_hint(code)}", lines, str(log))
    if "No kernels were profiled" in text:
        return NoKernelsProfiled("ncu profiled no kernel (filters matched nothing; ncu exits 0 here)", lines, str(log))
    if returncode != 0:
        return ProfilerError(f"ncu exited with code {returncode}", lines, str(log))
    return None


def run_ncu(
    app: list[str], out_dir: Path, ncu: str | None = None, control: ToolControl = PLAIN_RUN, **command_kwargs
) -> NcuRun:
    """Profile `app` into `out_dir/profile.ncu-rep`, streaming ncu's output into `profile.ncu.log`
    (the run writer's names: profiler/rundir.py FILES). ncu runs in its own process group, ended whole
    past `control.timeout` seconds or on Ctrl-C."""
    report, log = run_files(out_dir, "ncu", "ncu-log")
    cmd = ncu_command(find_ncu(ncu), app, report.with_suffix(""), **command_kwargs)  # ncu adds .ncu-rep

    def on_line(line: str) -> None:
        if control.progress and line.startswith("==PROF=="):
            control.progress(line)

    result = run_tool(cmd, log, "ncu", control, on_line=on_line)
    lines, returncode = result.lines, result.returncode
    error = classify_failure(lines, returncode, log)
    if error is not None:
        raise error
    if not report.exists():
        raise ProfilerError(f"ncu finished but wrote no report at {report}", lines, str(log))
    passes = [int(m.group(1)) for line in lines if line.startswith("==PROF==") for m in [_PASSES.search(line)] if m]
    return NcuRun(command=cmd, report=report, log=log, returncode=returncode, passes=passes)


def record_in_run(writer: RunWriter, run: NcuRun, preset: str) -> None:
    """Name an ncu capture in the run being written: its command, its log, ncu's path and version, and
    the report with its launches, replay passes and preset."""
    writer.log_command(run.command)
    writer.add_log(run.log)
    exe = run.command[0]
    writer.manifest.tools["ncu"] = {"path": exe, "version": ncu_version(exe)}
    writer.add_report(run.report, "ncu", launches=len(run.passes), passes=max(run.passes, default=None), preset=preset)


def requested_metrics(cmd: list[str]) -> list[str]:
    """The metric names an ncu command line asks for by name (its --metrics lists; `regex:`,
    `group:` and `breakdown:` entries name several metrics and are left out)."""
    out: list[str] = []
    for flag, value in zip(cmd, cmd[1:]):
        if flag == "--metrics":
            out += [m.strip() for m in value.split(",") if m.strip() and ":" not in m]
    return out


# Requested metrics that exist only on some chips (Hopper's GMMA/HGMMA): absent elsewhere, not an error.
CHIP_SPECIFIC_METRICS = (
    stall_metric("gmma"),
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
)


def check_collected(table: LaunchTable, requested: list[str], report: Path) -> list[str]:
    """ncu exits 0 when it does not know a metric (the report simply lacks it:
    tests/fixtures/h200/logs/ncu_unknown_metric.log and unknown_metric.ncu-rep.gz) or has no value
    for it (`n/a`). Raise naming such metrics, or a launch that holds none of the requested values;
    return the missing chip-specific ones (CHIP_SPECIFIC_METRICS), which are only worth a note."""

    if not requested:
        return []
    raw = table.frame
    present = [m for m in requested if m in raw and raw[m].notna().any()]
    if not present:
        raise ReportError(
            f"{report}: ncu collected none of the {len(requested)} requested metrics "
            f"(e.g. {requested[0]}): every launch has no metric values; check the names with "
            "`ncu --query-metrics` for this GPU"
        )
    empty = raw.index[raw[present].isna().all(axis=1)]
    if len(empty):
        first = raw.loc[empty[0]]
        raise ReportError(
            f"{report}: launch {int(first['launch'])} ({first['kernel']}) has no metric values "
            f"({len(empty)} such launches): ncu profiled it but measured nothing"
        )
    missing = [m for m in requested if m not in present and m not in CHIP_SPECIFIC_METRICS]
    if missing:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ReportError(
            f"{report}: ncu exited 0 but has no value for {len(missing)} requested metric(s): "
            f"{shown} (unknown to this ncu or GPU, or n/a); check the names with "
            "`ncu --query-metrics` for this GPU"
        )
    return [m for m in requested if m not in present]
