"""A folder's Nsight Systems timeline, adopted only when it is the ncu reports' program: the same GPU, and
every kernel the ncu reports profiled launched in the timeline with the same grid and block. A timeline of
another program (an unrelated nsys export dropped in the folder) is left out, and the note says why; the
one adopted says what it matched on. (Captures of different GPUs never reach here: profiler/readers.py
read_folder refuses them.)"""

from __future__ import annotations

from pathlib import Path

from profiler.errors import ReportError
from profiler.launch_table import LaunchTable
from profiler.nsys_reader import Timeline, read_nsys_sqlite


def folder_timeline(folder: Path, launches: LaunchTable) -> tuple[Timeline | None, list[str]]:
    """(the folder's nsys timeline of the ncu reports' program, or None; the notes on each nsys file)."""
    matched, notes = [], []
    for name in launches.timelines:
        try:
            timeline = read_nsys_sqlite(folder / name)
        except ReportError as exc:
            notes.append(f"{name}: not read as the timeline ({exc})")
            continue
        why_not, on = same_program(timeline, launches)
        if why_not:
            notes.append(f"{name}: left out, not the ncu reports' program: {why_not}")
        else:
            matched.append((name, timeline, on))
    if len(matched) > 1:
        notes.append(
            f"{', '.join(n for n, _, _ in matched)}: {len(matched)} timelines match the ncu reports: none is taken "
            "(keep the one of this run)"
        )
        return None, notes
    if matched:
        name, timeline, on = matched[0]
        notes.append(f"{name}: the timeline of the ncu reports' program, matched on {on}")
        return timeline, notes
    return None, notes


def same_program(timeline: Timeline, launches: LaunchTable) -> tuple[str | None, str]:
    """(why the timeline is not the ncu launches' program, or None; what it matched on)."""
    t = timeline.launches
    if timeline.summary.get("range") and "in_range" in t:
        t = t[t["in_range"]]
    ncu = launches.frame
    gpus, theirs = set(ncu["device"].dropna()), set(t["device"].dropna())
    if gpus and theirs and gpus != theirs:
        return f"its GPU is {', '.join(sorted(theirs))}, the reports' {', '.join(sorted(gpus))}", ""
    seen = {(k, g, b) for k, g, b in zip(t["kernel"], t["grid_size"], t["block_size"])}
    wanted = {(k, g, b) for k, g, b in zip(ncu["kernel"], ncu["grid_size"], ncu["block_size"])}
    missing = sorted({k for k, g, b in wanted if (k, g, b) not in seen})
    if missing:
        names = {k for k, _, _ in seen}
        how = [f"{k} (launched with another grid or block)" if k in names else f"{k} (never launched)" for k in missing]
        return "; ".join(how[:4]) + (f" and {len(how) - 4} more" if len(how) > 4 else ""), ""
    kernels = sorted({k for k, _, _ in wanted})
    on = (
        f"the GPU ({', '.join(sorted(gpus)) or 'unnamed'}) and every kernel the reports profiled launched with the "
        f"same grid and block ({', '.join(kernels[:4])}{' ...' if len(kernels) > 4 else ''})"
    )
    return None, on
