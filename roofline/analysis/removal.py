"""A removal experiment as evidence: the step timed with one part of a kernel's work compiled out (its
MMAs, its softmax, its gathers, everything but the loads), on the same GPU and workload as a capture.
Where the warp samples only say where warps wait, the experiment says what sets the pace: the part
whose removal saves the most. Written by `roofline removal` (roofline/pipelines/removal_experiment.py, format roofline-removal/1):

    {"format": "roofline-removal/1", "kernel": "_gluon_ring_kernel", "device": "NVIDIA H200",
     "method": "...", "made_by": "...", "workload": {"batch": 1, "q_len": 9, "tree_mask": "tree"},
     "rows": [{"ctx_len": 131072, "heads": 8, "page_size": 64, "variant": "full", "graph_ms": 0.0707}, ...]}

Variants: the kernel as shipped (`FULL`; the first file, the ring kernel's, named it "ring"), `no-mma`,
`no-softmax`, `no-gather`, `loads-only` (no MMA and no softmax), and `read`: a bare read of the same KV
bytes (what any reader of them takes; evidence, never a cause). A missing variant is left out of the
verdict, never guessed, and so is a cut that makes the step slower (it changed the compiled schedule).
What sets the pace: the loads, where they alone take LOADS_SET_THE_PACE of the step; else the part whose
removal saves ONE_PART of what removing all the math saves; else the math as one chain. A pipelined
kernel's cause becomes the experiment's; a classic kernel (one whose capture gave no pipelined cause)
keeps its own, with the experiment beside it as evidence.

A kernel that is no verify step (a library GEMM of the labelled corpus) has no ctx_len, heads or
page_size: its file names the op in its common workload, `{"op": "gemm", "m": 8192, "n": 8192, "k":
8192, "dtype": "bf16"}`, and its rows are variants alone (one point). Such a capture has no verify
workload either (a bare ncu report), so the file is matched by the GPU and its kernel's name alone; a
capture that names a verify workload is refused, as is a verify file on a capture without one.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from kernels.errors import BadInput
from kernels.spec import VerifyWorkload
from profiler.checks import number_problem, unknown_keys
from profiler.errors import special_file
from roofline.analysis.pipelined import REMOVAL_HINT

FORMAT = "roofline-removal/1"
FULL = "full"
FULL_ALIASES = {"ring": FULL}  # the ring kernel's file (docs/results/h200-ring-cuts.json) named it so
READ = "read"
CUTS = {"no-mma": "the MMAs", "no-softmax": "the softmax", "no-gather": "the gathers"}
LOADS_ONLY = "loads-only"
LOADS_SET_THE_PACE = 0.8  # the loads alone take 80% of the step or more: the math hides behind them
ONE_PART = 0.5  # a part sets the pace when removing it saves half of what removing all the math saves
SLOWER_BY = 0.02  # a cut that makes the step 2% slower changed the compiled schedule: left out
KEYS = ("ctx_len", "heads", "page_size")
VARIANTS = (FULL, *FULL_ALIASES, *CUTS, LOADS_ONLY, READ)  # a row of any other name is a misspelling
ROW_FIELDS = (*KEYS, "variant", "graph_ms")
WORKLOAD_FIELDS = tuple(f.name for f in dataclasses.fields(VerifyWorkload))
CHECKED = ("batch", "q_len", "tree_mask")  # what sets a verify step's time besides KEYS: named, or said unchecked
MAX_MS = 1e7  # a step of hours is no measurement


class RemovalError(BadInput):
    """A removal-experiment file that cannot be read, or that does not describe the capture."""


class RemovalMismatch(RemovalError):
    """A readable experiment of another GPU or workload than the capture's (a folder may hold several)."""


@dataclass(frozen=True)
class Removal:
    """One workload's timings: variant -> ms of the whole step, with where they came from."""

    kernel: str
    device: str
    method: str
    source: str  # the file, as the user named it
    workload: dict  # ctx_len, heads, page_size and the file's common fields
    ms: dict[str, float]


