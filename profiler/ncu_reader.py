"""Read a `.ncu-rep` with NVIDIA's `ncu_report` module into a pandas table, one row per launch."""

from __future__ import annotations

import collections
import copy
import dataclasses
import importlib
import multiprocessing
import os
import signal
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

from profiler.child import no_crash_dump, read_parts, start_child, stop_child
from profiler.errors import ReportError, refuse_special
from profiler.launch_table import LaunchTable, PcSamples
from profiler.ncu_action import metric_value, nvtx_text, rule_results
from profiler.ncu_paths import ncu_python_dirs
from profiler.ncu_pcs import COLUMNS as PC_COLUMNS
from profiler.ncu_pcs import MAX_LAUNCHES_PER_KERNEL, PcChild, PcCollector, first_launches
from profiler.ncu_pm import COLUMNS as PM_COLUMNS
from profiler.ncu_pm import pm_rows
from profiler.ncu_records import walk_records
from profiler.ncu_tidy import raw_metrics
from profiler.rundir import RunDir, sha256

# Columns every table has, whatever metrics the report holds.
ID_COLUMNS = ("launch", "range", "kernel", "mangled_name", "nvtx")


def import_ncu_report():
    """The PyPI `ncu-report` wheel, else the copy that ships in an Nsight Compute install."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for path in ncu_python_dirs():
        sys.path.insert(0, path)
        try:
            return importlib.import_module("ncu_report")
        except ImportError:
            sys.path.remove(path)
    raise ReportError(
        "cannot read .ncu-rep files: install the `ncu-report` package "
        "(pip install ncu-report) or set NCU_REPORT_PYTHON to Nsight Compute's extras/python"
    )


READ_TIMEOUT_S = 600.0  # a report that takes longer to read than this is taken as a hang


def read_ncu_report(
    path: str | Path,
    name: str | Path | None = None,
    metrics: Iterable[str] | None = None,
    timeout_s: float = READ_TIMEOUT_S,
    pc_samples: bool = False,
) -> LaunchTable:
    """One row per profiled launch; metric columns by ncu name, their units in `.units`.
    `pc_samples`: also read the PC samples of each kernel's first launches (profiler/ncu_pcs.py) as the
    children decode them (`.pc_samples`; `.pc_note` says why not, where they cannot be read): each launch
    is decoded once for both.

    Rule results (e.g. SOLBottleneck) go to `.rules`: launch -> list of dicts.
    `name` is the file to name in messages and as `.source` (the user's file when `path` is a
    decompressed copy). `metrics`: read only these (the rest of a `--set full` report is never
    decoded); None: all.
    The report is read in a child process: ncu_report aborts the whole process on some damaged
    files (seen: PyPI ncu-report 2026.3.1, one byte changed in a real report), and a crash or a
    hang (`timeout_s`) must end in a clear error, not take the caller down.
    """
    path = Path(path)
    name = Path(name) if name is not None else path
    refuse_special(path)
    wanted = None if metrics is None else tuple(dict.fromkeys(metrics))
    if not path.exists():
        raise ReportError(f"{name}: no such report")
    if path.stat().st_size == 0:
        raise ReportError(f"{name}: the report is empty (0 bytes)")
    module = import_ncu_report()
    install_dir = str(Path(module.__file__).parent) if _from_nsight_install(module) else None
    walk = walk_records(path)
    cut = walk.cut
    if cut is not None and walk.whole_launches == 0:
        raise ReportError(f"{name}: the report is {cut}: no launch to read")
    if cut is None:
        got = _read_in_child(path, install_dir, wanted, timeout_s, name, pc_samples)
    else:  # ncu_report reads nothing past a cut header: read the whole records alone
        started = _PREFETCHED.pop((str(path.resolve()), wanted, pc_samples), None)
        if started is not None:  # a read of the cut file itself: not used
            started.discard()
        with tempfile.TemporaryDirectory(prefix="roofline-cut-") as tmp:
            whole = Path(tmp) / path.name
            with open(path, "rb") as src, open(whole, "wb") as dst:
                dst.write(src.read(walk.whole_bytes))
            shown = f"{name}: the report is {cut}; its whole records"
            got = _read_in_child(whole, install_dir, wanted, timeout_s, shown, pc_samples)
    rows, units, rules, pcs, pm = got
    if not rows:
        raise ReportError(f"{name}: the report holds no kernel launches (no kernel was profiled)")
    import pandas as pd  # lazy: prefetch() starts a read before the caller has imported pandas

    pm_frame = pd.DataFrame(pm, columns=PM_COLUMNS) if pm else None
    table = LaunchTable(pd.DataFrame(rows), source=str(name), units=units, rules=rules, cut=cut, pm_samples=pm_frame)
    if not pc_samples:
        return table
    pc_rows, functions, pc_error = pcs
    if pc_error:
        note = f"PC samples not read (no per-instruction breakdown of where the warps wait): {name}: {pc_error}"
        return dataclasses.replace(table, pc_note=note)
    frame = pd.DataFrame(first_launches(pc_rows), columns=PC_COLUMNS)
    return dataclasses.replace(table, pc_samples=PcSamples(frame, functions))


def _from_nsight_install(module) -> bool:
    """True for the ncu_report.py shipped in an Nsight Compute install's extras/python."""
    return Path(getattr(module, "__file__", "")).name == "ncu_report.py"


