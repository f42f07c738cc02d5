"""`roofline doctor`: can this machine profile? Tools, GPU, counters, libraries, each problem with its fix."""

from __future__ import annotations

import sys

import click

from reports.doctor import render_doctor
from roofline.cli.common import format_option
from roofline.pipelines.doctor import doctor


@click.command("doctor")
@format_option()
def doctor_cmd(fmt: str) -> None:
    """Can this machine profile? Tools, GPU, counters, libraries, each problem with its fix. Exit 1 when
    profiling cannot work; 0 in a CPU analysis environment, where the reading commands work."""
    d = doctor()
    click.echo(render_doctor(d, fmt))
    sys.exit(d.exit_code)