_BY = ", by a removal experiment"


@dataclass(frozen=True)
class RemovalVerdict:
    cause: str | None  # None: the capture's own cause stands (nothing was removed)
    advice: str | None  # None: the kernel's own advice stands (a classic kernel, nothing removed)
    evidence: list[str]


def read_removal(path: str | Path, name: str | Path | None = None) -> list[Removal]:
    """Every workload of a removal-experiment file; one-line errors naming the file and the field: a
    number out of range, a variant of no known name, two rows of one variant at one point, a field the
    reader does not know (`name`: the path to show, e.g. where a run being written will keep it)."""
    path = Path(path)
    shown = Path(name) if name is not None else path
    data = _load(path)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise RemovalError(f"{path}: not a removal experiment (format {FORMAT!r} expected, got {got!r})")
    for key, kind in (("kernel", str), ("device", str), ("rows", list)):
        if not data.get(key):
            raise RemovalError(f"{path}: missing {key!r}")
        if not isinstance(data[key], kind):
            raise RemovalError(f"{path}: {key!r} must be a {kind.__name__}, got {data[key]!r}")
    common = data.get("workload") or {}
    if not isinstance(common, dict):
        raise RemovalError(f"{path}: 'workload' must be an object of workload fields, got {common!r}")
    op = common.get("op")
    if op is not None and (not isinstance(op, str) or not op):
        raise RemovalError(f"{path}: workload 'op' must name the op (e.g. \"gemm\"), got {op!r}")
    if not op and (unknown := unknown_keys(common, WORKLOAD_FIELDS)):
        raise RemovalError(
            f"{path}: workload: unknown field {unknown[0]!r} (a verify step's: {', '.join(CHECKED)}, ...)"
        )
    keys = () if op else KEYS  # an op's rows are variants alone (module doc)
    by_point: dict[tuple, dict[str, float]] = {}
    first: dict[tuple, int] = {}
    for i, row in enumerate(data["rows"]):
        ms = row.get("graph_ms") if isinstance(row, dict) else None
        if problem := number_problem(ms, maximum=MAX_MS):
            raise RemovalError(f"{path}: rows[{i}]: graph_ms {problem} (milliseconds)")
        if not all(number_problem(row.get(k), integer=True) is None for k in keys) or not isinstance(
            row.get("variant"), str
        ):
            need = f"integer {', '.join(keys)} (above 0) and " if keys else ""
            raise RemovalError(f"{path}: rows[{i}]: needs {need}a variant name")
        if unknown := unknown_keys(row, ROW_FIELDS):
            raise RemovalError(f"{path}: rows[{i}]: unknown field {unknown[0]!r} (a row holds {', '.join(ROW_FIELDS)})")
        if row["variant"] not in VARIANTS:
            raise RemovalError(f"{path}: rows[{i}]: unknown variant {row['variant']!r} (known: {', '.join(VARIANTS)})")
        variant = FULL_ALIASES.get(row["variant"], row["variant"])
        point = tuple(row[k] for k in keys)
        if (point, variant) in first:
            raise RemovalError(
                f"{path}: rows[{i}]: a second {variant!r} row for {_point(dict(zip(keys, point)), keys) or 'the op'} "
                f"(rows[{first[point, variant]}] is the first): keep one"
            )
        first[point, variant] = i
        by_point.setdefault(point, {})[variant] = float(ms)
    return [
        Removal(
            kernel=data["kernel"],
            device=data["device"],
            method=data.get("method", ""),
            source=str(shown),
            workload={**common, **dict(zip(keys, point))},
            ms=ms,
        )
        for point, ms in by_point.items()
    ]


def _load(path: Path):
    """The file's JSON; a FIFO, socket or device is refused before it is opened (it would hang)."""
    what = special_file(path)
    if what is not None:
        raise RemovalError(f"{path}: is {what}, not a regular file: a removal experiment is a JSON file")
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RemovalError(f"{path}: cannot read a removal experiment ({exc})") from exc


