"""`roofline report`: markdown with charts from a run directory, a report or a folder of reports."""

from __future__ import annotations

from pathlib import Path

import click

from kernels.errors import RooflineError
from reports.charts.common import ChartError
from reports.markdown import ReportExists
from roofline.cli.common import allow_incomplete_option, api, progress, removal_option, useful_options, useful_work
from roofline.cli.common import fail as _fail
from roofline.pipelines.reporting import REPORT_NAME


@click.command("report")
@click.argument("path", type=click.Path(), required=False)
@click.option(
    "-o",
    "--out",
    "out",
    type=click.Path(),
    default=None,
    help="report file (DIR/report.md; a folder gets report.md inside). Default: ./<run name>-report/report.md",
)
@click.option("--force", is_flag=True, help="overwrite an existing report and its charts")
@allow_incomplete_option("report on a capture holding fewer launches than its run asked for (said in the report)")
@removal_option
@useful_options
def report_cmd(path, out, force, allow_incomplete, removal, useful_flops, useful_bytes) -> None:
    """Write a GitHub-flavoured markdown report with roofline and stall charts (PNG + SVG)."""
    if not path:
        progress(f"no path given: reporting on the bundled H200 capture {api().sample_run()}")
    out_md = Path(out) if out else None
    if out and (Path(out).is_dir() or out.endswith(("/", "\\"))):
        out_md = Path(out) / REPORT_NAME
    try:
        useful = useful_work(useful_flops, useful_bytes)
        run = api().load(path, allow_incomplete=allow_incomplete, removal=removal, useful=useful)
        files = api().report(run, out_md, force=force, source=path)
    except (ReportExists, ChartError, RooflineError, ValueError, OSError) as exc:
        raise _fail(exc) from None
    click.echo(f"wrote {files[0]}" + (f" and {len(files) - 1} chart files beside it" if len(files) > 1 else ""))
