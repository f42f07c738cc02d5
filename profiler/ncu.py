"""Run a command under Nsight Compute (`ncu`) in a child process, keep its log, fail clearly."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from profiler.errors import (ApplicationFailed, CounterPermission, NoKernelsProfiled,
                             ProfilerError, ToolNotFound)

STALL_REASONS = (
    "barrier", "branch_resolving", "dispatch_stall", "drain", "gmma", "imc_miss", "lg_throttle",
    "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
    "not_selected", "selected", "short_scoreboard", "sleeping", "tex_throttle", "wait",
)


def stall_metric(reason: str) -> str:
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


# The smallest list that decides a verdict and explains it (names checked against ncu 2025.3.1).
VERDICT_METRICS = (
    "gpu__time_duration.sum",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
    "dram__bytes.sum.per_second",
    "dram__bytes.sum.peak_sustained",
    "dram__cycles_elapsed.avg.per_second",
    "lts__t_sector_hit_rate.pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active",
    "sm__maximum_warps_per_active_cycle_pct",
    "launch__waves_per_multiprocessor",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block",
    "device__attribute_display_name",
    "device__attribute_multiprocessor_count",
) + tuple(stall_metric(r) for r in STALL_REASONS)

# Hierarchical roofline: FLOPs (tensor and FP32) and bytes at L1, L2 and DRAM, with the
# report's own peaks (per-cycle peak x clock), plus what limits occupancy.
ROOFLINE_METRICS = (
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__cycles_elapsed.avg.per_second",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "l1tex__t_bytes.sum",
    "l1tex__t_bytes.sum.peak_sustained",
    "l1tex__cycles_elapsed.avg.per_second",
    "l1tex__t_sector_hit_rate.pct",
    "lts__t_bytes.sum",
    "lts__t_bytes.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "dram__bytes.sum",
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
)

DEFAULT_METRICS = VERDICT_METRICS + ROOFLINE_METRICS

# Sections whose rules we want ncu to evaluate too (SpeedOfLight carries SOLBottleneck).
VERDICT_SECTIONS = ("SpeedOfLight",)

_INSTALL_GLOBS = ("/usr/local/cuda/bin/ncu", "/usr/local/cuda-*/bin/ncu",
                  "/opt/nvidia/nsight-compute/*/ncu")


def find_ncu(explicit: str | None = None) -> str:
    """`explicit`, then $NCU, then PATH, then the usual install folders."""
    for candidate in (explicit, os.environ.get("NCU")):
        if candidate:
            path = shutil.which(candidate)
            if path:
                return path
            raise ToolNotFound(f"ncu not found at {candidate!r} (from --ncu or $NCU)")
    path = shutil.which("ncu")
    if path:
        return path
    for pattern in _INSTALL_GLOBS:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    raise ToolNotFound("ncu (Nsight Compute) not found: put it on PATH, set $NCU, or pass --ncu PATH; "
                       f"looked in {', '.join(_INSTALL_GLOBS)}")


def ncu_version(ncu: str) -> str | None:
    """`ncu --version`'s version line (e.g. 'Version 2025.3.1.0 (build ...)'), None if it fails."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return next((ln for ln in lines if ln.lower().startswith("version")), lines[-1] if lines else None)


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


def ncu_command(ncu: str, app: list[str], report_base: Path, metrics: tuple[str, ...] = DEFAULT_METRICS,
                sections: tuple[str, ...] = VERDICT_SECTIONS, nvtx_range: str | None = "roofline",
                extra: list[str] | None = None) -> list[str]:
    """The ncu command line. Clocks are left alone; caches flushed between replay passes."""
    cmd = [ncu, "--config-file", "off", "--clock-control", "none", "--cache-control", "all"]
    if nvtx_range:
        cmd += ["--nvtx", "--nvtx-include", f"{nvtx_range}/"]
    for section in sections:
        cmd += ["--section", section]
    if metrics:
        cmd += ["--metrics", ",".join(metrics)]
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
            "allow non-admin profiling (NVreg_RestrictProfilingToAdminUsers=0)", lines, str(log))
    match = _APP_ERROR.search(text)
    if match:
        return ApplicationFailed(f"the profiled program failed with exit code {match.group(1)}",
                                 lines, str(log))
    if "No kernels were profiled" in text:
        return NoKernelsProfiled("ncu profiled no kernel (filters matched nothing; ncu exits 0 here)",
                                 lines, str(log))
    if returncode != 0:
        return ProfilerError(f"ncu exited with code {returncode}", lines, str(log))
    return None


def run_ncu(app: list[str], out_dir: Path, name: str = "profile", ncu: str | None = None,
            env: dict[str, str] | None = None, progress: Callable[[str], None] | None = None,
            **command_kwargs) -> NcuRun:
    """Profile `app` into `out_dir/<name>.ncu-rep`, streaming ncu's output into `<name>.ncu.log`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cmd = ncu_command(find_ncu(ncu), app, out_dir / name, **command_kwargs)
    log = out_dir / f"{name}.ncu.log"
    report = out_dir / f"{name}.ncu-rep"
    lines: list[str] = []
    with open(log, "w") as logf:
        logf.write("$ " + shlex.join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env={**os.environ, **(env or {})}, bufsize=1)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                line = line.rstrip("\n")
                lines.append(line)
                logf.write(line + "\n")
                logf.flush()
                if progress and line.startswith("==PROF=="):
                    progress(line)
            returncode = proc.wait()
        except BaseException:  # Ctrl-C (or an error) here: ncu and its child must not outlive us
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
            raise
    error = classify_failure(lines, returncode, log)
    if error is not None:
        raise error
    if not report.exists():
        raise ProfilerError(f"ncu finished but wrote no report at {report}", lines, str(log))
    passes = [int(m.group(1)) for line in lines if line.startswith("==PROF==")
              for m in [_PASSES.search(line)] if m]
    return NcuRun(command=cmd, report=report, log=log, returncode=returncode, passes=passes)
