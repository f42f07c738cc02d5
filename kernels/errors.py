"""The root of every error roofline raises on purpose, and its kinds (the lowest layer, so every
package can raise them). The CLI maps them to exit codes in one place (roofline/cli/common.py, `fail`):
BadInput 2, any other RooflineError 1 (with where a failed run was kept), Interrupted 128 + signal."""

from __future__ import annotations

from pathlib import Path


class RooflineError(Exception):
    """Something roofline could not do, said in one line (the cause chained with `raise ... from`)."""


class BadInput(RooflineError, ValueError):
    """An option, a file or a workload that cannot be used as given (exit 2)."""


class CaptureFailed(RooflineError):
    """A capture that failed after it started: what it left is kept at `kept_at`, marked failed; the
    tool's own error is the `__cause__` (exit 1)."""

    def __init__(self, message: str, kept_at: Path | None = None, reason: str | None = None):
        super().__init__(message)
        self.kept_at = kept_at
        self.reason = reason or message.splitlines()[0]
