"""Run a profiler in its own process group, stream its output to a log, and end the whole group
on a time limit or Ctrl-C (a Ctrl-C at the terminal reaches only our process group, not the tool's)."""

from __future__ import annotations

import contextlib
import glob
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from profiler.errors import Interrupted, ProfilerError, ToolNotFound, ToolTimeout

GRACE_S = 5.0  # between SIGTERM and SIGKILL


@dataclass(frozen=True)
class ToolControl:
    """How a profiler's process is run: the environment it gets, where its progress lines go, the
    seconds it may take, and the name of that limit (said when it runs out)."""

    env: dict[str, str] | None = None
    progress: Callable[[str], None] | None = None
    timeout: float | None = None
    limit_name: str | None = None


PLAIN_RUN = ToolControl()  # the parent's environment, no progress lines, no time limit


@dataclass
class ToolResult:
    returncode: int
    lines: list[str]


def group_alive(pgid: int) -> bool:
    """Whether a process of group `pgid` still runs (zombies, dead but not yet reaped, do not count).
    Reads /proc; where there is none, any member the kernel still knows counts."""
    proc_dir = Path("/proc")
    if not proc_dir.is_dir():
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return False
        return True
    for stat in proc_dir.glob("[0-9]*/stat"):
        try:
            state, _ppid, group = stat.read_text().rsplit(")", 1)[1].split()[:3]
        except (OSError, ValueError):
            continue  # it ended while we looked
        if int(group) == pgid and state not in ("Z", "X"):
            return True
    return False


def kill_group(proc: subprocess.Popen, grace_s: float = GRACE_S) -> None:
    """SIGTERM the process group of `proc` (the tool and everything it started), then SIGKILL, and wait
    (up to `grace_s`) until none of it runs: a signal is delivered when the process next runs, so on a
    busy machine a child can outlive the kill() call by a moment."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, grace_s)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:  # the leader is gone; children that ignored SIGTERM still get KILL
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        break
    deadline = time.monotonic() + grace_s
    while group_alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)  # handled like Ctrl-C while a capture runs


@contextlib.contextmanager
def stop_signals_interrupt():
    """While inside: SIGTERM and SIGHUP raise Interrupted (a KeyboardInterrupt) in the main thread, so
    `kill PID` or a closed terminal ends the tool's process group and keeps the run, as Ctrl-C does.
    Elsewhere (another thread) it changes nothing. The previous handlers come back on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise Interrupted(signum)

    previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_tool(
    cmd: list[str],
    log: Path,
    tool: str,
    control: ToolControl = PLAIN_RUN,
    on_line: Callable[[str], None] | None = None,
) -> ToolResult:
    """Run `cmd` in a new session with `control.env` over the parent's environment, every output line
    into `log` (the command line first) and to `on_line` (the caller picks which reach
    `control.progress`).

    `control.timeout` (seconds) bounds the whole run: past it the tool's process group is ended and
    ToolTimeout names the limit. On KeyboardInterrupt (Ctrl-C, or SIGTERM / SIGHUP: Interrupted) the
    group is ended and the interrupt re-raised.
    """
    return Started(cmd, log, tool, control.env, on_line).result(control)