class _ChildRead:
    """A report being read by a child process. The PyPI module is read in a fork of this process
    (cheap: it is already imported); the install's module in a fresh interpreter, since the one in
    Nsight Compute 2025.3.1's extras/python crashed (segfault in IMetric.unit(), seen on the H200)
    and needs its own sys.path."""

    def __init__(
        self,
        path: Path,
        install_dir: str | None,
        metrics: tuple[str, ...] | None,
        part: tuple[int, int] = (0, 1),
        pc: bool = False,
    ):

        method = "spawn" if install_dir or "fork" not in multiprocessing.get_all_start_methods() else "fork"
        ctx = multiprocessing.get_context(method)
        self.path, self.install_dir = path, install_dir
        self.stat = _stat(path)
        # the library's own stderr lines (absl), shown on a crash
        self.log = tempfile.NamedTemporaryFile(prefix="roofline-ncu-report-", suffix=".log")
        self.receive, self.child = start_child(
            ctx, _child_main, str(path), install_dir, metrics, self.log.name, part, pc
        )

    def discard(self) -> None:
        stop_child(self.child, self.receive)
        self.log.close()

    def result(self, timeout_s: float, name: str | Path):
        """(rows, units, rules, (pc rows, traits, pc error), PM rows), or a one-line ReportError naming `name` for a
        crash, a hang or a bad file."""
        child = self.child
        try:
            if not self.receive.poll(timeout_s):
                raise ReportError(
                    f"{name}: reading the report took over {timeout_s:.0f} s; stopped it "
                    "(a damaged file can make ncu_report loop)"
                )
            status, payload = self.receive.recv()
        except (EOFError, OSError):
            child.join(5)
            self.log.seek(0)
            said = [ln.strip() for ln in self.log.read().decode(errors="replace").splitlines() if ln.strip()]
            said = [ln for ln in said if "Check failed" in ln or "rror" in ln] or said
            raise ReportError(
                _crash_message(name, self.install_dir, child.exitcode, said[-1][-160:] if said else None)
            ) from None
        finally:
            self.receive.close()
            if child.is_alive():
                child.kill()
            child.join(5)
            self.log.close()
        if status == "error":
            raise ReportError(f"{name}: {payload}")
        return payload


def _read_in_child(
    path: Path,
    install_dir: str | None,
    metrics: tuple[str, ...] | None,
    timeout_s: float,
    name: str | Path,
    pc: bool = False,
):
    """(rows, units, rules, (pc rows, traits, pc error), PM rows) read by child processes (a prefetched read of the
    same unchanged file, metrics and PC choice, when one was started); errors name `name`."""
    started = _PREFETCHED.pop((str(path.resolve()), metrics, pc), None)
    key = (sha256(path), install_dir, metrics, pc)
    if key in _DONE:  # this very content read before in this process, as asked now
        if started is not None:
            started.discard()
        _DONE.move_to_end(key)
        return copy.deepcopy(_DONE[key])
    if started is not None and started.stat == _stat(path) and started.install_dir == install_dir:
        got = started.result(timeout_s, name)
    else:
        if started is not None:  # the file changed since: that read is not this file's
            started.discard()
        got = _PartsRead(path, install_dir, metrics, pc).result(timeout_s, name)
    _DONE[key] = copy.deepcopy(got)
    while len(_DONE) > DONE_READS:
        _DONE.popitem(last=False)
    return got


