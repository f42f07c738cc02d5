"""What every `roofline` command module shares: progress on stderr, and a library error as one line."""

from __future__ import annotations

import click


def progress(msg: str) -> None:
    click.echo(msg, err=True)


def fail(exc: Exception) -> click.ClickException:
    """A library error as a one-line CLI error (plus the tool's own lines and where a failed run went)."""
    msg = str(exc) or getattr(exc, "reason", "")
    kept = getattr(exc, "kept_at", None)
    if kept is not None:
        msg += f"\nthe failed run is kept at {kept} (manifest.json says why; nothing captured was lost)"
    return click.ClickException(msg)


def api():
    """roofline.api, imported on first use: it loads pandas, which `roofline kernels`, `model` and
    `--help` never need."""
    import roofline.api as module  # lazy: start-up time of the reading-free commands

    return module
