"""The public API: every step a user can ask for, as functions. The CLI only parses and prints.

    import roofline
    run = roofline.load("runs/triton_mla-128k-...")      # run dir, report, or folder of reports
    run.kernels                                          # one row per kernel, with bound and cause
    run.launches                                         # one row per launch, units in column names
    run = roofline.profile(kernel="triton_mla", ctx="128k")   # on a GPU box with ncu
    cmp = roofline.compare(base_run_or_path, head_run_or_path, fail_if_slower_pct=5)
    cmp.speedup, cmp.passed, cmp.to_dict()               # step, kernels (value, delta %, noise), gate
"""

from __future__ import annotations

import dataclasses
import json
import sys
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable

import pandas as pd

from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from profiler.errors import ProfilerError, ReportError
from profiler.rundir import (ANALYSIS, HARNESS, LAUNCHES, Manifest, RunDir, RunDirError, RunSpec, RunWriter,
                             default_run_name)
from roofline.analysis import Analysis, summarize
from roofline.comparison import CompareError, Comparison, compare  # noqa: F401 (public API)

SAMPLE_RUN = "data/samples/h200-triton_mla-128k"
KERNEL_COLUMNS = ["kernel", "label", "source", "launches", "duration_ms", "grid_size", "block_size", "dram_gbps", "dram_throughput_pct",
                  "sm_throughput_pct", "memory_throughput_pct", "l2_hit_rate_pct", "waves_per_sm",
                  "achieved_occupancy_pct", "theoretical_occupancy_pct", "registers_per_thread",
                  "bound", "cause", "roof", "unit", "advice"]


class IncompleteRun(ReportError):
    """The report holds fewer launches than the run asked for."""


def sample_run() -> Path:
    """The bundled H200 capture (triton_mla at 128k) that `roofline analyze` reads when given no path."""
    return Path(str(resources.files("roofline").joinpath(SAMPLE_RUN)))


@dataclass
class Run:
    """Captured evidence, parsed and analysed: from a run directory, a report, or a folder of them."""

    source: Path
    launches: pd.DataFrame
    analysis: Analysis
    spec: RunSpec | None = None
    workload: VerifyWorkload | None = None
    manifest: Manifest | None = None
    complete: bool = True
    problems: list[str] = field(default_factory=list)

    @property
    def kernels(self) -> pd.DataFrame:
        """One row per kernel (and launch configuration): time, metrics, bound, cause, roof, advice."""
        rows = [{**{c: getattr(k, c, None) for c in KERNEL_COLUMNS},
                 "top_stalls": ", ".join(s["reason"] for s in k.top_stalls)} for k in self.analysis.kernels]
        return pd.DataFrame(rows, columns=KERNEL_COLUMNS + ["top_stalls"])

    @property
    def step(self) -> dict | None:
        return self.analysis.step

    def to_dict(self) -> dict:
        out = self.analysis.to_dict()
        out["source"] = str(self.source)
        out["complete"] = self.complete
        if self.problems:
            out["problems"] = list(self.problems)
        if self.spec is not None:
            out["spec"] = self.spec.to_dict()
        if self.manifest is not None:
            m = self.manifest
            out["manifest"] = {"status": m.status, "created": m.created, "tools": m.tools, "host": m.host,
                               "commands": m.commands, "wall_s": m.wall_s,
                               "reports": [dataclasses.asdict(r) for r in m.reports]}
        return out


def completeness(launches: pd.DataFrame, iterations: int | None, expected: int | None) -> list[str]:
    """Why a launch table is not the whole run ([] when it is): fewer launches than the tool said it
    profiled, or a kernel whose launch count is not a multiple of the iterations asked for."""
    problems = []
    if expected is not None and len(launches) != expected:
        problems.append(f"expected {expected} launches (as ncu's log reported them), found {len(launches)}")
    if iterations:
        for kernel, n in launches.groupby("kernel", sort=False).size().items():
            if n % iterations:
                problems.append(f"{kernel}: {n} launches, not a multiple of the {iterations} iterations asked for")
    return problems


def _workload(spec: RunSpec | None, where: Path) -> VerifyWorkload | None:
    if spec is None:
        return None
    try:
        return VerifyWorkload.from_dict(spec.workload)
    except WorkloadError as exc:
        raise RunDirError(f"{where}: workload: {exc}") from None