def unchecked(r: Removal) -> list[str]:
    """The fields that set a verify step's time which the file does not name: any capture matches them."""
    return [] if r.workload.get("op") else [f for f in CHECKED if f not in r.workload]


def matching(removals: list[Removal], device: str | None, workload) -> Removal:
    """The experiment of this capture's GPU and workload (a VerifyWorkload or its dict); an error saying
    what differs otherwise."""
    if not removals:
        raise RemovalError("the removal experiment holds no rows")
    source = removals[0].source
    if workload is not None and not isinstance(workload, dict):
        workload = workload.to_dict()
    op = removals[0].workload.get("op")
    if workload is None and not op:
        raise RemovalError(f"{source}: the capture names no workload (a report without its run directory)")
    if not device:
        raise RemovalError(
            f"{source}: the capture names no GPU, so an experiment on {removals[0].device} cannot be matched"
        )
    if _same_gpu(removals[0].device) != _same_gpu(device):  # the whole name: an H20 is no H200
        raise RemovalMismatch(f"{source}: measured on {removals[0].device}, the capture on {device}")
    if op:  # one point, matched by the kernel's name (apply_removal); never against a verify step
        if workload is not None:
            raise RemovalError(
                f"{source}: times a {op} ({_point(removals[0].workload)}), not this capture's verify step "
                f"({_point(workload)})"
            )
        return _with_full(removals[0])
    if workload.get("ctx_lens") and "ctx_lens" not in removals[0].workload:  # max(ctx_lens) is no point of it
        raise RemovalMismatch(
            f"{source}: the capture is a ragged batch (ctx_lens {workload['ctx_lens']}); the file times "
            "uniform points (it names no ctx_lens)"
        )
    for r in removals:
        if all(workload.get(k) == v for k, v in r.workload.items()):
            return _with_full(r)
    keys = list(removals[0].workload)  # the rows' keys and the file's common fields
    have = "; ".join(_point(r.workload, keys) for r in removals)
    raise RemovalMismatch(f"{source}: no rows for this capture's {_point(workload, keys)} (it holds {have})")


def _with_full(r: Removal) -> Removal:
    if FULL not in r.ms:
        raise RemovalError(f"{r.source}: no {FULL!r} row (the kernel as shipped) for {_point(r.workload)}")
    return r


def _same_gpu(name: str) -> str:
    return " ".join(name.split()).lower()


def _point(w: dict, keys=None) -> str:
    """The workload's fields named by `keys` (default: an op's every field, a verify step's KEYS)."""
    keys = keys if keys is not None else (list(w) if w.get("op") else KEYS)
    return " ".join(f"{k}={w.get(k)}" for k in keys)


