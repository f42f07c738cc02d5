"""Typed profiler errors that carry the tool's own words, so the user sees why it failed."""

from __future__ import annotations

import os
import signal
import stat

from kernels.errors import RooflineError


class ProfilerError(RooflineError, RuntimeError):
    """A profiling step failed; `log_lines` holds what the tool itself printed."""

    def __init__(self, message: str, log_lines: list[str] | None = None, log_path: str | None = None):
        self.log_lines = log_lines or []
        self.log_path = log_path
        text = message
        if self.log_lines:
            text += "\n" + "\n".join("  | " + line for line in self.log_lines[-15:])
        if log_path:
            text += f"\n  (full log: {log_path})"
        super().__init__(text)


def exit_hint(code: int) -> str:
    """What an exit code says beyond its number: the signal, when a killed program ends with it.
    ncu reports a program killed by SIGKILL as error code 9 (tests/fixtures/h200/logs/ncu_app_killed.log)."""
    candidates = [code - 128, -code] + ([code] if code == signal.SIGKILL else [])
    for number in candidates:
        if number in (signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV, signal.SIGABRT, signal.SIGINT):
            extra = ", e.g. by the out-of-memory killer" if number == signal.SIGKILL else ""
            return f" (likely killed by {signal.Signals(number).name}{extra})"
    return ""


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP while a capture ran: handled like Ctrl-C (the tool's process group ended,
    the run kept marked failed); `how` names the signal, `exit_code` is 128 + its number."""

    def __init__(self, signum: int, kept_at=None, reason: str | None = None):
        self.how = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
        self.exit_code = 128 + signum
        self.kept_at = kept_at  # where api.profile kept the interrupted run
        self.reason = reason
        super().__init__(reason or f"interrupted ({self.how})")


def special_file(path) -> str | None:
    """What `path` is when it exists but is neither a regular file nor a folder (opening a FIFO
    blocks until a writer comes; a device never ends), else None. Checked before any file is opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    kinds = (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    )
    return next((what for test, what in kinds if test(mode)), "a special file")


def refuse_special(path) -> None:
    """A one-line ReportError for a FIFO, socket or device where a report or run file should be."""
    what = special_file(path)
    if what is not None:
        raise ReportError(f"{path}: is {what}, not a regular file: roofline reads only regular files and folders")


class ToolNotFound(ProfilerError):
    """ncu or nsys could not be found."""


class CounterPermission(ProfilerError):
    """The GPU's performance counters are not readable by this user (ERR_NVGPUCTRPERM)."""


class NoKernelsProfiled(ProfilerError):
    """The tool ran but matched no kernel (ncu exits 0 in this case)."""


class ApplicationFailed(ProfilerError):
    """The profiled program itself failed."""


class ReportError(ProfilerError):
    """A report file is missing, truncated, or not what it should be."""


class ToolTimeout(ProfilerError):
    """The capture ran past its time limit; the tool's process group was ended."""


class ImporterFailed(ProfilerError):
    """nsys collected data but could not turn it into a report (its importer failed)."""
