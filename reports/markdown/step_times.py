"""The report's "Times of one step": each time of the step the run holds, said for what it is
(reports/step_times.py), the timing pass that `roofline compare` tests among them."""

from __future__ import annotations

from reports.markdown.blocks import prose, table
from reports.markdown.context import Context
from reports.numbers import ms
from reports.step_times import step_times


def times_of_a_step(ctx: Context) -> list[str]:
    times = step_times(ctx.analysis, ctx.report.timeline, ctx.report.timing)
    if not times:
        return []
    rows = [[ms(t.ms), prose(t.what)] for t in times]
    return ["## Times of one step", "", *table(["ms", "what it is"], rows, "rl"), ""]
