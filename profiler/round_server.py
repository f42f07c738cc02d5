"""The timing pass's rounds, each its own process, without paying Python's and torch's start-up in each.

    python -m profiler.round_server PLAN.json      # {"rounds": [[python, -m, profiler.harness, ...], ...],
                                                    #  "preload": ["profiler.harness", "kernel:triton_mla_fast"]}

The server imports what the rounds need (torch, triton, the kernel's module) but never starts CUDA, then
forks one child per round, in turn; each child starts CUDA itself and runs its round's command line as
`python -m MODULE ...` (or `python SCRIPT ...`) would. A forked child cannot use CUDA if its parent started
it: before each fork the server checks that neither torch nor Triton has, and otherwise runs that round in a
fresh interpreter. Rounds stay separate processes (what varies between runs is what the rounds measure);
only the interpreter's start and the imports are shared. Triton's compile cache is on disk either way.

Each round's output is framed in the server's log:

    # round 2 of 4: python -m profiler.harness ... --timing-out .../round1.json
    ...the round's own output...
    [round-server] round 2 of 4: exit 0 after 1.9 s (fork)

A plan with `wait_for` (a path) instead of `rounds` imports first and then waits for the rounds to be
written there: `roofline profile` starts its server that way before ncu and nsys run (AheadServer), so the
imports, seconds of them, overlap the captures. run_rounds starts a server (profiler/proc.py Started: one
process group, the time limit, Ctrl-C) and hands it the rounds at once or, where they cannot be forked,
runs one interpreter per round, and says which round failed.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import runpy
import shlex
import subprocess
import sys
import time
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from profiler.proc import PLAIN_RUN, Started, ToolControl, run_tool

MARK = "[round-server]"
END = re.compile(r"^\[round-server\] round (\d+) of (\d+): exit (-?\d+) after")
START = re.compile(r"^# round (\d+) of (\d+): ")
STARTS = ("fork", "exec")  # how a round's process begins (profiler/timing.py ROUND_STARTS)


# -- the server


def cuda_started() -> str | None:
    """Which library started CUDA in this process (torch, or Triton's driver), or None: a process that
    did must not fork children that use CUDA."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():
        return "torch"
    driver = sys.modules.get("triton.runtime.driver")
    config = getattr(driver, "driver", None)
    if config is not None and (getattr(config, "_default", None) or getattr(config, "_active", None)):
        return "triton"
    return None


def preload(names: list[str]) -> list[str]:
    """Import each module (`kernel:NAME`: the registry kernel's module); what failed, one line each (the
    round that needs it fails on it again and says so in its own output)."""
    failed = []
    for name in names:
        try:
            if name.startswith("kernel:"):
                from kernels.registry import get_kernel  # lazy: only the harness's rounds name a kernel

                get_kernel(name.removeprefix("kernel:")).load()
            else:
                importlib.import_module(name)
        except Exception as exc:  # noqa: BLE001 - the round reports it; the server only saves time
            failed.append(f"{name}: {type(exc).__name__}: {exc}".splitlines()[0])
    return failed


def run_in_child(args: list[str]) -> int:
    """Run `args` (an interpreter's arguments: `-m MODULE ...` or `SCRIPT ...`) as its __main__; its exit code."""
    try:
        if args[0] == "-m":
            sys.argv = [args[1], *args[2:]]
            sys.modules.pop(args[1], None)  # preloaded: run afresh as __main__, as `python -m` does
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(args)
            runpy.run_path(args[0], run_name="__main__")
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        print(exc.code, file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - as the interpreter would: the traceback, exit 1
        traceback.print_exc()
        return 1
    return 0


def fork_round(cmd: list[str]) -> int:
    """Fork, run `cmd` in the child (run_in_child), wait; its exit code (-N: ended by signal N)."""
    sys.stdout.flush()
    sys.stderr.flush()
    with warnings.catch_warnings():
        # importing torch starts one native thread of its own; the child uses none of its state, and
        # PyTorch's DataLoader forks its workers after the same import
        warnings.filterwarnings("ignore", "This process .* is multi-threaded", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into the server's loop
        code = 1
        try:
            code = run_in_child(cmd[1:])
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code & 0xFF if code >= 0 else 1)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def await_rounds(path: Path, poll_s: float = 0.02) -> list[list[str]]:
    """The rounds written to `path` once it appears (`{"rounds": [...]}`; none: end unused). Also ends,
    with none, when the process that started this server has gone."""
    parent = os.getppid()
    while not path.is_file():
        if os.getppid() != parent:
            return []
        time.sleep(poll_s)
    return json.loads(path.read_text())["rounds"]


def serve(plan: dict) -> int:
    """Every round of `plan` in turn, each framed in the output; stops at the first that fails. A plan
    with `wait_for` (a path) and no rounds imports first, then waits for its rounds there (await_rounds)."""
    for line in preload(plan.get("preload", [])):
        print(f"{MARK} not preloaded: {line}", flush=True)
    if plan.get("wait_for"):
        print(f"{MARK} imported; waiting for the rounds", flush=True)
    rounds: list[list[str]] = plan["rounds"] if "rounds" in plan else await_rounds(Path(plan["wait_for"]))
    n = len(rounds)
    for i, cmd in enumerate(rounds, 1):
        print(f"# round {i} of {n}: {shlex.join(cmd)}", flush=True)
        t0 = time.monotonic()
        started = cuda_started()
        if started:
            print(f"{MARK} {started} started CUDA in the server: round {i} runs in a fresh interpreter", flush=True)
            code = subprocess.run(cmd).returncode
        else:
            code = fork_round(cmd)
        how = "exec" if started else "fork"
        print(f"{MARK} round {i} of {n}: exit {code} after {time.monotonic() - t0:.1f} s ({how})", flush=True)
        if code != 0:
            return code if code > 0 else 128 - code
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m profiler.round_server PLAN.json", file=sys.stderr)
        return 2
    return serve(json.loads(Path(args[0]).read_text()))


# -- the client


@dataclass(frozen=True)
class Rounds:
    """How the rounds ran: the first that failed (None: none did) with its exit code, every output line,
    and how their processes began (fork or exec)."""

    failed: int | None
    returncode: int
    lines: list[str] = field(default_factory=list)
    start: str = "fork"


def forkable(cmds: list[list[str]]) -> bool:
    """Whether the rounds can be forked from one server: each `python -m MODULE ...` or `python SCRIPT.py ...`
    of one interpreter, on Linux (where CUDA runs; macOS's libraries are not safe to fork after import)."""
    if not cmds or not sys.platform.startswith("linux"):
        return False
    exe = cmds[0][0]
    return all(len(c) >= 2 and c[0] == exe and ((c[1] == "-m" and len(c) >= 3) or c[1].endswith(".py")) for c in cmds)


def preloads(cmd: list[str]) -> list[str]:
    """What the server imports before the rounds: the round's module, and for the harness the timing code
    (torch, triton) and the kernel's module."""
    if cmd[1] != "-m":
        return []
    names = [cmd[2]]
    if cmd[2] == "profiler.harness":
        names.append("profiler.bench")
        if "--kernel" in cmd[:-1]:
            names.append("kernel:" + cmd[cmd.index("--kernel") + 1])
    return names


class AheadServer:
    """A round server started before its rounds are known: it imports what `preload` names (the rounds'
    modules, torch, triton, the kernel's module) while the caller does other work, then `run` hands it
    the rounds. `end` stops it unused. Every line it prints goes to `log`."""

    def __init__(self, python: str, preload: list[str], log: Path, scratch: Path, env: dict[str, str] | None = None):
        self.rounds_file = Path(scratch) / "rounds-go.json"
        plan = Path(scratch) / "rounds-plan.json"
        plan.write_text(json.dumps({"preload": preload, "wait_for": str(self.rounds_file)}))
        self._on_round: Callable[[int, str], None] | None = None
        self._last = ""
        self.log, self.ran, self.ended = Path(log), False, False
        self.started = Started(
            [python, "-m", "profiler.round_server", str(plan)], log, "the timing pass", env, self._seen
        )

    def _seen(self, line: str) -> None:
        end = END.match(line)
        if end is None:
            self._last = line if not (START.match(line) or line.startswith(MARK)) else self._last
        elif int(end[3]) == 0 and self._on_round:
            self._on_round(int(end[1]), self._last)

    def run(
        self,
        cmds: list[list[str]],
        control: ToolControl = PLAIN_RUN,
        on_round: Callable[[int, str], None] | None = None,
    ) -> Rounds:
        """Run `cmds` (each forked from the server, in turn) until one fails; `on_round(i, last line)` after
        each round that succeeds."""
        self._on_round, self.ran = on_round, True
        staged = self.rounds_file.with_suffix(".tmp")
        staged.write_text(json.dumps({"rounds": cmds}))
        staged.rename(self.rounds_file)  # whole, at once: the server reads it as soon as it is there
        try:
            done = self.started.result(control)
        finally:
            self.ended = True
        if done.returncode == 0:
            return Rounds(None, 0, done.lines, "fork")
        ends = [m for m in map(END.match, done.lines) if m]
        bad = next((m for m in ends if int(m[3]) != 0), None)
        if bad is not None:
            return Rounds(int(bad[1]), int(bad[3]), done.lines, "fork")
        begun = [int(m[1]) for m in map(START.match, done.lines) if m]
        return Rounds(max(begun, default=1), done.returncode, done.lines, "fork")

    def end(self) -> None:
        """Stop the server (no round runs that has not begun); nothing where it has ended."""
        if not self.ended:
            self.ended = True
            self.started.end()


def run_rounds(
    cmds: list[list[str]],
    log: Path,
    scratch: Path,
    control: ToolControl = PLAIN_RUN,
    on_round: Callable[[int, str], None] | None = None,
    start: str = "fork",
) -> Rounds:
    """Run each command line of `cmds` as its own process, in turn, until one fails: forked from one server
    (`start` "fork", where forkable) or each a fresh interpreter ("exec"). Every line goes to `log`;
    `on_round(i, last line)` after each round that succeeds; `scratch`: a folder for the server's plan."""
    if start not in STARTS:
        raise ValueError(f"start must be one of {', '.join(STARTS)}, got {start!r}")
    if start == "exec" or not forkable(cmds):
        return _exec_rounds(cmds, log, Path(scratch), control, on_round)
    server = AheadServer(cmds[0][0], preloads(cmds[0]), log, scratch, control.env)
    return server.run(cmds, control, on_round)


def _exec_rounds(
    cmds: list[list[str]], log: Path, scratch: Path, control: ToolControl, on_round: Callable[[int, str], None] | None
) -> Rounds:
    lines: list[str] = []
    with open(log, "w") as whole:
        for i, cmd in enumerate(cmds, 1):
            round_log = scratch / f"round{i}.log"
            done = run_tool(cmd, round_log, "the timing pass", control)
            whole.write(f"# round {i} of {len(cmds)}: {shlex.join(cmd)}\n")
            whole.write(round_log.read_text(errors="replace") if round_log.is_file() else "")
            whole.flush()
            lines += done.lines
            if done.returncode != 0:
                return Rounds(i, done.returncode, lines, "exec")
            if on_round:
                on_round(i, (done.lines or [""])[-1])
    return Rounds(None, 0, lines, "exec")


if __name__ == "__main__":
    sys.exit(main())
