"""`validate`: profile the probe kernels (kernels/probes.py), each into a run directory through the run
writer, and check each verdict against what the probe's construction guarantees."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kernels.errors import BadInput
from profiler.metrics import ResolvedPreset, resolve_preset
from profiler.ncu import record_in_run, run_ncu
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from profiler.proc import ToolControl
from profiler.rundir import RunSpec, RunWriter
from roofline.analysis.summary import summarize
from roofline.catalogue.chips import local_device_name


@dataclass(frozen=True)
class Expected:
    """What a probe must be called: its bound, and the roof (or, for latency, the cause) it starts with."""

    bound: str
    starts: str


EXPECTED = {
    "stream_copy": Expected("bandwidth", "DRAM"),
    "matmul": Expected("compute", "tensor pipe"),
    "pointer_chase": Expected("latency", "waiting on global memory loads"),
    "small_grid": Expected("latency", "small grid"),
    "l2_reread": Expected("bandwidth", "L2"),
}


@dataclass(frozen=True)
class ProbeCheck:
    probe: str
    expected_bound: str
    expected: str  # the roof (or, for latency, the cause) the verdict must start with
    bound: str
    got: str | None
    run: Path | None = None  # the probe's run directory

    @property
    def ok(self) -> bool:
        return self.bound == self.expected_bound and bool(self.got) and self.got.startswith(self.expected)

    @property
    def message(self) -> str:
        return f"{self.probe}: expected {self.expected_bound} ({self.expected}), got {self.bound} ({self.got})"


@dataclass(frozen=True)
class Validation:
    checks: tuple[ProbeCheck, ...]
    preset: str
    chip: str

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def check_probe(name: str, bound: str, roof: str | None, cause: str | None) -> ProbeCheck:
    """One probe's verdict against what its construction guarantees."""
    want = EXPECTED[name]
    return ProbeCheck(name, want.bound, want.starts, bound, roof if want.bound != "latency" else cause)


def validate(
    probes: list[str] | None = None,
    out: str | Path = "runs/validate",
    ncu: str | None = None,
    preset: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Validation:
    """Profile each probe into `out/<probe>` (a run directory, kept marked failed when its capture
    fails) and check its verdict."""
    say = progress or (lambda msg: None)
    names = list(probes or EXPECTED)
    unknown = sorted(set(names) - set(EXPECTED))
    if unknown:
        raise BadInput(f"unknown probe(s) {unknown}; known: {', '.join(EXPECTED)}")
    try:
        resolved = resolve_preset(preset, device_name=local_device_name())
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    checks = []
    for name in names:
        say(
            f"profiling probe {name} (preset {resolved.name}, {resolved.chip})"
            + (f": {resolved.note}" if resolved.note else "")
        )
        checks.append(_profile_probe(name, Path(out) / name, ncu, resolved, say))
    return Validation(tuple(checks), resolved.name, resolved.chip)


def _profile_probe(
    name: str, final: Path, ncu: str | None, resolved: ResolvedPreset, say: Callable[[str], None]
) -> ProbeCheck:
    writer = RunWriter(final, unique=True)
    app = [sys.executable, "-m", "profiler.probes", name, "--iters", "1"]
    try:
        writer.write_spec(
            RunSpec(f"probe {name}", {}, 1, writer.manifest.created, ("roofline", "validate", "--probe", name))
        )
        run = run_ncu(app, writer.path, ncu=ncu, control=ToolControl(progress=say), preset=resolved)
        record_in_run(writer, run, resolved.name)
        say(f"{name}: {max(run.passes, default=0)} replay passes per launch")
        analysis = summarize(tidy_launches(read_ncu_report(run.report)), preset=resolved.name)
        k = analysis.kernels[0]
        writer.write_json("analysis", analysis.to_dict())
        final = writer.commit()
    except KeyboardInterrupt as exc:  # the probe's run kept, as profile keeps its own
        raise writer.kept_error(exc, "ncu") from exc
    except Exception as exc:
        raise writer.kept_error(exc) from exc
    return dataclasses.replace(check_probe(name, k.bound, k.roof, k.cause), run=final)
