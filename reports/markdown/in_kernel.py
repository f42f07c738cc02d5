"""The "Inside the kernel" section: the in-kernel timeline (stamps each warpgroup writes at the end of each stage,
kernels/fast/timeline.py) as the analysis read it (roofline/analysis/timeline.py): the split kernel and the
combine in the step, each role's stages per tile, the loads hidden under other work, the picked SMs, the step's
critical path, and the stamps' own cost."""

from __future__ import annotations

from reports.markdown.blocks import code, figure, table
from reports.markdown.context import Context
from roofline.analysis.timeline import WAITS_ON


def in_kernel(ctx: Context) -> list[str]:
    tl = ctx.report.in_kernel
    if tl is None:
        return []
    if not tl.programs:  # this path of the kernel has no stamps
        return _no_stamps(tl)
    oh, check = tl.overhead, tl.check
    same = "equals" if check.get("same_as_unstamped") else "DIFFERS FROM"
    out = ["## Inside the kernel", "", _headline(tl), ""]
    if oh:
        out += [
            f"The stamps cost {oh['overhead']:+.1%} on the step ({oh['off_ms'] * 1e3:.1f} µs without, "
            f"{oh['on_ms'] * 1e3:.1f} µs with them; medians of {oh['samples']} alternating samples of "
            f"{oh['replays']} CUDA-graph replays); the stamped output {same} the unstamped one (relative error "
            f"against the reference {check.get('rel_err_vs_reference', float('nan')):.1e}).",
            "",
        ]
    rows = [
        [
            s.role,
            s.stage,
            f"{s.us_per_tile:.3f}" if s.us_per_tile is not None else "–",
            f"{s.us_per_program:.2f}",
            f"{s.share:.1%}",
            f"{s.us_per_program / tl.step_us:.1%}" if tl.step_us > 0 else "–",
            s.waits_on or "",
        ]
        for s in tl.stages
    ]
    header = ["role", "stage (ended at its stamp)", "µs per tile", "µs per program", "share of the role"]
    header += ["share of the step", "waits on"]
    out += table(header, rows, "llrrrrl") + [""]
    if tl.loads is not None:
        ld = tl.loads
        out += [
            f"Loads: a tile's load is in flight {ld.in_flight_us:.2f} µs from its issue to its scorer seeing it "
            f"landed, of which the scorer waits {ld.exposed_us:.2f} µs: {ld.hidden:.0%} of it runs under other work "
            f"({ld.tiles} tiles; the first two of each program, issued in the prologue, left out).",
            "",
        ]
    sm_rows = [
        [
            s.label,
            str(s.sm),
            ", ".join(map(str, s.programs)),
            str(s.tiles),
            f"{s.start_us:.1f}",
            f"{s.end_us:.1f}",
            f"{s.busy_us:.1f}",
        ]
        for s in tl.sms
    ]
    out += table(["SM", "id", "programs", "tiles", "start µs", "end µs", "busy µs"], sm_rows, "llrrrrr") + [""]
    out += _critical(tl)
    png = ctx.charts.get("in_kernel")
    if png is not None:
        out += figure(
            png, "in-kernel timeline", "in-kernel timeline", ": per SM, one lane per warpgroup and the combine"
        )
    out += [f"- {n}" for n in tl.notes]
    return out


def _critical(tl) -> list[str]:
    """Every microsecond of the step on the role that ends last (analysis.timeline.CriticalPath)."""
    cp = tl.critical
    if cp is None or tl.step_us <= 0:
        return []
    progs = ", ".join(map(str, cp.programs))
    per_tile = f", {cp.loop_us / cp.tiles:.2f} µs a tile" if cp.tiles else ""
    rows = [[part, f"{us:.1f}", f"{us / tl.step_us:.1%}", WAITS_ON.get(part, "")] for part, us in cp.parts]
    return [
        f"The step's critical path: {code(cp.role)} on SM {cp.sm} (program{'s' if len(cp.programs) > 1 else ''} "
        f"{progs}; {cp.tiles} tiles) ends last. Its programs' loops take {cp.loop_us:.1f} µs{per_tile}; each "
        f"microsecond of the step's {tl.step_us:.1f} on it:",
        "",
        *table(["part (the stages summed over its programs)", "µs", "share of the step", "waits on"], rows, "lrrl"),
        "",
    ]


def _no_stamps(tl) -> list[str]:
    return ["## Inside the kernel", "", *[f"- {n}" for n in tl.notes], ""]


def _headline(tl) -> str:
    step = f"the step {tl.step_us:.1f} µs from the split kernel's first start to the last program's end"
    combine = ""
    if tl.combine_us is not None:
        combine = (
            f"; {code(tl.combine_kernel or 'the combine')} ({tl.combine_programs} programs) ends "
            f"{tl.step_us - tl.split_us:.1f} µs after the split "
            f"kernel ({tl.combine_share:.0%} of the step; a program's own work, from its partials visible to its "
            f"end, {tl.combine_work_us:.2f} µs at the median)"
        )
    return (
        f"{code(tl.kernel)} ({tl.schedule} schedule, {tl.programs} programs; clock {tl.clock_ghz:.2f} GHz by the "
        f"stamps) runs {tl.split_us:.1f} µs, {step}{combine}."
    )