class _PartsRead:
    """One report read by several forked children, each decoding every n-th launch (ncu_report
    decodes launch by launch, so the parts run side by side on the cores); the parts are merged
    in launch order. Any error is re-read by one child, so its message is the serial read's."""

    def __init__(self, path: Path, install_dir: str | None, metrics: tuple[str, ...] | None, pc: bool = False):
        n = 1 if install_dir else read_parts(READ_PARTS)  # spawned interpreters: one
        self.path, self.install_dir, self.metrics, self.pc = path, install_dir, metrics, pc
        self.stat = _stat(path)
        # with several parts, the PC samples in a child of their own that decodes only the launches it needs
        self.pcs = PcChild(multiprocessing.get_context("fork"), str(path), None) if pc and n > 1 else None
        self.parts = [_ChildRead(path, install_dir, metrics, (k, n), pc and n == 1) for k in range(n)]

    def discard(self) -> None:
        for part in self.parts:
            part.discard()
        if self.pcs is not None:
            self.pcs.discard()

    def result(self, timeout_s: float, name: str | Path):
        if len(self.parts) == 1:
            return self.parts[0].result(timeout_s, name)
        got, failed = [], False
        for part in self.parts:
            try:
                got.append(part.result(timeout_s, name))
            except ReportError:
                failed = True
        if failed:
            if self.pcs is not None:
                self.pcs.discard()
            return _ChildRead(self.path, self.install_dir, self.metrics, pc=self.pc).result(timeout_s, name)
        rows = sorted((row for r, *_ in got for row in r), key=lambda row: row["launch"])
        if self.pcs is not None:  # each kernel's first launches: all the PC child still has to read
            first: dict[str, list[int]] = {}
            for row in rows:
                if len(first.setdefault(row["kernel"], [])) < MAX_LAUNCHES_PER_KERNEL:
                    first[row["kernel"]].append(row["launch"])
            self.pcs.want({n for launches in first.values() for n in launches})
            got = [*got, ([], {}, {}, self.pcs.result(timeout_s), [])]
        units: dict[str, str] = {}
        rules: dict[int, list] = {}
        pc_rows: list[dict] = []
        functions: dict[str, dict] = {}
        errors = []
        pm = sorted((r for *_, part_pm in got for r in part_pm), key=lambda r: r["launch"])
        for _, u, ru, (pr, fn, err), _ in got:
            for metric, unit in u.items():
                units.setdefault(metric, unit)
            rules.update(ru)
            pc_rows += pr
            for kernel, traits in fn.items():
                functions.setdefault(kernel, traits)
            errors += [err] if err else []
        return rows, units, rules, (pc_rows, functions, errors[0] if errors else None), pm


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


# Reads done in this process, by the report's content (sha256), ncu_report's install, metrics and PC choice ->
# what the children returned: the same bytes asked the same way again (a notebook, compare of a run with
# itself, a sweep's summary) are not decoded again. A copy goes out each time: the caller may change it.
_DONE: collections.OrderedDict = collections.OrderedDict()
DONE_READS = 8  # the most recent reads kept
# Reads started ahead of need by prefetch(): (resolved path, metrics, with PC samples) -> the read in flight.
_PREFETCHED: dict[tuple[str, tuple[str, ...] | None, bool], _PartsRead] = {}
READ_PARTS = 4  # children per report at most (profiler/child.py read_parts)


def prefetch(path: str | Path, metrics: Iterable[str] | None = None, pc_samples: bool = False) -> None:
    """Start reading an `.ncu-rep` in a child process now, so it overlaps the caller's own imports;
    the next read_ncu_report of the same unchanged file and metrics takes the result. Only a head
    start: anything unusual (gzip, a missing file, no ncu_report) is left to the real read."""
    try:
        path = Path(path)
        if not path.is_file():  # a FIFO would block here: the real read refuses it
            return
        with open(path, "rb") as f:
            if f.read(4) != b"NVR\x00":
                return
        if walk_records(path).cut:  # read from its whole records by the real read
            return
        wanted = None if metrics is None else tuple(dict.fromkeys(metrics))
        module = import_ncu_report()
        install_dir = str(Path(module.__file__).parent) if _from_nsight_install(module) else None
        _PREFETCHED[(str(path.resolve()), wanted, pc_samples)] = _PartsRead(path, install_dir, wanted, pc_samples)
    except Exception:  # noqa: BLE001 - the real read reports what is wrong
        return


def discard_prefetched() -> None:
    """End the reads prefetch() started that nothing took (the command failed before reading)."""
    while _PREFETCHED:
        _PREFETCHED.popitem()[1].discard()


