"""Where the warps wait, instruction by instruction: ncu's PC-sampled stall counters per program counter, read
from one decoded launch (no pandas here: the launch readers' children call it as they decode each launch).

ncu samples each warp's state at its program counter; the `smsp__pcsamp_*` metrics are instanced per
PC (their correlation ids are the PCs). Every preset collects them (the `verdict` list names them, and
`--set full` holds them too). ncu_report gives each PC's SASS (`sass_by_pc`) and, where the kernel
carries line info (Triton and Gluon kernels do), its file and line (`source_info`); the line's text
only when the report embeds the source file (`ncu --import-source yes`).

Each PC gets one wait class (WAIT_CLASSES), from its instruction first, then from the stall reason
that dominates its samples:
- load barrier: an mbarrier try-wait (`SYNCS.PHASECHK`, and the branch that loops on its predicate)
  on a barrier that loads complete (armed with a byte count, `SYNCS.ARRIVE.TRANS64 ... Rn`: TMA; or
  arrived by cp.async, `ARRIVES.LDGSTSBAR`), and `DEPBAR` (cp.async group waits)
- role barrier: in a kernel with warp roles (it waits on mbarriers or named barriers), block and named
  barriers (`BAR.SYNC`, `BAR.ARV`, ...) and mbarrier waits on barriers that only threads arrive at
  (handoffs between warp roles)
- block barrier: in a kernel without warp roles, its block barriers (`BAR.SYNC 0x0`: __syncthreads), the
  instruction after one where a warp waits at it (a barrier stall) included
- MMA wait: `WARPGROUP.DEPBAR` / `WARPGROUP.ARRIVE` / `HGMMA` / tcgen05 (`UTC*`), or the gmma stall
- shared memory: LDS/STS/LDSM/STSM/ATOMS, or a short_scoreboard / mio_throttle stall
- global memory: LDG/STG/LDGSTS/ATOMG/RED, or a long_scoreboard stall (waiting on loaded data): an SHF or
  CS2R stalled there needs a register a global load has not filled yet (`by_stall`; reports say so)
- math: arithmetic instructions; other: the rest
Barriers are told apart by their shared-memory address (the immediate offset of `[URx+0x...]`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from profiler.child import no_crash_dump
from profiler.metrics import PCSAMP_COUNT, STALL_REASONS, pcsamp_metric
from profiler.sass_mma import register_blocked_loop

WAIT_CLASSES = (
    "load barrier",
    "MMA wait",
    "role barrier",
    "block barrier",
    "shared memory",
    "global memory",
    "math",
    "other",
)
WAIT_MEANING = {
    "load barrier": "waiting for TMA / cp.async data (mbarrier try-wait on a load's barrier, cp.async group wait)",
    "MMA wait": "waiting for warpgroup / tensor-core MMA results",
    "role barrier": "named barriers and mbarrier handoffs between warp roles",
    "block barrier": "block-wide barriers (__syncthreads) in a kernel without warp roles",
    "shared memory": "shared-memory loads and stores (or waiting on their results)",
    "global memory": "global loads and stores (or waiting on their data)",
    "math": "math issue (arithmetic instructions)",
    "other": "everything else (branches, address setup, ...)",
}
# The memory classes by opcode; an instruction of another opcode joins one by its stall reason (module doc),
# and STALLED_ON says what that stall means.
MEMORY_OPS = {
    "shared memory": ("LDS", "STS", "LDSM", "STSM", "ATOMS"),
    "global memory": ("LDG", "STG", "ATOMG", "RED", "LD.", "ST.", "LDGSTS", "UTMALDG", "UTMASTG", "UBLKCP"),
}
STALLED_ON = {
    "global memory": "long_scoreboard: it reads or overwrites a register that a global or local load has not "
    "filled yet, so the wait is the load's",
    "shared memory": "short_scoreboard or mio_throttle: it needs a shared-memory access's result, or waits for "
    "room in the memory pipe's queue",
}
COLUMNS = ["launch", "kernel", "pc", "samples", "reason", "wait_class", "sass", "file", "line", "line_text"]
MAX_LAUNCHES_PER_KERNEL = 4  # launches of one kernel read per PC (their samples add up)
INSTRUCTION_BYTES = 16  # sm_70 and later

_PRED_BRA = re.compile(r"^@!?(U?P\d)\s+BRA\b")
_PHASECHK = re.compile(r"SYNCS\.PHASECHK\S*\s+(U?P\d)\s*,\s*(\[[^\]]*\])")
_BRACKET = re.compile(r"\[([^\]]*)\]")
_NAMED_BARRIER = re.compile(r"^BAR\.(?:SYNC|ARV|RED|SYNCALL)\S*\s+(?!0x0\b)")  # a barrier id other than 0
MMA_OPS = {"HGMMA", "UTCHMMA", "UTCQMMA", "UTCOMMA", "UTCMMA"}  # warpgroup (sm_90) and tcgen05 (sm_100) MMAs
# The MMA path each tensor-core opcode belongs to: mma.sync (HMMA, IMMA: every architecture since Volta, the
# accumulators in the warp's registers), warpgroup MMA (HGMMA: sm_90) and tcgen05 (UTC*MMA: sm_100).
MMA_PATH_OPS = {
    "mma_sync": ("HMMA", "IMMA", "DMMA", "BMMA"),
    "mma_warpgroup": ("HGMMA", "IGMMA", "QGMMA", "BGMMA"),
    "mma_tcgen05": ("UTCHMMA", "UTCQMMA", "UTCOMMA", "UTCMMA", "UTCIMMA"),
}
ASYNC_COPY_OPS = {"UTMALDG", "UBLKCP", "LDGSTS", "UTMAPF"}  # TMA bulk tensor copies and cp.async
_MATH = (
    "FFMA",
    "FMUL",
    "FADD",
    "FMNMX",
    "FSEL",
    "FSET",
    "FSETP",
    "MUFU",
    "HFMA2",
    "HMUL2",
    "HADD2",
    "HMNMX2",
    "F2F",
    "F2FP",
    "F2I",
    "I2F",
    "IMAD",
    "IADD3",
    "IMNMX",
    "ISETP",
    "LOP3",
    "SHF",
    "LEA",
    "SEL",
    "PRMT",
    "FCHK",
    "DFMA",
    "DMUL",
    "DADD",
    "IABS",
    "POPC",
    "FLO",
    "BMSK",
    "VIMNMX",
    "FRND",
    "SHFL",
)


def opcode(sass: str) -> str:
    """The opcode with its modifiers ('SYNCS.PHASECHK.TRANS64.TRYWAIT'), predicate dropped."""
    parts = sass.split()
    if parts and parts[0].startswith("@"):
        parts = parts[1:]
    return parts[0] if parts else ""


def barrier_key(operand: str) -> str:
    """A barrier's shared-memory address as the instruction spells it: the immediate offset when there
    is one (the base register differs between instructions), else the whole operand."""
    inner = operand.strip("[]")
    m = re.search(r"\+\s*(-?0x[0-9a-fA-F]+)", inner)
    return m.group(1).lower() if m else inner.replace(" ", "")


def load_barriers(sass: list[str]) -> set[str]:
    """The barriers that loads complete: armed with a byte count (TMA) or arrived by cp.async."""
    keys = set()
    for s in sass:
        op = opcode(s)
        found = _BRACKET.search(s)
        if not found:
            continue
        if op.startswith("ARRIVES.LDGSTSBAR"):
            keys.add(barrier_key(found.group(0)))
        elif op.startswith("SYNCS.ARRIVE.TRANS64") and ".RED" not in op:
            tail = s.rsplit(",", 1)[-1].strip()
            if tail not in ("RZ", "URZ"):  # arrive.expect_tx: the byte count a TMA will deliver
                keys.add(barrier_key(found.group(0)))
    return keys


def has_roles(sass: list[str]) -> bool:
    """Whether a kernel's warps have roles that hand work to each other: it waits on mbarriers or on named
    barriers (an id other than 0); a plain __syncthreads kernel does not."""
    return any(_PHASECHK.search(s) or _NAMED_BARRIER.match(_unpredicated(s)) for s in sass)


def by_stall(sass: str, wait_class: str) -> bool:
    """Whether `sass` is in a memory class only by the stall its samples show (an SHF or CS2R that waits
    on a load's register: long_scoreboard), not by its opcode."""
    return wait_class in MEMORY_OPS and not opcode(sass).startswith(MEMORY_OPS[wait_class])


def _unpredicated(sass: str) -> str:
    """The instruction without its predicate ('@!P0 BAR.SYNC 0x1, 0x80' -> 'BAR.SYNC 0x1, 0x80')."""
    parts = sass.split()
    return " ".join(parts[1:] if parts and parts[0].startswith("@") else parts)


def instruction_class(sass: str, previous: list[str], loads: set[str], reason: str | None, roles: bool = True) -> str:
    """The wait class of one PC (module doc): `previous` are the instructions just before it (nearest
    last), `loads` the load barriers' keys, `reason` the stall reason with most samples there, `roles`
    whether the kernel has warp roles (has_roles): its barriers are handoffs, else block barriers."""
    barrier = "role barrier" if roles else "block barrier"
    op = opcode(sass)
    wait = _PHASECHK.search(sass)
    bra = _PRED_BRA.match(sass.strip())
    if wait is None and bra is not None:  # the branch that loops on a try-wait's predicate
        for prev in reversed(previous[-3:]):
            w = _PHASECHK.search(prev)
            if w is not None and w.group(1) == bra.group(1):
                wait = w
                break
    if wait is not None:
        return "load barrier" if barrier_key(wait.group(2)) in loads else "role barrier"
    if op.startswith(("WARPGROUP.", "HGMMA", "UTCHMMA", "UTCQMMA", "UTCBAR", "UTCMMA")):
        return "MMA wait"
    if op.startswith("DEPBAR"):
        return "load barrier"
    if op.startswith(("BAR.", "BAR", "WARPSYNC")) and not op.startswith("BRA"):
        return barrier
    for cls, ops in MEMORY_OPS.items():
        if op.startswith(ops):
            return cls
    if reason == "gmma":
        return "MMA wait"
    if reason == "barrier":
        return barrier
    if reason == "long_scoreboard":
        return "global memory"
    if reason in ("short_scoreboard", "mio_throttle"):
        return "shared memory"
    if op.split(".")[0] in _MATH or op.startswith(("HMMA", "IMMA")):
        return "math"
    return "other"


@dataclass
class _Function:
    """One kernel's SASS, scanned once: where it starts, its instructions, its load barriers."""

    start: int
    sass: list[str]
    loads: set[str]
    roles: bool = True  # has_roles: warps hand work to each other (else its barriers are block barriers)

    def traits(self) -> dict[str, bool | str]:
        """What the verdicts ask of the SASS (roofline/analysis/pipelined.py, roofline/analysis/mma_path.py):
        warpgroup/tcgen05 MMAs, asynchronous copies, mbarrier waits; each MMA path the kernel issues
        (MMA_PATH_OPS), as `mma_opcode` its first MMA opcode with modifiers ('HMMA.16816.F32.BF16'), and as
        `mma_register_loop` whether an mma.sync-class MMA accumulates in registers inside a loop (sass_mma)."""
        full = [opcode(s) for s in self.sass]
        ops = {op.split(".")[0] for op in full}
        out: dict[str, bool | str] = {
            "mma": bool(ops & MMA_OPS),
            "async_copies": bool(ops & ASYNC_COPY_OPS),
            "mbarrier_waits": any(_PHASECHK.search(s) for s in self.sass),
        }
        out.update({path: bool(ops & set(names)) for path, names in MMA_PATH_OPS.items()})
        every = {n for names in MMA_PATH_OPS.values() for n in names}
        first = next((op for op in full if op.split(".")[0] in every), None)
        if first:
            out["mma_opcode"] = first
        out["mma_register_loop"] = bool(out.get("mma_sync")) and register_blocked_loop(self.sass, self.start)
        return out

    def at(self, pc: int) -> str:
        i = (pc - self.start) // INSTRUCTION_BYTES
        return self.sass[i] if 0 <= i < len(self.sass) else ""

    def before(self, pc: int, n: int = 3) -> list[str]:
        i = (pc - self.start) // INSTRUCTION_BYTES
        return self.sass[max(0, i - n) : max(0, i)]


def _scan(action, pc: int) -> _Function:
    """The whole function around `pc`: instructions are read outwards until there are none."""
    below, above = [], []
    lo, hi = pc, pc
    while text := action.sass_by_pc(lo - INSTRUCTION_BYTES):
        below.append(text)
        lo -= INSTRUCTION_BYTES
    while text := action.sass_by_pc(hi):
        above.append(text)
        hi += INSTRUCTION_BYTES
    sass = below[::-1] + above
    return _Function(lo, sass, load_barriers(sass), has_roles(sass))


def _values(metric) -> dict[int, float]:
    ids = metric.correlation_ids()
    return {ids.as_uint64(i): float(metric.as_double(i)) for i in range(metric.num_instances())}


def _source_text(action) -> dict[str, list[str]]:
    try:
        return {f: text.splitlines() for f, text in action.source_files().items()}
    except Exception:  # noqa: BLE001 - no embedded source
        return {}


def _launch_rows(action, launch: int, functions: dict[str, _Function]) -> list[dict]:
    count = action.metric_by_name(PCSAMP_COUNT)
    if count is None or count.num_instances() == 0:
        return []
    samples = _values(count)
    by_reason = {}
    for r in STALL_REASONS:
        m = action.metric_by_name(pcsamp_metric(r))
        if m is not None and m.num_instances() > 0:
            by_reason[r] = _values(m)
    name = action.name()
    fn = functions.get(name)
    first = min(samples)
    if fn is None or not (
        fn.start <= first < fn.start + INSTRUCTION_BYTES * len(fn.sass)
        and action.sass_by_pc(fn.start) == fn.sass[0]
        and not action.sass_by_pc(fn.start - INSTRUCTION_BYTES)
    ):
        fn = functions[name] = _scan(action, first)
    texts = _source_text(action)
    rows = []
    for pc, n in samples.items():
        if n <= 0:
            continue
        reasons = {r: v.get(pc, 0.0) for r, v in by_reason.items() if r != "selected"}
        reason = max(reasons, key=reasons.get) if reasons and max(reasons.values()) > 0 else None
        sass = fn.at(pc) or action.sass_by_pc(pc)
        info = action.source_info(pc)
        file, line = (info.file_name(), int(info.line())) if info is not None else ("", 0)
        lines = texts.get(file, [])
        rows.append(
            {
                "launch": launch,
                "kernel": action.name(),
                "pc": pc - fn.start,
                "samples": n,
                "reason": reason,
                "wait_class": instruction_class(sass, fn.before(pc), fn.loads, reason, fn.roles),
                "sass": sass.strip(),
                "file": file,
                "line": line,
                "line_text": lines[line - 1].strip() if 0 < line <= len(lines) else "",
            }
        )
    return rows


class PcCollector:
    """The PC rows of the launches given to it, at most MAX_LAUNCHES_PER_KERNEL of each kernel (the first
    ones given), and each sampled kernel's SASS traits: what a reader collects as it decodes launches."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self.seen: dict[str, int] = {}
        self.functions: dict[str, _Function] = {}

    def add(self, action, launch: int) -> None:
        name = action.name()
        if self.seen.get(name, 0) >= MAX_LAUNCHES_PER_KERNEL:
            return
        self.seen[name] = self.seen.get(name, 0) + 1
        self.rows += _launch_rows(action, launch, self.functions)

    def result(self) -> tuple[list[dict], dict[str, dict]]:
        return self.rows, {name: fn.traits() for name, fn in self.functions.items()}


def first_launches(rows: list[dict], per_kernel: int = MAX_LAUNCHES_PER_KERNEL) -> list[dict]:
    """The rows of the first `per_kernel` launches (by launch number) of each kernel, in launch order: what one
    serial read keeps, from the rows several readers collected (each kept its own first launches)."""
    keep: dict[str, list[int]] = {}
    for launch, kernel in sorted({(r["launch"], r["kernel"]) for r in rows}):
        if len(keep.setdefault(kernel, [])) < per_kernel:
            keep[kernel].append(launch)
    wanted = {(k, n) for k, launches in keep.items() for n in launches}
    return sorted((r for r in rows if (r["kernel"], r["launch"]) in wanted), key=lambda r: r["launch"])


class PcChild:
    """A report's PC samples read by one child of their own, beside the launch readers (which read no PC
    samples then: only this process pays for the SASS disassembler, about 0.3 s). It reads launches in order,
    each kernel's first ones; once the parent knows every launch's kernel (from the launch readers) it sends
    the launches still wanted (`want`), and the child jumps to them and stops: it never decodes the rest."""

    def __init__(self, ctx, path: str, install_dir: str | None):
        self.receive, send = ctx.Pipe(duplex=False)
        control, self.control_out = ctx.Pipe(duplex=False)  # (receiving end, sending end)
        self.want_sent = False
        self.child = ctx.Process(target=_pc_child_main, args=(send, control, path, install_dir), daemon=True)
        self.child.start()
        send.close()
        control.close()

    def want(self, launches: set[int]) -> None:
        """The launches whose samples are wanted (each kernel's first ones): the child reads no others."""
        try:
            self.control_out.send(sorted(launches))
        except OSError:  # the child already finished (or died: result() says so)
            pass
        self.want_sent = True

    def result(self, timeout_s: float) -> tuple[list[dict], dict[str, dict], str | None]:
        """(rows, traits, None), or ([], {}, why) when the child failed, crashed or ran past `timeout_s`."""
        try:
            if not self.receive.poll(timeout_s):
                return [], {}, f"reading the PC samples took over {timeout_s:.0f} s; stopped"
            status, payload = self.receive.recv()
        except (EOFError, OSError):
            return [], {}, "ncu_report crashed reading the PC samples"
        finally:
            self.discard()
        if status == "error":
            return [], {}, payload
        return payload[0], payload[1], None

    def discard(self) -> None:
        for end in (self.receive, self.control_out):
            end.close()
        if self.child.is_alive():
            self.child.kill()
        self.child.join(5)


def _pc_child_main(send, control, path: str, install_dir: str | None) -> None:
    import importlib
    import os
    import sys

    try:
        no_crash_dump()  # a crash is the parent's one line (PcChild.result)
        with open(os.devnull, "wb") as null:  # the library's own stderr lines: the launch readers show them
            os.dup2(null.fileno(), 2)
        if install_dir:
            sys.path.insert(0, install_dir)
        ncu_report = importlib.import_module("ncu_report")
        report = ncu_report.load_report(path)
        spans = []  # (range, action) of every launch, numbered across all ranges: no launch decoded
        for r in range(report.num_ranges()):
            spans += [(r, a) for a in range(report.range_by_idx(r).num_actions())]
        collect, wanted, launch = PcCollector(), None, 0
        while launch < len(spans):
            if wanted is None and control.poll():
                wanted = set(control.recv())
            if wanted is not None:
                left = [n for n in sorted(wanted) if n >= launch]
                if not left:
                    break
                launch = left[0]
            r, a = spans[launch]
            collect.add(report.range_by_idx(r).action_by_idx(a), launch)
            launch += 1
        send.send(("ok", collect.result()))
    except BaseException as exc:  # noqa: BLE001 - one line in the parent
        send.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        send.close()
