"""GitHub-flavoured markdown report of an analysis and its nsys timeline (a `ReportInput`), with charts.

The report is its SECTIONS, in order: each a function of one `Context` (the input, the `ReportMeta`, the
chart links) returning its lines, in a module of its own (overview, batch, kernel_table, kernel_sections,
timeline, in_kernel, pm_sampling, charts, closing; the waits section is reports/waits.py's). `render_markdown` is a pure function
of its inputs; `write_report` writes report.md and its charts (PNG and SVG) side by side, linked by
relative names so the folder can be moved or pasted.
"""

from __future__ import annotations

from pathlib import Path

from profiler.staging import OutputExists, Staged
from reports.charts.batch import batch_chart
from reports.charts.in_kernel import in_kernel_chart
from reports.charts.pm_sampling import pm_chart
from reports.charts.roofline import report_roofs, roofline_chart
from reports.charts.stalls import stall_chart
from reports.charts.timeline import timeline_chart
from reports.charts.waits import waits_chart
from reports.markdown.batch import batch
from reports.markdown.charts import charts
from reports.markdown.closing import missing_metrics, notes, reproduce
from reports.markdown.context import Context, ReportInput
from reports.markdown.in_kernel import in_kernel
from reports.markdown.kernel_sections import kernel_sections
from reports.markdown.kernel_table import kernel_table
from reports.markdown.overview import floor, gpu, title, workload
from reports.markdown.pm_sampling import pm_sampling
from reports.markdown.step_times import times_of_a_step
from reports.markdown.timeline import timeline
from reports.meta import ReportMeta
from reports.waits import waits_markdown

__all__ = ["SECTIONS", "ReportExists", "ReportInput", "chart_paths", "render_markdown", "write_report"]


def waits(ctx: Context) -> list[str]:
    return waits_markdown(ctx.analysis, ctx.charts.get("waits"))


SECTIONS = (
    title,
    gpu,
    workload,
    batch,
    floor,
    kernel_table,
    kernel_sections,
    timeline,
    in_kernel,
    pm_sampling,
    times_of_a_step,
    waits,
    charts,
    reproduce,
    notes,
    missing_metrics,
)


class ReportExists(OutputExists):
    """A report or chart that exists, or appeared while this one was written (profiler/staging.py)."""


REPORT_HINT = "pass --force to overwrite it, or -o NEW/report.md to write a new one"


def render_markdown(report: ReportInput, meta: ReportMeta, charts: dict[str, Path] | None = None) -> str:
    """The whole report as GitHub-flavoured markdown, its SECTIONS in order (a timeline adds the timeline
    section). `charts` maps 'roofline'/'stalls'/'timeline'/'waits'/'batch' to PNG paths relative to where the
    markdown will live (each with an SVG of the same stem beside it)."""
    ctx = Context(report, meta, charts or {})
    out = [line for section in SECTIONS for line in section(ctx)]
    return "\n".join(out).rstrip() + "\n"


def chart_paths(out_md: Path) -> dict[str, Path]:
    """Where the charts of a report go: beside it, named after it (report.md -> report_roofline.png)."""
    names = ("roofline", "stalls", "timeline", "waits", "batch", "in_kernel", "pm_sampling")
    return {name: out_md.with_name(f"{out_md.stem}_{name}.png") for name in names}


def write_report(report: ReportInput, meta: ReportMeta, out_md: Path, force: bool = False) -> list[Path]:
    """Write out_md and its charts (PNG + SVG); returns the files written. All are written into a hidden
    folder beside out_md and put in place together, report.md first (profiler/staging.py): an existing
    report or chart is refused unless `force`, and so is one that appears meanwhile (another report to the
    same place: one of the two is written whole, the other refused, ReportExists)."""
    out_md = Path(out_md)
    pngs = chart_paths(out_md)
    mine = [out_md] + [p for png in pngs.values() for p in (png, png.with_suffix(".svg"))]
    try:
        staged = Staged(mine, force=force, hint=REPORT_HINT)
    except OutputExists as exc:
        raise ReportExists(str(exc)) from None
    with staged:
        analysis = report.analysis
        chart_title = f"{analysis.gpu.name or 'unknown GPU'}: {Path(meta.source).name}"
        links = {}
        roofs = report_roofs(analysis) + list(meta.roofs)
        for name, files in (
            ("roofline", roofline_chart(analysis, roofs, staged.path(pngs["roofline"]).with_suffix(""), chart_title)),
            ("stalls", stall_chart(analysis, staged.path(pngs["stalls"]).with_suffix(""), chart_title)),
            ("timeline", timeline_chart(report.timeline, staged.path(pngs["timeline"]).with_suffix(""), chart_title)),
            ("waits", waits_chart(analysis, staged.path(pngs["waits"]).with_suffix(""), chart_title)),
            ("batch", batch_chart(analysis.workload, staged.path(pngs["batch"]).with_suffix(""), chart_title)),
            (
                "in_kernel",
                in_kernel_chart(report.in_kernel, staged.path(pngs["in_kernel"]).with_suffix(""), chart_title),
            ),
            (
                "pm_sampling",
                pm_chart(
                    report.pm_samples, report.pm_sampling, staged.path(pngs["pm_sampling"]).with_suffix(""), chart_title
                ),
            ),
        ):
            if files:
                links[name] = Path(files[0].name)
        staged.path(out_md).write_text(render_markdown(report, meta, links))
        try:
            written = staged.commit()
        except OutputExists as exc:
            raise ReportExists(str(exc)) from None
    for p in mine[1:]:
        if p not in written and p.exists():
            p.unlink()  # a chart of an earlier report that this one does not have (only with force)
    return written
