"""The report's closing sections: how to reproduce it (the capture's commands, this report's, the
versions), the analysis's notes, and the ncu metrics the report lacks."""

from __future__ import annotations

import shlex

from kernels.batches import workload_args
from reports.markdown.blocks import code, details, prose, table
from reports.markdown.context import Context


def reproduce(ctx: Context) -> list[str]:
    meta = ctx.meta
    out = ["## Reproduce", ""]
    if meta.commands:
        first, rest = meta.commands[0], meta.commands[1:]
        out += ["The capture, exactly as run:", "", "```console", first, "```", ""]
        if rest:
            out += details(
                f"The tool command lines it ran ({len(rest)}, from commands.txt)", ["```console", *rest, "```"]
            )
    else:
        out += ["The capture command is not recorded (a bare report holds no command line).", ""]
    w = ctx.analysis.workload
    if w is not None and w.ctx_lens and meta.kernel:
        exact = shlex.join(["roofline", "profile", "--kernel", meta.kernel, *workload_args(w)])
        out += [
            "The same batch, its lengths listed (whatever draw or file they came from):",
            "",
            "```console",
            exact,
            "```",
            "",
        ]
    if meta.report_command:
        out += ["This report:", "", "```console", meta.report_command, "```", ""]
    if meta.versions:
        out += table(["component", "version"], [[k, code(v)] for k, v in meta.versions.items()]) + [""]
    return out


def notes(ctx: Context) -> list[str]:
    if not ctx.analysis.notes:
        return []
    return ["## Notes", ""] + [f"- {prose(n)}" for n in ctx.analysis.notes] + [""]


def missing_metrics(ctx: Context) -> list[str]:
    missing = ctx.analysis.missing_metrics
    if not missing:
        return []
    return details(f"The {len(missing)} ncu metrics this report lacks", [", ".join(code(m) for m in missing)])