class Started:
    """A tool started now whose result is taken later (`result`): its output goes to `log` and `on_line`
    meanwhile, read on a thread. `end` stops it unasked (its process group), where the caller no longer
    needs it."""

    def __init__(
        self,
        cmd: list[str],
        log: Path,
        tool: str,
        env: dict[str, str] | None = None,
        on_line: Callable[[str], None] | None = None,
    ) -> None:
        self.tool, self.log = tool, log
        self._logf = open(log, "w")  # noqa: SIM115 - closed by result() or end()
        self._logf.write("$ " + shlex.join(cmd) + "\n")
        self._logf.flush()
        try:
            self.proc = _start(cmd, log, tool, env)
        except BaseException:
            self._logf.close()
            raise
        self.reader = _Reader(self.proc, self._logf, on_line)

    def result(self, control: ToolControl = PLAIN_RUN) -> ToolResult:
        """Wait for the tool to end (control.timeout seconds from now at most); as run_tool."""
        with stop_signals_interrupt(), self._logf:
            return self._finish(control)

    def end(self) -> None:
        """End the tool's process group and close its log."""
        with self._logf:
            kill_group(self.proc)
            self.reader.join(GRACE_S)

    def _finish(self, control: ToolControl) -> ToolResult:
        proc, reader, logf, tool, timeout = self.proc, self.reader, self._logf, self.tool, control.timeout
        limit_name = control.limit_name or (f"{timeout:g} s" if timeout is not None else "no")
        try:
            returncode = _wait(proc, reader, timeout)
        except KeyboardInterrupt as exc:
            kill_group(proc)
            reader.join(GRACE_S)
            logf.write(f"[roofline] interrupted ({getattr(exc, 'how', 'Ctrl-C')}): ended {tool}'s process group\n")
            raise
        except BaseException:
            kill_group(proc)
            reader.join(GRACE_S)
            raise
        if returncode is None:
            kill_group(proc)
            reader.join(GRACE_S)
            logf.write(f"[roofline] ended {tool}'s process group after {timeout:g} s (limit: {limit_name})\n")
            raise ToolTimeout(
                f"timed out: {tool} was still running at the {limit_name} limit; its process "
                "group was ended (give a long capture more time with --timeout SECONDS)",
                reader.lines,
                str(self.log),
            )
        reader.join(1.0)
        if reader.is_alive():  # something the tool started still holds its output: end it too
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            reader.join(GRACE_S)
        if reader.errors:
            raise reader.errors[0]
        return ToolResult(returncode=returncode, lines=reader.lines)


def _start(cmd: list[str], log: Path, tool: str, env: dict[str, str] | None) -> subprocess.Popen:
    """`cmd` in a new session (its own process group), stdout and stderr merged, line-buffered text."""
    try:
        return subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            env={**os.environ, **(env or {})},
            bufsize=1,
            start_new_session=True,
        )
    except OSError as exc:
        raise ProfilerError(f"cannot start {tool} ({cmd[0]}): {exc.strerror}", log_path=str(log)) from None


class _Reader:
    """The tool's output, read on a thread as it comes: each line into `lines`, the log and `on_line`; the
    callback's first error is kept in `errors` (re-raised in the caller's thread) and stops further calls."""

    def __init__(self, proc: subprocess.Popen, logf, on_line: Callable[[str], None] | None) -> None:
        assert proc.stdout is not None
        self.lines: list[str] = []
        self.errors: list[BaseException] = []
        self._proc, self._logf, self._on_line = proc, logf, on_line
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        for line in self._proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            self._logf.write(line + "\n")
            self._logf.flush()
            if self._on_line and not self.errors:
                try:
                    self._on_line(line)
                except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
                    self.errors.append(exc)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout=timeout)

    def is_alive(self) -> bool:
        return self._thread.is_alive()


def _wait(proc: subprocess.Popen, reader: _Reader, timeout: float | None) -> int | None:
    """The tool's exit status, polled every 0.2 s; None once it has run `timeout` seconds. A callback's error
    is raised here, as soon as the poll sees it."""
    started = time.monotonic()
    while True:
        try:
            return proc.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            pass
        if reader.errors:
            raise reader.errors[0]
        if timeout is not None and time.monotonic() - started > timeout:
            return None


def find_tool(
    name: str, explicit: str | None, env_var: str, install_globs: tuple[str, ...], title: str, option: bool = True
) -> str:
    """`explicit` (--NAME), then $ENV_VAR, then PATH, then the usual install folders (newest last).
    `option`: whether the command asking takes --NAME, so that the error names it only then."""
    for candidate in (explicit, os.environ.get(env_var)):
        if candidate:
            path = shutil.which(candidate)
            if path:
                return path
            raise ToolNotFound(f"{name} not found at {candidate!r} (from --{name} or ${env_var})")
    path = shutil.which(name)
    if path:
        return path
    for pattern in install_globs:
        hits = sorted(glob.glob(pattern))
        if hits:
            return hits[-1]
    where = f"put it on PATH, set ${env_var}, or pass --{name} PATH" if option else f"put it on PATH or set ${env_var}"
    raise ToolNotFound(f"{name} ({title}) not found: {where}; looked in {', '.join(install_globs)}")


def tool_version(exe: str, is_version_line: Callable[[str], bool]) -> str | None:
    """The version line `EXE --version` prints (the last line when none matches), None if it fails."""
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return next((ln for ln in lines if is_version_line(ln)), lines[-1] if lines else None)
