"""`roofline report`: markdown with charts from a run directory, a report or a folder of reports."""

from __future__ import annotations

from pathlib import Path

import click

from kernels.errors import RooflineError
from reports.markdown import ReportExists
from roofline.cli.common import (
    allow_incomplete_option,
    api,
    echo_json,
    force_option,
    format_option,
    out_option,
    progress,
    removal_option,
    useful_options,
    useful_work,
)
from roofline.cli.common import fail as _fail
from roofline.pipelines.reporting import REPORT_NAME


@click.command("report")
@click.argument("path", type=click.Path(), required=False)
@out_option(
    "out",
    "report file (DIR/report.md; a folder, or a name without an extension, gets report.md inside). "
    "Default: ./<run name>-report/report.md",
)
@force_option
@allow_incomplete_option("report on a capture holding fewer launches than its run asked for (said in the report)")
@removal_option
@useful_options
@format_option()
def report_cmd(path, out, force, allow_incomplete, removal, useful_flops, useful_bytes, fmt) -> None:
    """Write a GitHub-flavoured markdown report with roofline and stall charts (PNG + SVG). The report and
    its charts are put in place together: another report written to the same place meanwhile is refused
    (exit 2), never mixed with this one."""
    if not path:
        progress(f"no path given: reporting on the bundled H200 capture {api().sample_run()}")
    out_md = Path(out) if out else None
    if out and (Path(out).is_dir() or out.endswith(("/", "\\")) or not Path(out).suffix):  # `-o evidence`: a folder
        out_md = Path(out) / REPORT_NAME
    try:
        useful = useful_work(useful_flops, useful_bytes)
        run = api().load(path, allow_incomplete=allow_incomplete, removal=removal, useful=useful)
        files = api().report(run, out_md, force=force, source=path)
    except (ReportExists, RooflineError, ValueError, OSError) as exc:
        raise _fail(exc) from None
    if fmt == "json":
        echo_json({"report": str(files[0]), "charts": [str(f) for f in files[1:]]})
        return
    click.echo(f"wrote {files[0]}" + (f" and {len(files) - 1} chart files beside it" if len(files) > 1 else ""))
