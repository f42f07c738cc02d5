"""`roofline report`: markdown with charts from a run directory or a bare .ncu-rep."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report")
@click.argument("path", type=click.Path(), required=False)
@click.option("-o", "--out", "out", type=click.Path(), default=None,
              help="report file (DIR/report.md; a folder gets report.md inside). "
                   "Default: ./<run name>-report/report.md")
@click.option("--force", is_flag=True, help="overwrite an existing report and its charts")
def report_cmd(path, out, force) -> None:
    """Write a GitHub-flavoured markdown report with roofline and stall charts (PNG + SVG)."""
    from profiler.errors import ProfilerError
    from reports.charts import ChartError
    from reports.markdown import ReportExists, write_report
    from roofline.analysis import summarize
    from roofline.cli import _load, progress, sample_run
    from roofline.reporting import REPORT_NAME, build_meta, default_output

    target = Path(path) if path else sample_run()
    if not path:
        progress(f"no path given: reporting on the bundled H200 capture {target}")
    if not target.exists():
        raise click.ClickException(f"{target}: no such run directory or report")
    out_md = Path(out) if out else default_output(target)
    if out and (out_md.is_dir() or out.endswith(("/", "\\"))):
        out_md = out_md / REPORT_NAME
    try:
        launches, workload, iterations = _load(target)
        analysis = summarize(launches, workload, iterations).to_dict()
        meta = build_meta(Path(path) if path else target, analysis, out_md if out else None)
        files = write_report(analysis, meta, out_md, force=force)
    except (ReportExists, ChartError, ProfilerError, ValueError, OSError) as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"wrote {files[0]}" + (f" and {len(files) - 1} chart files beside it" if len(files) > 1 else ""))
