"""`roofline compare BASE HEAD`: exit 0 when the gate passes, 1 when the head is too slow, 2 on bad input."""

from __future__ import annotations

import json
import math
import sys

import click

from kernels.spec import WorkloadError
from profiler.errors import ProfilerError
from reports.compare import render_compare_markdown, render_compare_text
from roofline.api import compare
from roofline.cli.common import BadInputExit, allow_incomplete_option, format_option


@click.command("compare")
@click.argument("base", type=click.Path())
@click.argument("head", type=click.Path())
@click.option(
    "--fail-if-slower",
    "fail_if_slower",
    type=float,
    default=None,
    metavar="PCT",
    help="exit 1 when the head's step is slower than the base's by more than PCT percent, with the "
    "timing samples' Mann-Whitney p-value below --p-value (runs with fewer than 10 samples a side: "
    "on the profiler's step times, no test)",
)
@click.option(
    "--p-value",
    "p_value",
    type=click.FloatRange(0, 1, min_open=True),
    default=0.002,
    show_default=True,
    help="the gate fails only when the U test's two-sided p-value is below this (asv's default)",
)
@click.option(
    "--allow-different-workload",
    is_flag=True,
    help="compare runs of different workloads (said in the output; the step is not the same work)",
)
@allow_incomplete_option("compare runs whose reports hold fewer launches than asked")
@format_option("text", "markdown", "json")
def compare_cmd(base, head, fail_if_slower, p_value, allow_different_workload, allow_incomplete, fmt) -> None:
    """Compare two runs (run directories or reports): the step, and every kernel's metrics as value (delta %)."""
    if fail_if_slower is not None and not (math.isfinite(fail_if_slower) and fail_if_slower >= 0):
        raise BadInputExit(f"--fail-if-slower must be a finite percentage >= 0, got {fail_if_slower:g}")
    try:
        cmp = compare(
            base,
            head,
            fail_if_slower_pct=fail_if_slower,
            allow_different_workload=allow_different_workload,
            allow_incomplete=allow_incomplete,
            p_value=p_value,
        )
    except (ProfilerError, WorkloadError, ValueError) as exc:
        raise BadInputExit(str(exc).splitlines()[0]) from None
    if fmt == "json":
        click.echo(json.dumps(cmp.to_dict(), indent=2))
    elif fmt == "markdown":
        click.echo(render_compare_markdown(cmp), nl=False)
    else:
        click.echo(render_compare_text(cmp))
    sys.exit(0 if cmp.passed else 1)
