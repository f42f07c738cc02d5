"""The run directory: the unit of evidence. Nothing else in the project globs a run folder.

    manifest.json     status (complete | failed), the run's own reports with their sha256, the
                      sha256 of every other file the run holds (format 2: spec.json included),
                      the exact commands, tool and library versions, the GPU, passes, wall time
    spec.json         kernel, workload, iterations (validated on read: one-line errors per field)
    commands.txt      every command run, exactly, one per line
    profile.ncu-rep   the raw Nsight Compute report; profile.ncu.log its log
    profile.nsys-rep, profile.sqlite   the Nsight Systems timeline and its export (when taken)
    harness.json      device, torch, triton as the profiled child saw them
    timing.json       timing samples from a child with no profiler attached (profiler/timing.py);
                      a report of tool "timing" in the manifest, checksummed like the others
    launches.csv      the parsed table, one row per launch
    analysis.json     verdicts, roofline, floor

Every name above is in FILES, by role ("ncu", "launches", ...): the writer and the reader hand out
paths by role (`writer.file("launches")`), and a report or log the writer was not told the name of
is refused. The manifest checksums every file the run holds.

A run is written (profiler/run_writer.py) into a hidden temporary folder beside its final path and
renamed into place only when complete, so a failed or interrupted run never replaces an earlier one: it is kept under
`<name>.failed-<time>` with status "failed", its error and the tool's log.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from kernels.batches import lens_tag
from kernels.spec import ctx_text
from profiler.checks import number_problem
from profiler.errors import ReportError, refuse_special

MANIFEST = "manifest.json"
SPEC = "spec.json"
COMMANDS = "commands.txt"
LAUNCHES = "launches.csv"
ANALYSIS = "analysis.json"
HARNESS = "harness.json"
PLAN = "plan.json"
TIMING = "timing.json"
REPORT_STEM = "profile"  # the base name ncu and nsys are given (each adds its own suffix)
FILES = {  # role -> the file's name in a run: every file a run holds
    "manifest": MANIFEST,
    "spec": SPEC,
    "commands": COMMANDS,
    "harness": HARNESS,
    "plan": PLAN,  # the launch plan the profiled child ran (kernels whose registry entry records one)
    "ncu": f"{REPORT_STEM}.ncu-rep",
    "ncu-log": f"{REPORT_STEM}.ncu.log",
    "nsys": f"{REPORT_STEM}.nsys-rep",
    "nsys-sqlite": f"{REPORT_STEM}.sqlite",
    "nsys-log": f"{REPORT_STEM}.nsys.log",
    "nsys-export-log": f"{REPORT_STEM}.nsys-export.log",
    "nsys-stream": f"{REPORT_STEM}.qdstrm",  # what nsys leaves when its importer cannot run
    "timing": TIMING,
    "timing-log": "timing.log",
    "removal": "removal.json",  # `profile --why`: the removal experiment (roofline-removal/1)
    "removal-log": "removal.log",
    "in-kernel": "in_kernel.npz",  # `profile --in-kernel`: the stamped step (profiler/in_kernel.py)
    "in-kernel-log": "in_kernel.log",
    "launches": LAUNCHES,
    "analysis": ANALYSIS,
}
FORMAT = "roofline-run/2"  # 2: `files` checksums every file besides the reports (spec.json too)
OLD_FORMAT = "roofline-run/1"  # reports only: read with a warning that spec.json is not checksummed
STATUSES = ("complete", "failed")
# the roles a manifest's report may have (removal: `profile --why`'s experiment)
REPORT_TOOLS = ("ncu", "nsys", "nsys-sqlite", "timing", "removal")
FAILED_MARK = ".failed-"  # in the name of a kept failed attempt: `<name>.failed-<time>`


class RunDirError(ReportError):
    """A run directory that is missing, failed, tampered with, or would be overwritten."""


def file_name(role: str) -> str:
    """The name of a run's file by its role (a key of FILES); an unknown role is a ValueError."""
    try:
        return FILES[role]
    except KeyError:
        raise ValueError(f"{role!r} is not a file of a run (roles: {', '.join(FILES)})") from None


