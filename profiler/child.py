"""A child process that sends its one result down a pipe: how the report readers keep ncu_report
(which can crash or hang on a damaged file) out of the caller's process."""

from __future__ import annotations

import faulthandler
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess


def start_child(ctx: BaseContext, target: Callable[..., None], *args: Any) -> tuple[Connection, BaseProcess]:
    """Start `target(send, *args)` as a daemon child of `ctx`; the caller keeps only the receiving end."""
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=target, args=(send, *args), daemon=True)
    with _main_without_file():
        child.start()
    send.close()
    return receive, child


@contextmanager
def _main_without_file() -> Iterator[None]:
    """A spawned child first runs the parent's __main__ again from its file. A program read from standard input
    (`python - < script`, a heredoc) has a __file__ of "<stdin>", which is no file: the child would die before
    the target ran. Such a __file__ is hidden while the child starts, as for an interactive session."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if path is None or os.path.exists(path):
        yield
        return
    del main.__file__
    try:
        yield
    finally:
        main.__file__ = path


def no_crash_dump() -> None:
    """Called first in a child: its crash is the parent's one-line ReportError, so no "Fatal Python
    error" and frame dump from a faulthandler it inherited (pytest's, or PYTHONFAULTHANDLER's), which
    writes to a descriptor of its own that redirecting stderr does not reach."""
    faulthandler.disable()


def stop_child(child: BaseProcess, receive: Connection) -> None:
    """Kill a child whose result is no longer wanted, and close its pipe."""
    child.kill()
    child.join(5)
    receive.close()


def read_parts(most: int) -> int:
    """How many children (at most `most`) decode a report side by side: one core is left to this process
    (its imports and the analysis run beside the read), and with one child the PC samples come from the
    launches it decodes (no child of their own decoding launches again and starting a second disassembler).
    On a 2-core machine one child costs less CPU than two and a PC child (docs/results/reader-speed.md)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores - 1, most))
