"""Read an in-kernel timeline file (profiler/in_kernel.py writes it; kernels/timeline_layout.py its layout) into
tidy tables of microseconds, every time on one axis: the split kernel's first program start is 0.

Clocks (%clock64) are per SM: each program's stamps are placed by its role 0's start, where %globaltimer and
%clock64 were read together, at the clock rate fitted over every role (cycles over timer nanoseconds). The
timer ticks in 32 ns steps on the H200, the clock in cycles.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from kernels.timeline_layout import HEAD, PER_TILE, SCHEDULE_KERNELS, STAGES
from profiler.errors import ReportError

FORMAT = "roofline-in-kernel/1"
INTERVAL_COLUMNS = ("program", "sm", "role", "role_name", "tile", "stage", "start_us", "end_us")
ROLE_COLUMNS = ("program", "sm", "role", "role_name", "start_us", "loop_us", "loop_end_us", "end_us", "n_tiles")
COMBINE_COLUMNS = ("program", "sm", "start_us", "waited_us", "end_us")


class TimelineFileError(ReportError):
    """An in-kernel timeline file this reader does not understand."""


@dataclass(frozen=True)
class InKernelCapture:
    """One stamped step. `intervals`: one row per stage of a tile of a role (INTERVAL_COLUMNS; a stage ran from
    the stamp before it); `roles`: one row per role of a program (ROLE_COLUMNS: its start, loop start and end,
    end); `combine`: one row per combine program (COMBINE_COLUMNS: start, the split's writes visible, end);
    `meta`: what the capture recorded (kernel, workload, device, grids, check, overhead)."""

    source: Path
    schedule: str
    meta: dict
    clock_ghz: float
    intervals: object  # pandas.DataFrame
    roles: object  # pandas.DataFrame
    combine: object  # pandas.DataFrame
    notes: list[str] = field(default_factory=list)

    @property
    def overhead(self) -> dict:
        return self.meta.get("overhead") or {}


def read_in_kernel(path: str | Path) -> InKernelCapture:
    """The file at `path` as tables; TimelineFileError for a file of another format or an unknown kernel."""
    import numpy as np  # lazy

    path = Path(path)
    try:
        data = np.load(path)
        meta = json.loads(str(data["meta"]))
        split, combine = data["split"].astype(np.int64), data["combine"].astype(np.int64)
    except (OSError, KeyError, ValueError) as exc:
        raise TimelineFileError(f"{path}: not an in-kernel timeline file ({exc})") from None
    if meta.get("format") != FORMAT:
        raise TimelineFileError(f"{path}: format {meta.get('format')!r}, this reader reads {FORMAT}")
    schedule = meta.get("schedule") or SCHEDULE_KERNELS.get(meta.get("split_kernel", ""))
    if schedule not in STAGES:
        raise TimelineFileError(f"{path}: no stage names for schedule {schedule!r} of {meta.get('split_kernel')!r}")
    ghz = _clock_ghz(split)
    roles, intervals = _tables(split, schedule, ghz)
    comb = _combine(combine, ghz, _origin(split))
    notes = []
    if roles.empty:
        notes.append(f"{meta['split_kernel']}: no role wrote its stamps (this path of the kernel has no scopes)")
    return InKernelCapture(path, schedule, meta, ghz, intervals, roles, comb, notes)


def _clock_ghz(split) -> float:
    """Cycles per timer nanosecond over every role that ran 5 us or more (the timer's 32 ns steps aside)."""
    import numpy as np  # lazy

    cycles = (split[:, :, 5] - split[:, :, 2]).ravel().astype(float)
    ns = (split[:, :, 6] - split[:, :, 1]).ravel().astype(float)
    ok = (split[:, :, 2].ravel() != 0) & (split[:, :, 5].ravel() != 0) & (ns >= 5000)
    if not ok.any():
        return 1.0
    return float(np.sum(cycles[ok]) / np.sum(ns[ok]))


def _origin(split) -> int:
    """The earliest role start (timer ns, as stored): the time axis' 0."""
    starts = split[:, :, 1][split[:, :, 1] != 0]
    return int(starts.min()) if starts.size else 0


def _tables(split, schedule: str, ghz: float):
    """(roles, intervals) DataFrames of one capture."""
    import pandas as pd  # lazy

    names = STAGES[schedule]
    t0 = _origin(split)
    role_rows, rows = [], []
    for p in range(split.shape[0]):
        ref = split[p, 0]
        if ref[2] == 0:  # the program's first role did not stamp: nothing to place its clocks by
            continue
        base_ns, base_clk = ref[1] - t0, ref[2]

        def us(clk, base_ns=base_ns, base_clk=base_clk):
            return (base_ns + (clk - base_clk) / ghz) / 1e3

        for r, (role_name, stages) in enumerate(names):
            h = split[p, r]
            if h[2] == 0 or h[5] == 0:
                continue
            n_tiles = int(h[7])
            role_rows.append((p, int(h[0]), r, role_name, us(h[2]), us(h[3]), us(h[4]), us(h[5]), n_tiles))
            prev = h[3] if h[3] else h[2]
            for t in range(min(n_tiles, (split.shape[2] - HEAD) // PER_TILE)):
                for k, stage in enumerate(stages):
                    clk = h[HEAD + t * PER_TILE + k]
                    if clk == 0:
                        continue
                    rows.append((p, int(h[0]), r, role_name, t, stage, us(prev), us(clk)))
                    prev = clk
    return pd.DataFrame(role_rows, columns=ROLE_COLUMNS), pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def _combine(combine, ghz: float, t0: int):
    """The combine's programs (start by the timer, the rest by their clocks from it)."""
    import pandas as pd  # lazy

    rows = []
    for rec in combine:
        if rec[7] != 1:
            continue
        start_ns = rec[1] - t0
        waited = start_ns + (rec[3] - rec[2]) / ghz if rec[3] else start_ns
        end = start_ns + (rec[4] - rec[2]) / ghz
        rows.append((int(rec[6]), int(rec[0]), start_ns / 1e3, waited / 1e3, end / 1e3))
    return pd.DataFrame(rows, columns=COMBINE_COLUMNS)
