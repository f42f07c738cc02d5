"""Typed profiler errors that carry the tool's own words, so the user sees why it failed."""

from __future__ import annotations


class ProfilerError(RuntimeError):
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