def run_files(folder: Path, *roles: str) -> list[Path]:
    """Where these roles' files go in `folder` (made if missing), by the names FILES gives them."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    return [folder / file_name(role) for role in roles]


def failed_name(final: Path, n: int = 1) -> Path:
    """Where a failed or interrupted attempt at `final` is kept: `<final>.failed-<UTC time>[-n]`."""
    return final.parent / (f"{final.name}{FAILED_MARK}{utc_stamp()}" + (f"-{n}" if n > 1 else ""))


def is_failed_attempt(path: Path) -> bool:
    """A folder `RunWriter.fail` kept (`<name>.failed-<time>`)."""
    return FAILED_MARK in Path(path).name


def utc_stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------------
# spec.json


@dataclass(frozen=True)
class RunSpec:
    """What a run asked for: the kernel, the workload (as a dict of VerifyWorkload fields; {} for a probe
    kernel, which runs no verify step), and how many launches of the kernel's step the profiled range holds."""

    kernel: str
    workload: dict
    iterations: int
    created: str | None = None
    command: tuple[str, ...] = ()

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["command"] = list(self.command)
        return d


def _want(cond: bool, where: str, what: str, value) -> None:
    if not cond:
        raise RunDirError(f"{where}: {what}, got {json.dumps(value)}")


def parse_spec(data, where: str = SPEC) -> RunSpec:
    """Validate a spec.json payload: one-line errors naming the field."""
    _want(isinstance(data, dict), where, "must be a JSON object", type(data).__name__)
    for key in ("kernel", "workload", "iterations"):
        if key not in data:
            raise RunDirError(f"{where}: missing field {key!r}")
    kernel, workload, iterations = data["kernel"], data["workload"], data["iterations"]
    _want(isinstance(kernel, str) and kernel != "", where, "kernel must be a non-empty string", kernel)
    _want(isinstance(workload, dict), where, "workload must be a JSON object", workload)
    _want(
        isinstance(iterations, int) and not isinstance(iterations, bool) and iterations >= 1,
        where,
        "iterations must be an integer >= 1",
        iterations,
    )
    command = data.get("command") or []
    _want(
        isinstance(command, list) and all(isinstance(c, str) for c in command),
        where,
        "command must be a list of strings",
        command,
    )
    created = data.get("created")
    _want(created is None or isinstance(created, str), where, "created must be a string", created)
    return RunSpec(
        kernel=kernel, workload=dict(workload), iterations=iterations, created=created, command=tuple(command)
    )


# ---------------------------------------------------------------------------------------------
# manifest.json


@dataclass
class ReportEntry:
    """One report the run made itself: its file name in the run, the tool, and its checksum."""

    path: str
    tool: str  # "ncu" | "nsys" | "nsys-sqlite" | "timing"
    sha256: str
    bytes: int
    launches: int | None = None  # launches the tool said it profiled (ncu's ==PROF== lines)
    passes: int | None = None  # replay passes per launch (ncu)
    preset: str | None = None


@dataclass
class Manifest:
    status: str
    created: str
    reports: list[ReportEntry] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    tools: dict = field(default_factory=dict)  # name -> {"path", "version"}
    host: dict = field(default_factory=dict)  # gpu, torch, triton, python, roofline
    logs: list[str] = field(default_factory=list)
    wall_s: float | None = None
    error: str | None = None
    files: dict = field(default_factory=dict)  # every other file of the run -> its sha256 (format 2)
    format: str = FORMAT

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data, where: str) -> Manifest:
        _want(isinstance(data, dict), where, "must be a JSON object", type(data).__name__)
        _want(
            data.get("format") in (FORMAT, OLD_FORMAT),
            where,
            f"format must be {FORMAT!r} (or the older {OLD_FORMAT!r})",
            data.get("format"),
        )
        _want(data.get("status") in STATUSES, where, f"status must be one of {STATUSES}", data.get("status"))
        reports = data.get("reports")
        _want(isinstance(reports, list), where, "reports must be a list", reports)
        entries = []
        for i, r in enumerate(reports):
            _want(
                isinstance(r, dict)
                and isinstance(r.get("path"), str)
                and isinstance(r.get("sha256"), str)
                and isinstance(r.get("tool"), str),
                where,
                f"reports[{i}] needs path, tool and sha256",
                r,
            )
            _want(Path(r["path"]).name == r["path"], where, f"reports[{i}].path must be a file in the run", r["path"])
            for name, (types, what) in _ENTRY_TYPES.items():
                if name in r:
                    _want(_typed(r[name], types), where, f"reports[{i}].{name} must be {what}", r[name])
            for name, integer in (("bytes", True), ("launches", True), ("passes", True)):
                problem = number_problem(r.get(name), positive=False, integer=integer, null=name != "bytes")
                if name in r and problem:
                    raise RunDirError(f"{where}: reports[{i}].{name} {problem}")
            _want(
                r["tool"] in REPORT_TOOLS,
                where,
                f"reports[{i}].tool must be one of {', '.join(REPORT_TOOLS)}",
                r["tool"],
            )
            if r["path"] in {e.path for e in entries}:
                raise RunDirError(f"{where}: reports[{i}] names {r['path']} a second time")
            known = {f.name for f in dataclasses.fields(ReportEntry)}
            entries.append(ReportEntry(**{k: v for k, v in r.items() if k in known}))
        for name, (types, what) in _MANIFEST_TYPES.items():
            if name in data:
                _want(_typed(data[name], types), where, f"{name} must be {what}", data[name])
        if problem := number_problem(data.get("wall_s"), positive=False, null=True):
            raise RunDirError(f"{where}: wall_s {problem}")
        files = data.get("files", {})
        for name, digest in files.items():
            _want(
                Path(name).name == name and isinstance(digest, str),
                where,
                f"files[{name!r}] must be a file in the run with its sha256",
                digest,
            )
        if data["format"] == FORMAT and data["status"] == "complete":
            _want(SPEC in files, where, f"files must hold {SPEC}'s sha256 (format {FORMAT})", sorted(files))
        known = {f.name for f in dataclasses.fields(cls)} - {"reports"}
        return cls(reports=entries, **{k: v for k, v in data.items() if k in known})


