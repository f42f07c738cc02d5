"""A report's PC samples as a table (profiler/ncu_pcs.py classifies each sampled instruction): read beside
the launches by the launch readers (profiler/ncu_reader.py, `pc_samples=True`), or alone by a forked child
here (ncu_report can abort on a damaged file)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pandas as pd

from profiler.child import no_crash_dump, start_child, stop_child
from profiler.errors import ReportError
from profiler.launch_table import PcSamples
from profiler.ncu_pcs import (  # noqa: F401 (the classes and their reading, as this module named them)
    ASYNC_COPY_OPS,
    COLUMNS,
    MAX_LAUNCHES_PER_KERNEL,
    MMA_OPS,
    MMA_PATH_OPS,
    WAIT_CLASSES,
    WAIT_MEANING,
    PcCollector,
    barrier_key,
    has_roles,
    instruction_class,
    load_barriers,
    opcode,
)
from profiler.ncu_reader import import_ncu_report
from profiler.readers import plain_file

READ_TIMEOUT_S = 600.0


def pc_table(rows: list[dict], functions: dict[str, dict]) -> PcSamples:
    """PcSamples from the rows and traits a PcCollector gathered."""
    return PcSamples(pd.DataFrame(rows, columns=COLUMNS), functions)


def _read(path: str) -> tuple[list[dict], dict[str, dict]]:
    ncu_report = import_ncu_report()

    ctx = ncu_report.load_report(path)
    collect = PcCollector()
    launch = 0
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            collect.add(rng.action_by_idx(a), launch)
            launch += 1
    return collect.result()


def _child(send, path: str) -> None:
    try:
        no_crash_dump()
        send.send(("ok", _read(path)))
    except BaseException as exc:  # noqa: BLE001 - one line in the parent
        send.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        send.close()


class PcRead:
    """A report's PC samples being read by a forked child (ncu_report can abort on a damaged file), so
    the caller can read the launches meanwhile; `result()` waits for them."""

    def __init__(self, path: str | Path, name: str | Path | None = None):
        self.shown = Path(name or path)
        if not Path(path).is_file():
            raise ReportError(f"{self.shown}: no such report")
        self._plain = plain_file(Path(path))
        plain = self._plain.__enter__()  # a gzip capture: decompressed for as long as the child reads it
        self._receive, self._child = start_child(multiprocessing.get_context("fork"), _child, str(plain))

    def discard(self) -> None:
        """Stop the read (the caller failed before it needed the result)."""
        stop_child(self._child, self._receive)
        self._plain.__exit__(None, None, None)

    def result(self, timeout_s: float = READ_TIMEOUT_S) -> PcSamples:
        try:
            if not self._receive.poll(timeout_s):
                raise ReportError(f"{self.shown}: reading its PC samples took over {timeout_s:.0f} s; stopped")
            status, payload = self._receive.recv()
        except (EOFError, OSError):
            raise ReportError(f"{self.shown}: ncu_report crashed reading the PC samples") from None
        finally:
            self._receive.close()
            if self._child.is_alive():
                self._child.kill()
            self._child.join(5)
            self._plain.__exit__(None, None, None)
        if status == "error":
            raise ReportError(f"{self.shown}: cannot read its PC samples ({payload})")
        return pc_table(*payload)


def read_pc_samples(path: str | Path, name: str | Path | None = None, timeout_s: float = READ_TIMEOUT_S) -> PcSamples:
    """`.frame`: one row per sampled PC per launch (COLUMNS; `pc` is the offset from the function's
    start); empty when the report has no PC samples; at most MAX_LAUNCHES_PER_KERNEL launches of each
    kernel. `.functions`: each sampled kernel's SASS traits. `name`: the path errors mention."""
    return PcRead(path, name).result(timeout_s)