def load(path: str | Path | None = None, allow_incomplete: bool = False, gpu=None) -> Run:
    """Read captured evidence without a GPU: a run directory (only the reports its manifest names,
    checked against their checksums), a report file, or a folder of reports. None: the bundled sample."""
    from profiler.readers import read_folder, read_launches

    source = Path(path) if path is not None else sample_run()
    if not source.exists():
        raise ReportError(f"{source}: no such run directory or report")
    spec = manifest = None
    expected = None
    if source.is_dir() and RunDir.is_run(source):
        run_dir = RunDir(source)
        manifest = run_dir.manifest()
        reports = run_dir.reports(tool="ncu")
        if not reports:
            raise RunDirError(f"{source}: the manifest names no Nsight Compute report")
        spec = run_dir.spec()
        tables = [read_launches(p) for p in reports]
        launches = tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
        if len(tables) > 1:
            launches.attrs = {**tables[0].attrs, "rules": {}}
        counts = [e.launches for e in manifest.reports if e.tool == "ncu"]
        expected = sum(counts) if all(c is not None for c in counts) else None
    elif source.is_dir():
        launches = read_folder(source)
    else:
        launches = read_launches(source)
    workload = _workload(spec, source)
    iterations = spec.iterations if spec else None
    problems = completeness(launches, iterations, expected)
    if problems and not allow_incomplete:
        raise IncompleteRun(f"{source}: incomplete capture: {'; '.join(problems)} "
                            "(pass --allow-incomplete to analyze it anyway, marked incomplete)")
    analysis = summarize(launches, workload, None if problems else iterations, gpu=gpu)
    if problems:
        analysis.notes.append("INCOMPLETE: " + "; ".join(problems) + " (no step time)")
    return Run(source=source, launches=launches, analysis=analysis, spec=spec, workload=workload,
               manifest=manifest, complete=not problems, problems=problems)


def make_workload(ctx: int | str = "128k", **fields) -> VerifyWorkload:
    """A VerifyWorkload from user-facing arguments (`ctx` takes 131072, "128k", "1m")."""
    return VerifyWorkload(ctx_len=parse_ctx_len(ctx), **fields)


def profile(kernel: str, workload: VerifyWorkload | None = None, *, iterations: int = 3,
            out: str | Path | None = None, force: bool = False, ncu: str | None = None,
            progress: Callable[[str], None] | None = None, env: dict[str, str] | None = None,
            command: list[str] | None = None, **workload_fields) -> Run:
    """Run `kernel` on `workload` under Nsight Compute in a child process and return the new run.

    `env` is added to the profiled child's environment (e.g. CUDA_VISIBLE_DEVICES); `command` is
    the command recorded in spec.json as the one that made the run (default: sys.argv).

    The run is written atomically (see profiler/rundir.py): on failure or Ctrl-C it is kept under
    `<out>.failed-<time>` with its log, and an existing `out` is never touched unless `force`.
    """
    from kernels.registry import get_kernel
    from profiler.ncu import ncu_version, run_ncu

    say = progress or (lambda msg: None)
    name = get_kernel(kernel).name
    workload = workload or make_workload(**workload_fields)
    if iterations < 1:
        raise ValueError("iterations must be at least 1")
    writer = RunWriter(out if out is not None else Path("runs") / default_run_name(name, workload),
                       force=force, unique=out is None)
    started = time.time()
    try:
        spec = RunSpec(kernel=name, workload=json.loads(workload.to_json()), iterations=iterations,
                       created=writer.manifest.created, command=tuple(command or sys.argv))
        spec_file = writer.write_spec(spec)
        app = [sys.executable, "-m", "profiler.harness", "--spec", str(spec_file), "--kernel", name,
               "--iters", str(iterations), "--info", str(writer.path / HARNESS)]
        say(f"[1/3] profiling {name} ({workload.describe()}) under ncu -> {writer.final}")
        ncu_run = run_ncu(app, writer.path, ncu=ncu, progress=say, env=env)
        writer.log_command(ncu_run.command)
        writer.add_log(ncu_run.log)
        writer.manifest.tools["ncu"] = {"path": ncu_run.command[0], "version": ncu_version(ncu_run.command[0])}
        writer.add_report(ncu_run.report, "ncu", launches=len(ncu_run.passes),
                          passes=max(ncu_run.passes, default=None))
        say(f"[2/3] ncu done: {len(ncu_run.passes)} launches profiled, "
            f"{max(ncu_run.passes, default=0)} replay passes each")
        harness = RunDir(writer.path).harness()
        writer.manifest.host = {"gpu": harness.get("device"), "torch": harness.get("torch"),
                                "triton": harness.get("triton"), "cuda": harness.get("cuda"),
                                "python": sys.version.split()[0]}
        from profiler.readers import read_launches

        launches = read_launches(ncu_run.report)
        problems = completeness(launches, iterations, len(ncu_run.passes))
        if problems:
            raise IncompleteRun(f"{ncu_run.report}: incomplete capture: {'; '.join(problems)}")
        launches.to_csv(writer.path / LAUNCHES, index=False)
        analysis = summarize(launches, workload, iterations)
        result = analysis.to_dict()
        result["profile"] = {"passes": ncu_run.passes, "wall_s": round(time.time() - started, 1)}
        writer.write_json(ANALYSIS, result)
        final = writer.commit()
    except BaseException as exc:
        reason = "interrupted (Ctrl-C)" if isinstance(exc, KeyboardInterrupt) else str(exc).splitlines()[0]
        exc.kept_at = writer.fail(reason)  # the CLI names it; nothing captured is lost
        raise
    say(f"[3/3] wrote {final} in {time.time() - started:.1f} s")
    return load(final)


def report(run: "Run | str | Path | None" = None, out: str | Path | None = None, force: bool = False) -> list[Path]:
    """A GitHub-flavoured markdown report of a run (or of what `load(path)` reads) with roofline and
    stall charts beside it; never replaces an existing report unless `force`. See roofline/reporting.py."""
    from roofline.reporting import report as write_report

    return write_report(run, out, force=force)