def _crash_message(name: str | Path, install_dir: str | None, exitcode: int | None, said: str | None) -> str:
    how = (
        f"signal {signal.Signals(-exitcode).name}"
        if exitcode is not None and exitcode < 0
        else f"exit status {exitcode}"
    ) + (f"; it said: {said}" if said else "")
    if install_dir:
        return (
            f"{name}: the ncu_report module from the Nsight Compute install crashed while reading this "
            f"report ({how}); install the PyPI package instead: pip install ncu-report"
        )
    return (
        f"{name}: ncu_report crashed reading this file ({how}): the report is damaged or cut short; "
        "capture it again, or check it with `ncu -i` on a machine with Nsight Compute"
    )


def _child_main(
    send,
    path: str,
    install_dir: str | None,
    metrics: tuple[str, ...] | None,
    log: str,
    part: tuple[int, int] = (0, 1),
    pc: bool = False,
) -> None:
    try:
        no_crash_dump()  # a crash here is reported by the parent, in one line
        with open(log, "ab") as f:  # the C++ library logs parse problems straight to stderr
            os.dup2(f.fileno(), 2)
        if install_dir:
            sys.path.insert(0, install_dir)  # the same ncu_report.py the parent found
        module = importlib.import_module("ncu_report")
        send.send(("ok", _read_rows(module, Path(path), metrics, part, pc)))
    except ReportError as exc:
        send.send(("error", str(exc)))
    except BaseException as exc:  # anything else still ends as one clear line in the parent
        send.send(("error", f"not a readable Nsight Compute report ({type(exc).__name__}: {exc})"))
    finally:
        send.close()


def _read_rows(
    ncu_report, path: Path, metrics: tuple[str, ...] | None = None, part: tuple[int, int] = (0, 1), pc: bool = False
):
    """(rows, units, rules, (pc rows, traits, pc error), PM rows) from the report: one row dict per launch; `part`
    (k, n): only the launches whose number is k modulo n (launches are numbered across all ranges); `pc`:
    the PC samples of each kernel's first launches among them too (profiler/ncu_pcs.py), read from the
    launch just decoded (a failure there stops only them, said as the pc error). PM rows: the PM sampling
    series of each launch that holds them (profiler/ncu_pm.py). Its errors do not name the file: the parent
    names the one the user gave."""
    try:
        ctx = ncu_report.load_report(str(path))
    except Exception as exc:  # the library raises several types for a bad file
        raise ReportError(f"not a readable Nsight Compute report ({exc})") from exc
    rows: list[dict] = []
    pm: list[dict] = []
    units: dict[str, str] = {}
    rules: dict[int, list] = {}
    collect, pc_error = (PcCollector() if pc else None), None
    launch = 0
    k, n = part
    try:
        for r in range(ctx.num_ranges()):
            rng = ctx.range_by_idx(r)
            for a in range(rng.num_actions()):
                if launch % n != k:  # another child's launch: not decoded here
                    launch += 1
                    continue
                action = rng.action_by_idx(a)
                names = action.metric_names()
                if not action.name() or not names:
                    raise ReportError(
                        f"report is truncated or damaged: launch {launch} has no "
                        f"kernel name or metrics ({launch} complete launches before it)"
                    )
                row = {
                    "launch": launch,
                    "range": r,
                    "kernel": action.name(),
                    "mangled_name": action.name(action.NameBase_MANGLED),
                    "nvtx": nvtx_text(action),
                }
                for name in names if metrics is None else metrics:
                    metric = action.metric_by_name(name)
                    if metric is None:
                        continue
                    row[name] = value = metric_value(metric)
                    if name not in units and value is not None and not isinstance(value, str):
                        units[name] = metric.unit() or ""
                rows.append(row)
                rules[launch] = rule_results(action)
                pm += pm_rows(action, launch)
                if collect is not None and pc_error is None:
                    try:
                        collect.add(action, launch)
                    except Exception as exc:  # noqa: BLE001 - the launches stand; the note says what failed
                        pc_error = f"launch {launch}: {type(exc).__name__}: {exc}"
                launch += 1
    except ReportError:
        raise
    except Exception as exc:
        raise ReportError(f"report is damaged or truncated at launch {launch} ({exc})") from exc
    pcs = collect.result() if collect is not None else ([], {})
    return rows, units, rules, (*pcs, pc_error), pm


def prefetch_capture(path: str | Path) -> None:
    """prefetch() the Nsight Compute reports `roofline analyze PATH` will read (a report, or a run
    directory's own reports as its manifest names them), with the metrics the analysis reads."""

    try:
        p = Path(path)
        files = [p / e.path for e in RunDir(p).manifest().reports if e.tool == "ncu"] if RunDir.is_run(p) else [p]
    except Exception:  # noqa: BLE001 - the real read reports what is wrong
        return
    for f in files:
        prefetch(f, raw_metrics(), pc_samples=True)
