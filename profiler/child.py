"""A child process that sends its one result down a pipe: how the report readers keep ncu_report
(which can crash or hang on a damaged file) out of the caller's process."""

from __future__ import annotations

import faulthandler
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.context import BaseContext
    from multiprocessing.process import BaseProcess


def start_child(ctx: BaseContext, target: Callable[..., None], *args: Any) -> tuple[Connection, BaseProcess]:
    """Start `target(send, *args)` as a daemon child of `ctx`; the caller keeps only the receiving end."""
    receive, send = ctx.Pipe(duplex=False)
    child = ctx.Process(target=target, args=(send, *args), daemon=True)
    child.start()
    send.close()
    return receive, child


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
