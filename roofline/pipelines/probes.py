"""`validate`: profile the probe kernels (kernels/probes.py), each into a run directory through the run
writer, and check each verdict against what the probe's construction guarantees
(roofline/analysis/probe_checks.py)."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path

from kernels.errors import BadInput
from profiler.metrics import ResolvedPreset, resolve_preset
from profiler.ncu import find_ncu, record_in_run, run_ncu
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from profiler.proc import ToolControl
from profiler.run_writer import RunWriter
from profiler.rundir import RunSpec
from roofline.analysis.probe_checks import EXPECTED, ProbeCheck, Validation, check_probe
from roofline.analysis.summary import summarize
from roofline.catalogue.chips import local_device_name


def validate(
    probes: list[str] | None = None,
    out: str | Path = "runs/validate",
    ncu: str | None = None,
    preset: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Validation:
    """Profile each probe into `out/<probe>` (a run directory, kept marked failed when its capture
    fails) and check its verdict. Without ncu, ToolNotFound before any folder is made."""
    say = progress or (lambda msg: None)
    names = list(probes or EXPECTED)
    unknown = sorted(set(names) - set(EXPECTED))
    if unknown:
        raise BadInput(f"unknown probe(s) {unknown}; known: {', '.join(EXPECTED)}")
    try:
        resolved = resolve_preset(preset, device_name=local_device_name())
    except ValueError as exc:
        raise BadInput(str(exc)) from exc
    find_ncu(ncu)  # every probe runs ncu: without it one error, and no folder claims that anything was kept
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