def _typed(value, types) -> bool:
    """`value` is one of `types`; a bool is not an int here, and lists and dicts are checked one level in."""
    if isinstance(value, bool) and bool not in types:
        return False
    if isinstance(value, list) and list in types:
        return all(isinstance(v, str) for v in value)
    return isinstance(value, types)


_NUMBER = (int, float)
_ENTRY_TYPES = {
    "bytes": ((int,), "an integer"),
    "launches": ((int, type(None)), "an integer or null"),
    "passes": ((int, type(None)), "an integer or null"),
    "preset": ((str, type(None)), "a string or null"),
}
_MANIFEST_TYPES = {
    "created": ((str,), "a string"),
    "commands": ((list,), "a list of strings"),
    "tools": ((dict,), "a JSON object"),
    "host": ((dict,), "a JSON object"),
    "logs": ((list,), "a list of strings"),
    "wall_s": ((*_NUMBER, type(None)), "a number or null"),
    "error": ((str, type(None)), "a string or null"),
    "files": ((dict,), "a JSON object"),
}


def _read_json(path: Path):
    refuse_special(path)
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise RunDirError(f"{path}: not valid JSON ({exc})") from None
    except OSError as exc:
        raise RunDirError(f"{path}: cannot read ({exc.strerror})") from None