def removal_verdict(r: Removal, inferred: str | None = None) -> RemovalVerdict:
    """What sets the pace, from what removing each part saves (module doc). `inferred`: the cause the
    capture alone gave, said beside the experiment's when they differ."""
    full = r.ms[FULL]
    saves = {v: full - r.ms[v] for v in CUTS if v in r.ms}

    def pct(saved: float) -> str:  # what the step's time does without the part
        return f"{-100 * saved / full:+.1f}%"

    parts = [f"without {CUTS[v]} {r.ms[v]:.4f} ms ({pct(s)})" for v, s in saves.items()]
    loads = r.ms.get(LOADS_ONLY)
    if loads is not None:
        parts.append(f"the loads alone {loads:.4f} ms ({100 * loads / full:.0f}% of it)")
    if READ in r.ms:
        parts.append(f"a bare read of the same bytes {r.ms[READ]:.4f} ms ({100 * r.ms[READ] / full:.0f}% of it)")
    what = "removal experiment" if saves or loads is not None else "timed beside a bare read"
    evidence = [f"{what} ({r.source}; {r.device}, {r.method}): the step takes {full:.4f} ms; " + ", ".join(parts)]
    if not saves and loads is None:  # nothing removed (a closed kernel beside a bare read): evidence only
        read = r.ms.get(READ)
        if read is not None and read < (1 - LOADS_SET_THE_PACE) * full:
            evidence.append(
                f"a bare read of these bytes takes {100 * read / full:.0f}% of the step: the loads alone do not set its pace"
            )
        return RemovalVerdict(inferred, None, evidence)
    slower = [v for v, s in saves.items() if s < -SLOWER_BY * full]
    if slower:  # the cut changed how the compiler scheduled the rest (e.g. loads no longer pipelined)
        evidence.append(
            f"without {' or '.join(CUTS[v] for v in slower)} the step is slower: the cut changed how the "
            "compiler scheduled what is left, so it says nothing of that part's cost and is left out"
        )
    cause, advice = _pace(full, loads, {v: s for v, s in saves.items() if v not in slower})
    if inferred and not inferred.startswith("pipelined"):  # a classic kernel keeps its cause
        evidence.append(f"the experiment's reading: {cause.removeprefix('pipelined: ').removesuffix(_BY)}")
        return RemovalVerdict(inferred, None, evidence)
    if inferred and inferred != cause:
        evidence.append(
            f"the capture alone said: {inferred.removeprefix('pipelined: ')}; the experiment decides "
            "(warps wait where the pace is passed on, not always where it is set)"
        )
    return RemovalVerdict(cause, advice, evidence)


def _pace(full: float, loads: float | None, saves: dict[str, float]) -> tuple[str, str]:
    """(cause, advice) from the step's time, the loads alone and what each kept cut saves."""
    largest = max(saves, key=saves.get) if saves else None
    if loads is not None and loads >= LOADS_SET_THE_PACE * full:
        math_saves = full - loads
        if largest == "no-gather" and saves[largest] > math_saves:
            return (
                "pipelined: the loads set the pace, the page gathers most, by a removal experiment",
                f"the gathers cost {100 * saves[largest] / full:.0f}% of the step, more than all the math "
                f"({100 * math_saves / full:.0f}%): gather more rows per copy and keep more in flight, or "
                "let whole pages arrive by TMA (page size 64)",
            )
        return (
            "pipelined: the loads set the pace, by a removal experiment",
            f"the math hides behind the loads (removing all of it saves {100 * math_saves / full:.0f}%): "
            "keep more bytes in flight per SM (a deeper ring, larger tiles) and cut the fixed costs around "
            "the stream (prologue, epilogue, the combine)",
        )
    if loads is not None and (largest is None or saves[largest] < ONE_PART * (full - loads)):
        return (
            "pipelined: the math as one chain sets the pace (no one part of it), by a removal experiment",
            f"the loads alone take {100 * loads / full:.0f}% of the step and no one part of the math saves "
            f"half of the other {100 * (full - loads) / full:.0f}%: the MMAs and the softmax run back to back; "
            "overlap them (ping-pong warpgroups: one's softmax under the other's MMA)",
        )
    if largest is not None and saves[largest] > 0:
        return f"pipelined: {CUTS[largest]} set the pace, by a removal experiment", {
            "no-mma": "keep the tensor pipe fed between MMAs: issue the next tile's score MMA while this tile's "
            "softmax runs (ping-pong warpgroups), and pad fewer rows where the blocks are padded",
            "no-softmax": "overlap the softmax with the next tile's MMA; a cheaper exponent (exp2, the scale "
            "folded into one FMA)",
            "no-gather": "gather more rows per copy and keep more in flight, or TMA whole pages",
        }[largest]
    return "pipelined: no removed part saves time, by a removal experiment", "see the evidence"


