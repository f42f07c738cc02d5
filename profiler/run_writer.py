"""Writing a run directory (profiler/rundir.py names its files and reads them): a hidden temporary folder
beside the final path, every file named by role, the manifest's checksums, and the rename into place on
`commit()`; a failed or interrupted run is kept under `<name>.failed-<time>` with its error and logs.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import time
from datetime import datetime, timezone
from pathlib import Path

from kernels.errors import CaptureFailed
from profiler.checks import strict_json
from profiler.errors import Interrupted
from profiler.rundir import (
    FILES,
    MANIFEST,
    REPORT_STEM,
    Manifest,
    ReportEntry,
    RunDir,
    RunDirError,
    RunSpec,
    failed_name,
    file_name,
    sha256,
)
from profiler.staging import place_dir, temp_beside


def _next_free(final: Path) -> Path:
    """`final` with the first `-2`, `-3`, ... suffix nothing holds yet."""
    n = 2
    while Path(f"{final}-{n}").exists():
        n += 1
    return Path(f"{final}-{n}")


class RunWriter:
    """Writes one run: in a hidden folder beside `final`, renamed into place by `commit()`.

    `final` must not exist unless `force`; with `force` the old run is replaced only once the new
    one is complete. `fail(error)` keeps what was captured under `<final>.failed-<time>`.
    With `unique`, a taken `final` gets a `-2`, `-3`, ... suffix instead of an error, also when it is
    taken while the run is written (two default-named runs started in one second).
    """

    def __init__(self, final: str | Path, force: bool = False, unique: bool = False):
        final = self.asked = Path(final)
        if final.exists() and not force:
            if not unique:
                what = "a run directory" if RunDir.is_run(final) else "a file or folder"
                raise RunDirError(
                    f"{final}: already exists ({what}); pass --force to replace it, or choose another --out"
                )
            final = _next_free(final)
        self.final = final
        self.force = force
        self.unique = unique
        self.path = temp_beside(final)  # the one mechanism every output uses (profiler/staging.py)
        try:
            final.parent.mkdir(parents=True, exist_ok=True)
            self.path.mkdir()
        except OSError as exc:
            raise RunDirError(
                f"{final}: cannot create a run directory there ({exc.strerror or exc}); choose another --out"
            ) from None
        self.manifest = Manifest(status="failed", created=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self.started = time.time()

    # -- content
    def file(self, role: str) -> Path:
        """Where the run's file of this role (a key of FILES) goes: ask for a path, never join a name."""
        return self.path / file_name(role)

    def write_json(self, role: str, data) -> Path:
        """The run's file of `role` as strict JSON (null, never a bare NaN: profiler/checks.py)."""
        p = self.file(role)
        p.write_text(strict_json(data) + "\n")
        return p

    def write_spec(self, spec: RunSpec) -> Path:
        return self.write_json("spec", spec.to_dict())

    def log_command(self, cmd: list[str]) -> None:
        line = shlex.join(cmd)
        self.manifest.commands.append(line)
        with open(self.file("commands"), "a") as f:
            f.write(line + "\n")

    def _named(self, path: Path, role: str) -> Path:
        """`path` if it is the run's file of `role`; else a ValueError (a file the writer did not name)."""
        path = Path(path)
        if path.parent.resolve() != self.path.resolve() or path.name != file_name(role):
            raise ValueError(f"{path}: not the run's {role} file ({self.file(role)})")
        return path

    def add_report(self, path: Path, tool: str, **info) -> ReportEntry:
        """Name `path` in the manifest as the run's report of `tool` (a role: ncu, nsys, nsys-sqlite, timing)."""
        path = self._named(path, tool)
        entry = ReportEntry(path=path.name, tool=tool, sha256=sha256(path), bytes=path.stat().st_size, **info)
        self.manifest.reports.append(entry)
        return entry

    def add_log(self, path: Path) -> None:
        """Name a log in the manifest (shown with a failed run's error); it must be one FILES names."""
        path = Path(path)
        if path.name not in FILES.values() or path.parent.resolve() != self.path.resolve():
            raise ValueError(f"{path}: not a file of this run ({', '.join(FILES.values())})")
        if path.name not in self.manifest.logs:
            self.manifest.logs.append(path.name)

    def keep_left_by(self, tool: str) -> list[str]:
        """Name in the manifest the logs and raw stream a failed `tool` ("nsys") left; return their names."""
        kept = sorted(self.path.glob(f"{REPORT_STEM}.{tool}*.log")) + sorted(self.path.glob(f"{REPORT_STEM}*.qdstrm"))
        for p in kept:
            if p.name not in self.manifest.logs:
                self.manifest.logs.append(p.name)
        return [p.name for p in kept]

    # -- ending
    def _write_manifest(self) -> None:
        self.manifest.wall_s = round(time.time() - self.started, 1)
        reports = {e.path for e in self.manifest.reports}
        self.manifest.files = {
            p.name: sha256(p)
            for p in sorted(self.path.iterdir())
            if p.is_file() and p.name != MANIFEST and p.name not in reports
        }
        self.write_json("manifest", self.manifest.to_dict())

    def commit(self) -> Path:
        """Mark complete and move into place (replacing an old run only now, when forced)."""
        self.manifest.status, self.manifest.error = "complete", None
        self._write_manifest()
        while True:
            try:
                place_dir(self.path, self.final, self.force)
                break
            except FileExistsError:
                if not self.unique:  # a name the user chose: theirs to decide
                    raise RunDirError(
                        f"{self.final}: appeared while this run was being written; the new run is kept at {self.path}"
                    ) from None
                self.final = _next_free(self.asked)  # two default-named runs in one second: both kept
        self.path = self.final
        return self.final

    def discard(self) -> None:
        """Remove the run being written: for a run refused before anything was captured."""
        shutil.rmtree(self.path, ignore_errors=True)

    def kept_error(self, exc: BaseException, running: str | None = None) -> BaseException:
        """Keep the run marked failed (fail()) and return the error to raise from `exc`: Interrupted for
        Ctrl-C, SIGTERM or SIGHUP (naming the tool `running`, whose process group was ended), else
        CaptureFailed. Both carry kept_at; a message naming files in the folder being written names them
        where they are kept."""
        if isinstance(exc, KeyboardInterrupt):
            signum = exc.exit_code - 128 if isinstance(exc, Interrupted) else signal.SIGINT
            how = "Ctrl-C" if signum == signal.SIGINT else signal.Signals(signum).name
            reason = (
                f"interrupted ({how}) while {running} was running; its process group was ended"
                if running
                else f"interrupted ({how})"
            )
            return Interrupted(signum, kept_at=self.fail(reason), reason=reason)
        reason = (str(exc).splitlines() or [type(exc).__name__])[0]
        writing = str(self.path)
        kept = self.fail(reason)
        return CaptureFailed((str(exc) or reason).replace(writing, str(kept)), kept_at=kept, reason=reason)

    def fail(self, error: str) -> Path:
        """Keep what was captured, marked failed, beside the final path; return where it went. The logs a
        tool wrote before it failed are named in the manifest (a failing tool never got to add them)."""
        self.manifest.status, self.manifest.error = "failed", error
        for name in FILES.values():
            if name.endswith(".log") and (self.path / name).is_file() and name not in self.manifest.logs:
                self.manifest.logs.append(name)
        self._write_manifest()
        dest, n = failed_name(self.final), 2
        while dest.exists():
            dest, n = failed_name(self.final, n), n + 1
        os.rename(self.path, dest)
        self.path = dest
        return dest