@dataclass
class RunDir:
    """A finished run directory on disk, read-only."""

    path: Path

    @staticmethod
    def is_run(path: Path) -> bool:
        return Path(path, MANIFEST).exists()  # a FIFO in its place is refused when read, not read as a folder

    def file(self, role: str) -> Path:
        """The path of the run's file of this role (a key of FILES), whether or not it exists."""
        return self.path / file_name(role)

    def own(self, name: str) -> Path:
        """The run's file `name`, if it is one of the run's own: a symbolic link out of the run, a FIFO,
        socket or device in its place is refused (RunDirError), whether or not it exists."""
        p = self.path / name
        if os.path.islink(p) or os.path.lexists(p):
            real, root = os.path.realpath(p), os.path.realpath(self.path)
            if os.path.commonpath([real, root]) != root:
                raise RunDirError(f"{p}: is a link out of the run (to {real}): a run directory holds its own files")
            refuse_special(p)
        return p

    def manifest(self) -> Manifest:
        f = self.own(MANIFEST)
        if not f.exists():
            raise RunDirError(f"{self.path}: no {MANIFEST}: not a roofline run directory")
        return Manifest.from_dict(_read_json(f), str(f))

    def spec(self) -> RunSpec | None:
        f = self.own(SPEC)
        if not f.exists():
            self._missing(SPEC)
            return None
        self.verify(SPEC)
        return parse_spec(_read_json(f), str(f))

    def _missing(self, name: str) -> None:
        """A file the manifest checksums (format 2) that is gone: refused, never read as absent."""
        m = self.manifest()
        if m.format != OLD_FORMAT and name in m.files:
            raise RunDirError(
                f"{self.path / name}: named in {MANIFEST} with its sha256 but missing (deleted after the run was written)"
            )

    def verify(self, name: str) -> None:
        """Check a file of the run against its sha256 in the manifest (format 2); older runs name none."""
        m = self.manifest()
        if m.format == OLD_FORMAT:
            return
        p = self._file_of_run(name, "checksummed")
        if name not in m.files:
            raise RunDirError(f"{p}: not checksummed in {MANIFEST}: not a file this run wrote")
        if sha256(p) != m.files[name]:
            raise RunDirError(f"{p}: does not match the sha256 in {MANIFEST} (changed after the run was written)")

    def _file_of_run(self, name: str, how: str) -> Path:
        """`own(name)`, which must be a regular file: a folder in its place is called a folder."""
        p = self.own(name)
        if p.is_dir():
            raise RunDirError(f"{p}: is a folder, not a file ({how} in {MANIFEST} as a file of the run)")
        if not p.is_file():
            raise RunDirError(f"{p}: {how} in {MANIFEST} but missing")
        return p

    def warnings(self) -> list[str]:
        """What reading this run cannot check (an older format) or lacks (its spec.json), in one line each."""
        if not os.path.lexists(self.path / SPEC):
            return [
                f"{SPEC} is missing from this run: no workload, so no step, floor or gap, and the launches "
                "are not checked against the iterations it asked for"
            ]
        if self.manifest().format == OLD_FORMAT:
            return [
                f"{SPEC} is not checksummed in this older run (manifest format {OLD_FORMAT}): "
                "its workload and iterations are taken as written"
            ]
        return []

    def reports(self, tool: str | None = None, verify: bool = True) -> list[Path]:
        """The run's own reports, as the manifest names them, checked against their checksums."""
        m = self.manifest()
        if m.status != "complete":
            log = f"; see {', '.join(str(self.path / g) for g in m.logs)}" if m.logs else ""
            raise RunDirError(f"{self.path}: this run {m.status}: {m.error or 'no reason recorded'}{log}")
        out = []
        for entry in m.reports:
            if tool is not None and entry.tool != tool:
                continue
            p = self._file_of_run(entry.path, "named")
            if verify and sha256(p) != entry.sha256:
                raise RunDirError(
                    f"{p}: does not match the sha256 in {MANIFEST} (changed or cut short after the run was written)"
                )
            out.append(p)
        return out

    def entry(self, report: Path) -> ReportEntry | None:
        return next((e for e in self.manifest().reports if e.path == Path(report).name), None)

    def harness(self) -> dict:
        return self._child_record(HARNESS) or {}

    def plan(self) -> dict | None:
        """The launch plan the profiled child ran (plan.json), None where the run holds none (a kernel that
        records no plan, or a run from before plans were recorded)."""
        return self._child_record(PLAN)

    def _child_record(self, name: str) -> dict | None:
        """A JSON file the profiled child wrote (checked against the manifest once the run is finished)."""
        f = self.own(name)
        if not f.exists():
            if self.file("manifest").is_file():
                self._missing(name)
            return None
        if self.file("manifest").is_file():  # a finished run (a run being written has no manifest yet)
            self.verify(name)
        return _read_json(f)


# ---------------------------------------------------------------------------------------------
# naming a run (profiler/run_writer.py writes it)


def default_run_name(kernel: str, workload) -> str:
    """`<kernel>-<ctx>-h<heads>-q<q_len>-p<page>[-b<batch>][-chain]-<UTC time>`."""
    return f"{run_name(kernel, workload)}-{utc_stamp()}"


def run_name(kernel: str, workload) -> str:
    """`<kernel>-<ctx>-h<heads>-q<q_len>-p<page>[-b<batch>][-chain]`: the same name for the same
    kernel and workload (a sweep's point folders; a rerun finds them). The seed is not in it; a ragged batch's
    <ctx> is kernels.batches.lens_tag of its lengths (`2k-128k-1fc064`)."""
    ctx_s = lens_tag(workload.ctx_lens) if workload.ctx_lens else ctx_text(workload.ctx_len)
    parts = [kernel, ctx_s, f"h{workload.heads}", f"q{workload.q_len}", f"p{workload.page_size}"]
    if workload.batch != 1:
        parts.append(f"b{workload.batch}")
    if workload.tree_mask != "tree":
        parts.append(workload.tree_mask)
    return "-".join(parts)