def apply_removal(analysis, path: str | Path, name: str | Path | None = None) -> list[str]:
    """Give the experiment's kernel in `analysis` (roofline.analysis.summary.Analysis) the cause and advice the
    removal experiment at `path` shows, the capture's own reading kept in its evidence; return the notes.
    `path` may be a folder of experiment files (roofline removal --out DIR, or several such
    runs): each file whose kernel the capture holds and whose GPU and workload are the capture's is
    applied; a kernel whose files all time other workloads, or a folder with no file of a kernel the
    capture holds, is an error."""
    path = Path(path)
    if not path.is_dir():
        return [_apply_file(analysis, path, name)]
    held = {k.kernel for k in analysis.kernels}
    kernel_of, unreadable = {}, {}
    for f in sorted(path.glob("*.json")):
        try:
            kernel_of[f] = _kernel_of(f)
        except RemovalError as exc:  # cut short, not JSON: named, never skipped without a word
            unreadable[f] = str(exc)
    by_kernel: dict[str, list[Path]] = {}
    for f, kernel in kernel_of.items():
        if kernel in held:
            by_kernel.setdefault(kernel, []).append(f)
    lost = [f for f in unreadable if f.name.split(".")[0] in held - set(by_kernel)] or (
        [] if by_kernel else list(unreadable)
    )
    if lost:  # the experiment of a kernel the capture holds may be the file that cannot be read
        raise RemovalError(
            unreadable[lost[0]] + ": the folder holds no other experiment of a kernel this capture holds"
        )
    if not by_kernel:
        timed = ", ".join(sorted({k for k in kernel_of.values() if k})) or "no removal experiment"
        raise RemovalError(f"{path}: no experiment of a kernel this capture holds (the folder times {timed})")
    notes = [f"{why}: not read as a removal experiment" for why in unreadable.values()]
    analysis.notes.extend(notes)
    for kernel, mine in by_kernel.items():
        matched, misses = [], []
        for f in mine:
            try:
                matched.append(matching(read_removal(f), analysis.gpu.name, analysis.workload))
            except RemovalMismatch as exc:  # another workload's file of this kernel
                misses.append(str(exc))
        if not matched:
            raise RemovalError(f"{path}: no experiment of {kernel} matches this capture: " + "; ".join(misses))
        if len(matched) > 1:  # two timings of one point: which one is the evidence is the user's call
            names = ", ".join(Path(r.source).name for r in matched)
            raise RemovalError(f"{path}: {len(matched)} experiments of {kernel} match this capture ({names}): keep one")
        notes.append(_apply(analysis, matched[0]))
    return notes


def _kernel_of(path: Path) -> str | None:
    """The kernel a removal-experiment file times, or None for JSON that is no experiment; RemovalError for
    a file that is not JSON (cut short) or a FIFO."""
    data = _load(path)
    return data.get("kernel") if isinstance(data, dict) and data.get("format") == FORMAT else None


def _apply_file(analysis, path: Path, name: str | Path | None = None) -> str:
    return _apply(analysis, matching(read_removal(path, name), analysis.gpu.name, analysis.workload))


def _apply(analysis, r: Removal) -> str:
    """Give `r`'s kernel in `analysis` the experiment's verdict; the note saying so."""
    kernels = [k for k in analysis.kernels if k.kernel == r.kernel]
    if not kernels:
        raise RemovalError(f"{r.source}: times {r.kernel}, which this capture does not hold")
    decided = False
    for k in kernels:
        v = removal_verdict(r, k.cause)
        decided = v.cause is not None and v.cause != k.cause
        k.cause, k.advice = v.cause or k.cause, v.advice or k.advice
        kept = [e for e in k.evidence if e != REMOVAL_HINT or not decided]  # the hint is taken when it decides
        k.evidence = v.evidence + kept
    what = "cause from the removal experiment" if decided else "evidence from"
    note = f"{r.kernel}: {what} {r.source} ({_point(r.workload)})"
    if missing := unchecked(r):
        note += f"; the file names no {', '.join(missing)}: not checked against this capture's"
    analysis.notes.append(note)
    return note
