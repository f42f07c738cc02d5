"""What every `roofline` command module shares: progress on stderr, and a library error as one line."""

from __future__ import annotations

import click

from kernels.errors import BadInput


class BadInputExit(click.ClickException):
    """A BadInput as the CLI reports it: one line, exit 2 (a usage error, like click's own)."""

    exit_code = 2


def progress(msg: str) -> None:
    click.echo(msg, err=True)


def fail(exc: Exception) -> click.ClickException:
    """A library error as a one-line CLI error, the one place that maps the error kinds to exit codes
    (kernels/errors.py): BadInput exits 2, the rest 1, with the tool's own lines and where a failed run
    was kept."""
    msg = str(exc) or getattr(exc, "reason", "")
    kept = getattr(exc, "kept_at", None)
    if kept is not None:
        msg += f"\nthe failed run is kept at {kept} (manifest.json says why; nothing captured was lost)"
    return BadInputExit(msg) if isinstance(exc, BadInput) else click.ClickException(msg)


def api():
    """roofline.api, imported on first use: it loads pandas, which `roofline kernels`, `model` and
    `--help` never need."""
    import roofline.api as module  # lazy: start-up time of the reading-free commands

    return module
