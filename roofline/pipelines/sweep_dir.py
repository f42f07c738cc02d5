"""The sweep folder and its one owner, `SweepDir`: nothing else names or lists a sweep's files.

    SWEEP/sweep.json                  every point's status (done | failed | interrupted | pending), error,
                                      GPU, wall time, where a failed attempt was kept; written atomically
    SWEEP/summary.csv                 the table of every point, when written
    SWEEP/sweep.png, SWEEP/sweep.svg  the chart: step time vs context length
    SWEEP/<point>/                    a complete run directory (profiler/rundir.py)
    SWEEP/<point>.failed-<time>/      a failed or interrupted attempt, as the run writer kept it
    SWEEP/.sweep.lock                 held by the one command writing the folder (a second is refused)

`SweepDir.create` takes a folder to run a sweep into and `SweepDir.open` one to read; both refuse a
folder that is not a sweep (a run directory, a file, a folder of other files), in one line.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from kernels.errors import BadInput
from profiler.checks import number_problem
from profiler.errors import ReportError, special_file
from profiler.rundir import RunDir, is_failed_attempt
from profiler.staging import Staged, identity, temp_beside
from reports.sweep import plot_sweep

SWEEP_FILE = "sweep.json"
FORMAT = "roofline-sweep/1"
SUMMARY = "summary.csv"
LOCK_FILE = ".sweep.lock"  # held (flock) by the one command writing the folder
CHART = "sweep"  # plot_sweep writes CHART.png and CHART.svg
CHART_FILES = (f"{CHART}.png", f"{CHART}.svg")
LAYOUT = f"one run directory per point, {SWEEP_FILE}, {SUMMARY}, {CHART}.png/.svg"  # for help texts
STATUSES = ("done", "failed", "interrupted", "pending")  # sweep.json's, as roofline/pipelines/sweeps.py records them
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

    @staticmethod
    def _refuse_special(path: Path) -> None:
        if (what := special_file(path)) is not None:
            raise SweepError(f"{path}: is {what}, not a regular file: a sweep folder holds only its own files")

    # -- sweep.json: written by one process (the parent), atomically
    @property
    def state_file(self) -> Path:
        return self.path / SWEEP_FILE

    def state(self) -> dict:
        """sweep.json's content ({"format", "points": {name: entry}}); an empty state when absent."""
        f = self.state_file
        self._refuse_special(f)
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
        for name, entry in data["points"].items():  # what a summary shows of a point without its run folder
            if entry.get("status") not in STATUSES:
                raise SweepError(
                    f"{f}: points[{name!r}].status must be one of {', '.join(STATUSES)}, got {entry.get('status')!r}"
                )
            for key in ("step_ms", "floor_ms", "gap", "wall_s"):
                if problem := number_problem(entry.get(key), positive=key != "wall_s", null=True):
                    raise SweepError(f"{f}: points[{name!r}].{key} {problem}")
        return data

    def write_state(self, state: dict) -> Path:
        """Replace sweep.json in one step: written to a temporary file beside it, flushed, renamed over
        it. A crash or error part-way leaves the old sweep.json whole and no temporary file."""
        state["updated"] = _now()
        f = self.state_file
        tmp = temp_beside(f)
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
        self._refuse_special(self.summary_file)
        try:
            table = pd.read_csv(self.summary_file)
        except (OSError, ValueError):
            return {}
        if not set(SUMMARY_COLUMNS) <= set(table.columns):
            return {}
        done = table[(table["status"] == "done") & table["step_ms"].notna()]
        rows = {r["run"]: r for r in done.to_dict("records")}
        for run, r in rows.items():  # the numbers a summary takes from here when a run folder is gone
            for key in ("step_ms", "floor_ms", "gap"):
                value = None if pd.isna(r[key]) and key != "step_ms" else r[key]
                if problem := number_problem(float(value) if isinstance(value, (int, float)) else value, null=True):
                    raise SweepError(f"{self.summary_file}: row {run!r}: {key} {problem}")
        return rows

    def outputs(self) -> list[Path]:
        """summary.csv and the chart's files, in the order they are put in place."""
        return [self.summary_file, *(self.path / name for name in CHART_FILES)]

    def seen(self) -> dict[Path, tuple | None]:
        """Each output's identity now (profiler/staging.py): taken when a sweep begins, so that one another
        command rewrote while it ran is refused, not replaced."""
        return {p: identity(p) for p in self.outputs()}

    def write_summary(
        self,
        table: pd.DataFrame,
        chart: bool = True,
        title: str | None = None,
        seen: dict | None = None,
        force: bool = False,
    ) -> list[Path]:
        """summary.csv and, with `chart`, sweep.png and .svg (ImportError without matplotlib), written
        beside and put in place together; an output that changed since `seen` (another command's) is
        refused unless `force` (OutputExists)."""
        staged = Staged(
            self.outputs(),
            replace=True,
            force=force,
            seen=seen,
            hint="pass --force to write over it, or summarize again once the other command is done",
        )
        with staged:
            table.to_csv(staged.path(self.summary_file), index=False)
            if chart:
                plot_sweep(table, staged.path(self.path / CHART), title=title)
            return staged.commit()

    @contextlib.contextmanager
    def lock(self):
        """Hold the folder for one command: a second sweep (or `--summarize --write`) of the same folder
        while one runs is refused in one line (both would write sweep.json and run the same points). The
        lock is the kernel's (flock): it ends with the process, however it ends."""
        self.path.mkdir(parents=True, exist_ok=True)
        f = open(self.path / LOCK_FILE, "a+")
        try:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                who = f.read().strip() or "another process"
                raise SweepError(
                    f"{self.path}: another roofline command is writing this sweep folder ({who}); "
                    "wait for it to end, or choose another --out"
                ) from None
            f.seek(0)
            f.truncate()
            f.write(f"pid {os.getpid()}\n")
            f.flush()
            yield self
        finally:
            f.close()
