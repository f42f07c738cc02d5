"""`roofline compare BASE HEAD`: exit 0 when the gate passes, 1 when the head is too slow, 2 on bad input."""

from __future__ import annotations

import math
import sys

import click

from kernels.errors import RooflineError
from profiler.checks import strict_json
from reports.compare import render_compare_line, render_compare_markdown, render_compare_text
from roofline.analysis.pairing import parse_pairs
from roofline.api import compare
from roofline.cli.common import BadInputExit, allow_incomplete_option, format_option
from roofline.cli.output import claim, printed_output_options, write


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
@click.option(
    "--pair",
    "pairs",
    multiple=True,
    metavar="BASE=HEAD",
    help="compare the base's kernel BASE with the head's kernel HEAD (names that differ); without it, kernels "
    "pair by name, then by role (the main pass, the combine), each pairing said in a note",
)
@allow_incomplete_option("compare runs whose reports hold fewer launches than asked")
@format_option("text", "markdown", "json", "line")
@printed_output_options
def compare_cmd(
    base, head, fail_if_slower, p_value, allow_different_workload, pairs, allow_incomplete, fmt, out, force
) -> None:
    """Compare two runs (run directories or reports): the step, and every kernel's metrics as value (delta %).
    The gate's verdict is the last line (`--format line`: that line alone)."""
    if fail_if_slower is not None and not (math.isfinite(fail_if_slower) and fail_if_slower >= 0):
        raise BadInputExit(f"--fail-if-slower must be a finite percentage >= 0, got {fail_if_slower:g}")
    staged = claim(out, force)  # refused before any work
    try:
        cmp = compare(
            base,
            head,
            fail_if_slower_pct=fail_if_slower,
            allow_different_workload=allow_different_workload,
            allow_incomplete=allow_incomplete,
            p_value=p_value,
            pairs=parse_pairs(pairs),
        )
    except (RooflineError, ValueError) as exc:
        if staged is not None:
            staged.discard()
        raise BadInputExit(str(exc).splitlines()[0]) from None
    if fmt == "json":
        text = strict_json(cmp.to_dict()) + "\n"
    elif fmt == "markdown":
        text = render_compare_markdown(cmp)
    elif fmt == "line":
        text = render_compare_line(cmp) + "\n"
    else:
        text = render_compare_text(cmp) + "\n"
    click.echo(text, nl=False)
    write(staged, out, text)
    sys.exit(0 if cmp.passed else 1)
