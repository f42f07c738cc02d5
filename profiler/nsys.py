"""Run a command under Nsight Systems (`nsys`): a CUDA + NVTX timeline, exported to sqlite.

Only `-t cuda,nvtx`: no CPU sampling, no context-switch trace (those made a 2 GB stream on the
H200 machine for a short program). nsys writes a `.qdstrm` stream and its importer turns it into
`.nsys-rep`; an importer that cannot start (missing libdw.so.1 / libelf.so.1) leaves only the
`.qdstrm` behind, which is reported as such.
"""

from __future__ import annotations

import ctypes
import glob
import os
import shlex
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path

from profiler.errors import ApplicationFailed, ImporterFailed, ProfilerError, exit_hint
from profiler.proc import PLAIN_RUN, ToolControl, find_tool, run_tool, tool_version
from profiler.rundir import run_files

INSTALL_GLOBS = (
    "/usr/local/cuda/bin/nsys",
    "/usr/local/cuda-*/bin/nsys",
    "/opt/nvidia/nsight-systems/*/bin/nsys",
    "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
)
IMPORTER_LIBS = ("libdw.so.1", "libelf.so.1")  # what nsys 2025.3.1's importer lacked on the H200 machine
IMPORTER_FIX = (
    "nsys's importer could not run, so it left only the raw .qdstrm stream and no .nsys-rep: "
    "it needs libdw.so.1 and libelf.so.1 (install elfutils' libraries, e.g. "
    "`apt-get install libdw1 libelf1`, or put a folder holding them on LD_LIBRARY_PATH); "
    "`roofline doctor` checks for them"
)


def find_nsys(explicit: str | None = None, option: bool = True) -> str:
    """`explicit` (--nsys), then $NSYS, then PATH, then the usual install folders; `option`: the command
    asking takes --nsys (its error names it only then)."""
    return find_tool("nsys", explicit, "NSYS", INSTALL_GLOBS, "Nsight Systems", option)


def _loadable(lib: str) -> bool:
    try:
        ctypes.CDLL(lib)
        return True
    except OSError:
        return False


def _importer_ldd(nsys: str) -> list[str]:
    """`ldd` lines of nsys's QdstrmImporter that say 'not found' ([] when it is not found or ldd fails)."""
    base = Path(os.path.realpath(nsys)).parent
    for pattern in (
        "../host-linux-x64/QdstrmImporter",
        "../../host-linux-x64/QdstrmImporter",
        "../*/QdstrmImporter",
        "QdstrmImporter",
    ):
        hits = glob.glob(str(base / pattern))
        if hits:
            try:
                done = subprocess.run(["ldd", hits[0]], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.SubprocessError):
                return []
            return [ln.strip() for ln in done.stdout.splitlines() if "not found" in ln] if done.returncode == 0 else []
    return []


def importer_missing(nsys: str) -> list[str]:
    """The shared libraries nsys's importer cannot load here ([] when it can): without them nsys
    leaves a .qdstrm and no report."""
    missing = [lib for lib in IMPORTER_LIBS if not _loadable(lib)]
    return missing + [ln.split()[0] for ln in _importer_ldd(nsys) if ln.split()[0] not in missing]


def nsys_version(nsys: str) -> str | None:
    """`nsys --version`'s line (e.g. 'NVIDIA Nsight Systems version 2025.3.1.90-...'), None if it fails."""
    return tool_version(nsys, lambda line: "version" in line.lower())


def nsys_command(nsys: str, app: list[str], report_base: Path) -> list[str]:
    """`nsys profile` with the lightest trace that still gives kernels, launch calls and NVTX ranges."""
    return [
        nsys,
        "profile",
        "-t",
        "cuda,nvtx",
        "-s",
        "none",
        "--cpuctxsw=none",
        "-f",
        "true",
        "-o",
        str(report_base),
    ] + list(app)


def export_command(nsys: str, report: Path, sqlite: Path) -> list[str]:
    return [nsys, "export", "--type", "sqlite", "-f", "true", "-o", str(sqlite), str(report)]


@dataclass
class NsysRun:
    """What an nsys run left behind: the timeline report, its sqlite export, one log for both."""

    command: list[str]
    export: list[str]
    report: Path
    sqlite: Path
    log: Path
    export_log: Path
    returncode: int

    @property
    def command_line(self) -> str:
        return shlex.join(self.command)


def classify_failure(lines: list[str], returncode: int, report: Path, log: Path) -> ProfilerError | None:
    """nsys's outcome as a typed error; None when it wrote its report and exited 0.

    nsys exits with the profiled program's own code (3 for `sys.exit(3)`,
    tests/fixtures/h200/logs/nsys_app_failed.log) and still writes a report."""
    qdstrm = [p for p in _generated(lines) if p.endswith(".qdstrm")]
    leftover = list(report.parent.glob(report.stem + "*.qdstrm"))
    text = "\n".join(lines)
    if not report.exists() and (qdstrm or leftover or "Importer error status" in text):
        return ImporterFailed(IMPORTER_FIX, lines, str(log))
    if returncode != 0:
        where = f"; nsys still wrote {report.name}" if report.exists() else ""
        return ApplicationFailed(
            f"the profiled program (or nsys) exited with code {returncode}{exit_hint(returncode)}{where}",
            lines,
            str(log),
        )
    if not report.exists():
        return ProfilerError(f"nsys finished but wrote no report at {report}", lines, str(log))
    return None


def _generated(lines: list[str]) -> list[str]:
    """The paths nsys lists under 'Generated:'."""
    out, inside = [], False
    for line in lines:
        if line.strip() == "Generated:":
            inside = True
        elif inside and line.startswith(("\t", " ")) and line.strip():
            out.append(line.strip())
        else:
            inside = False
    return out


def run_nsys(app: list[str], out_dir: Path, nsys: str | None = None, control: ToolControl = PLAIN_RUN) -> NsysRun:
    """Profile `app` into `out_dir/profile.nsys-rep` and export `out_dir/profile.sqlite` (the run writer's
    names); the steps log to `profile.nsys.log` and `profile.nsys-export.log`. nsys runs in its own
    process group, ended past `control.timeout` s (both steps together) or on Ctrl-C."""
    report, sqlite, log, export_log = run_files(out_dir, "nsys", "nsys-sqlite", "nsys-log", "nsys-export-log")
    exe = find_nsys(nsys)
    cmd = nsys_command(exe, app, report.with_suffix(""))  # nsys adds .nsys-rep
    started = time.monotonic()

    def on_line(line: str) -> None:
        if control.progress and line.startswith(("Collecting data", "Importer error")):
            control.progress(f"nsys: {line.strip()}")

    result = run_tool(cmd, log, "nsys", control, on_line=on_line)
    error = classify_failure(result.lines, result.returncode, report, log)
    if error is not None:
        raise error
    export = export_command(exe, report, sqlite)
    left = None if control.timeout is None else max(1.0, control.timeout - (time.monotonic() - started))
    done = run_tool(export, export_log, "nsys export", replace(control, timeout=left))
    if done.returncode != 0 or not sqlite.exists():
        raise ProfilerError(
            f"nsys export --type sqlite failed (exit code {done.returncode}) for {report}", done.lines, str(export_log)
        )
    return NsysRun(
        command=cmd,
        export=export,
        report=report,
        sqlite=sqlite,
        log=log,
        export_log=export_log,
        returncode=result.returncode,
    )
