"""One way to put output in place: write it into a hidden temporary beside its final path, then move it
there in one step, refusing what exists unless forced and what appeared meanwhile. A run directory
(profiler/run_writer.py), a report and its charts, bench.csv and bench.json, `compare -o`, a sweep's
summary and chart, and calibrate's measured file all go through here, so two commands writing one place
never leave a mix of both: one wins, the other is refused (exit 2) and leaves nothing.

    staged = Staged([out / "report.md", out / "report_roofline.png"])   # refused now if one exists
    write(staged.path(out / "report.md"))                               # into the hidden folder
    staged.commit()                                                     # all in place, or none

A new file is placed with a hard link, which never replaces (the first writer wins); a folder with a
rename, which never replaces a folder that holds anything. `replace=True` is for files a command owns
and rewrites (a sweep's summary, the user's calibration): they are replaced only if nobody changed them
since the command began.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from pathlib import Path

from kernels.errors import BadInput
from profiler.errors import special_file


class OutputExists(BadInput, FileExistsError):
    """An output that exists, or appeared while this one was written: replaced only when forced."""


def temp_beside(final: Path, kind: str = "tmp") -> Path:
    """A hidden name beside `final` no other process picks: `.<name>.<kind>-<pid>-<ns>`."""
    final = Path(final)
    return final.parent / f".{final.name}.{kind}-{os.getpid()}-{time.time_ns()}"


def identity(path: Path) -> tuple | None:
    """What tells one version of a file from another (inode, device, mtime, size); None when absent."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_dev, st.st_mtime_ns, st.st_size)


def _link_new(tmp: Path, final: Path) -> None:
    """Put the file `tmp` at `final` only if nothing is there (os.link never replaces); FileExistsError if
    something is. Where hard links are not allowed, a check and a rename (a window of one rename)."""
    try:
        os.link(tmp, final)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        if os.path.lexists(final):
            raise FileExistsError(errno.EEXIST, "exists", str(final)) from None
        os.rename(tmp, final)
        return
    os.unlink(tmp)


def place_dir(tmp: Path, final: Path, force: bool) -> None:
    """Move the folder `tmp` to `final` in one rename. Without `force`, anything at `final` raises
    FileExistsError (rename itself refuses a folder that holds files); with it, an existing `final` is
    moved aside and removed only once the new folder is in place."""
    old = None
    if os.path.lexists(final):
        if not force:
            raise FileExistsError(errno.EEXIST, "exists", str(final))
        old = temp_beside(final, "old")
        os.rename(final, old)
    try:
        os.rename(tmp, final)
    except OSError as exc:
        if old is not None:
            os.rename(old, final)
        if exc.errno in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise FileExistsError(errno.EEXIST, "appeared", str(final)) from None
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True) if old.is_dir() else old.unlink(missing_ok=True)


class Staged:
    """Files that go into place together, written first into one hidden folder beside them.

    `finals`: the paths, in the order they are placed (the first is the one two writers contend for).
    Refused at once: a final that exists (unless `force`, or `replace` for files the command owns), a
    final that is a folder or a special file. At `commit()`: a new file that appeared meanwhile, or an
    owned one that changed, unless `force`; then nothing of this output is left in place. `hint` ends
    each refusal (the option that forces it, or another place). `seen`: each final's `identity()` when
    the command began (default: now), for a command that measures for minutes before it writes. `keep`:
    a refused output stays in its hidden folder, named in the error (minutes of GPU time are not lost)."""

    def __init__(
        self,
        finals: list[Path],
        *,
        force: bool = False,
        replace: bool = False,
        hint: str = "pass --force to replace it, or choose another -o",
        seen: dict[Path, tuple | None] | None = None,
        keep: bool = False,
    ):
        self.finals = [Path(f) for f in finals]
        if len({f.name for f in self.finals}) != len(self.finals):
            raise ValueError("staged outputs need distinct names")
        self.force, self.replace, self.hint, self.keep = force, replace, hint, keep
        for f in self.finals:
            what = "a folder" if f.is_dir() else special_file(f)
            if what and os.path.lexists(f):
                raise OutputExists(f"{f}: is {what}, not a file it can write")
        self.seen = {f: (seen[f] if seen is not None and f in seen else identity(f)) for f in self.finals}
        taken = [f for f, seen in self.seen.items() if seen is not None]
        if taken and not (force or replace):
            raise OutputExists(f"{taken[0]}: already exists; {hint}")
        parent = self.finals[0].parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.folder = temp_beside(self.finals[0])
            self.folder.mkdir()
        except OSError as exc:
            raise OutputExists(f"{parent}: cannot write there ({exc.strerror or exc})") from None

    def path(self, final: Path) -> Path:
        """Where to write `final` until commit (same name, in the hidden folder)."""
        return self.folder / Path(final).name

    def __enter__(self) -> Staged:
        return self

    def __exit__(self, kind, exc, tb) -> None:
        if not (self.keep and isinstance(exc, OutputExists)):
            self.discard()

    def discard(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)

    def commit(self) -> list[Path]:
        """Put every written file in place (all or none, see the class) and return them."""
        written = [f for f in self.finals if self.path(f).is_file()]
        placed: list[Path] = []
        try:
            if not self.force:  # an owned file someone else rewrote since we began: refused before any move
                for f in written:
                    if self.seen[f] is not None and identity(f) != self.seen[f]:
                        raise OutputExists(f"{f}: changed while this was written (another command?); {self.hint}")
            for f in written:
                if self.force or self.seen[f] is not None:
                    os.replace(self.path(f), f)
                else:
                    try:
                        _link_new(self.path(f), f)
                    except FileExistsError:
                        raise OutputExists(
                            f"{f}: appeared while this was written (another command writing the same place?); "
                            f"nothing of this one was put in place; {self.hint}"
                        ) from None
                placed.append(f)
        except OutputExists as exc:
            self._undo(placed)
            if self.keep:  # the new output stays where it was written, and the error says where
                kept = [p for p in sorted(self.folder.iterdir())] if self.folder.is_dir() else []
                raise OutputExists(
                    f"{exc}; this one is kept at {self.folder} ({', '.join(p.name for p in kept)})"
                ) from None
            self.discard()
            raise
        except BaseException:
            self._undo(placed)
            self.discard()
            raise
        self.discard()
        return placed

    def _undo(self, placed: list[Path]) -> None:
        """Take out the new files this output added; replaced ones cannot be given back."""
        for f in placed:
            if self.seen[f] is None and not self.force:
                if self.keep:  # back into the hidden folder with the rest of this output
                    os.replace(f, self.path(f))
                else:
                    Path(f).unlink(missing_ok=True)
