"""The sweep folder and its one owner, `SweepDir`: nothing else names or lists a sweep's files.

    SWEEP/sweep.json                  every point's status (done | failed | interrupted | pending), error,
                                      GPU, wall time, where a failed attempt was kept; written atomically
    SWEEP/summary.csv                 the table of every point, when written
    SWEEP/sweep.png, SWEEP/sweep.svg  the chart: step time vs context length
    SWEEP/<point>/                    a complete run directory (profiler/rundir.py)
    SWEEP/<point>.failed-<time>/      a failed or interrupted attempt, as the run writer kept it

`SweepDir.create` takes a folder to run a sweep into and `SweepDir.open` one to read; both refuse a
folder that is not a sweep (a run directory, a file, a folder of other files), in one line.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from kernels.errors import BadInput
from profiler.errors import ReportError
from profiler.rundir import RunDir, is_failed_attempt
from reports.sweep import plot_sweep

SWEEP_FILE = "sweep.json"
FORMAT = "roofline-sweep/1"
SUMMARY = "summary.csv"
CHART = "sweep"  # plot_sweep writes CHART.png and CHART.svg
CHART_FILES = (f"{CHART}.png", f"{CHART}.svg")
LAYOUT = f"one run directory per point, {SWEEP_FILE}, {SUMMARY}, {CHART}.png/.svg"  # for help texts
SUMMARY_COLUMNS = [
    "kernel",
    "ctx_len",
    "page_size",
    "heads",
    "q_len",
    "status",
    "step_ms",
    "floor_ms",
    "gap",
    "bound",
    "error",
    "run",
]


class SweepError(BadInput):
    """A sweep folder or sweep.json that cannot be read, or a grid that cannot be run."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class SweepDir:
    """A sweep folder. The constructor only names paths (nothing is read or made): use `create` to
    run into a folder and `open` to read one, which check that it is a sweep."""

    path: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "path", Path(self.path))

    # -- the folder
    @classmethod
    def create(cls, path: str | Path) -> SweepDir:
        """A folder to run a sweep into, made when absent. An existing one must hold sweep.json or
        nothing but folders (point folders, a job array's runs) and the sweep's own files."""
        sweep = cls(path)
        sweep._refuse_non_folder()
        if sweep.path.is_dir() and not sweep.state_file.exists():
            foreign = sorted(
                p.name
                for p in sweep.path.iterdir()
                if not p.is_dir() and not p.name.startswith(".") and p.name not in (SUMMARY, *CHART_FILES)
            )
            if foreign:
                shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
                raise SweepError(
                    f"{sweep.path}: not a sweep folder (no {SWEEP_FILE}, and files no sweep writes: {shown}); "
                    "choose another --out (a new or empty folder)"
                )
        sweep.state()  # a sweep.json of another format is refused before anything runs
        try:
            sweep.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SweepError(f"{sweep.path}: cannot make the sweep folder ({exc.strerror or exc})") from None
        return sweep

    @classmethod
    def open(cls, path: str | Path) -> SweepDir:
        """An existing sweep folder to read: it holds sweep.json or at least one point's run directory."""
        sweep = cls(path)
        if not sweep.path.is_dir():
            raise SweepError(f"{sweep.path}: no such sweep folder")
        sweep._refuse_non_folder()
        if not sweep.state_file.exists() and not sweep.runs():
            raise SweepError(f"{sweep.path}: no {SWEEP_FILE} and no run directories: not a sweep, nothing to summarize")
        sweep.state()
        return sweep

    def _refuse_non_folder(self) -> None:
        if self.path.exists() and not self.path.is_dir():
            raise SweepError(f"{self.path}: is a file, not a sweep folder")
        if RunDir.is_run(self.path):
            raise SweepError(
                f"{self.path}: is a run directory (it has a manifest), not a sweep folder; "
                "`roofline analyze` reads it, a sweep is the folder that holds such runs"
            )

    # -- sweep.json: written by one process (the parent), atomically
    @property
    def state_file(self) -> Path:
        return self.path / SWEEP_FILE

    def state(self) -> dict:
        """sweep.json's content ({"format", "points": {name: entry}}); an empty state when absent."""
        f = self.state_file
        if not f.exists():
            return {"format": FORMAT, "points": {}}
        try:
            data = json.loads(f.read_text())
        except (json.JSONDecodeError, OSError, UnicodeDecodeError) as exc:
            raise SweepError(f"{f}: cannot read ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("points"), dict):
            raise SweepError(f"{f}: not a roofline sweep file (format {FORMAT!r} with a 'points' object)")
        bad = [name for name, entry in data["points"].items() if not isinstance(entry, dict)]
        if bad:
            raise SweepError(
                f"{f}: points[{bad[0]!r}] must be an object (status, workload, ...), got {data['points'][bad[0]]!r}"
            )
        return data

    def write_state(self, state: dict) -> Path:
        """Replace sweep.json in one step: written to a temporary file beside it, flushed, renamed over
        it. A crash or error part-way leaves the old sweep.json whole and no temporary file."""
        state["updated"] = _now()
        f = self.state_file
        tmp = f.with_name(f".{f.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "w") as out:
                out.write(json.dumps(state, indent=2) + "\n")
                out.flush()
                os.fsync(out.fileno())
            os.replace(tmp, f)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        return f

    # -- the points
    def point(self, name: str) -> Path:
        """Where the point of this name has its run directory."""
        return self.path / name

    def runs(self) -> list[Path]:
        """Run directories directly under the folder (made by the sweep or by a job array), leaving out
        the kept attempts of failed points and hidden temporary folders."""
        if not self.path.is_dir():
            return []
        return sorted(
            p
            for p in self.path.iterdir()
            if p.is_dir() and not p.name.startswith(".") and not is_failed_attempt(p) and RunDir.is_run(p)
        )

    def gpu(self, names: list[str]) -> str | None:
        """The GPU the first of these points' runs recorded (for the chart's title), None if none did."""
        for name in names:
            try:
                gpu = RunDir(self.point(name)).manifest().host.get("gpu")
            except (ReportError, OSError):  # the title only
                continue
            if gpu:
                return gpu
        return None

    # -- summary.csv and the chart
    @property
    def summary_file(self) -> Path:
        return self.path / SUMMARY

    def saved_summary(self) -> dict[str, dict]:
        """The done rows of summary.csv by run name ({} when there is none or it is unreadable)."""
        try:
            table = pd.read_csv(self.summary_file)
        except (OSError, ValueError):
            return {}
        if not set(SUMMARY_COLUMNS) <= set(table.columns):
            return {}
        done = table[(table["status"] == "done") & table["step_ms"].notna()]
        return {r["run"]: r for r in done.to_dict("records")}

    def write_summary(self, table: pd.DataFrame) -> Path:
        table.to_csv(self.summary_file, index=False)
        return self.summary_file

    def write_chart(self, table: pd.DataFrame, title: str | None = None) -> list[Path]:
        """sweep.png and sweep.svg from the summary table (ImportError without matplotlib)."""
        return plot_sweep(table, self.path / CHART, title=title)
