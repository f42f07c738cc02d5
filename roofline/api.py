"""The public API: every step a user can ask for, as functions. The CLI only parses and prints.

import roofline
run = roofline.load("runs/triton_mla-128k-...")      # run dir, report, or folder of reports
run.kernels                                          # one row per kernel, with bound and cause
run.launches                                         # one row per launch, units in column names
run.launch_table                                     # the same, typed: source, rules, notes, missing metrics
run = roofline.profile(kernel="triton_mla", ctx="128k")   # on a GPU box with ncu
cmp = roofline.compare(base_run_or_path, head_run_or_path, fail_if_slower_pct=5)
cmp.speedup, cmp.passed, cmp.to_dict()               # step, kernels (value, delta %, noise), gate

A facade: `load` is roofline/pipelines/loading.py's own; each other function is its signature, its docstring
and one call into roofline/pipelines/ (profiling.py, reporting.py) or roofline/analysis/comparison.py, where
the work is.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from kernels.spec import VerifyWorkload
from roofline.analysis.comparison import DEFAULT_P_VALUE, CompareError, Comparison  # noqa: F401 (public API)
from roofline.analysis.comparison import compare as compare_runs
from roofline.analysis.useful import UsefulWork  # noqa: F401 (public API)
from roofline.pipelines import profiling
from roofline.pipelines.capture import IncompleteRun, completeness, pc_samples_of  # noqa: F401 (public API)
from roofline.pipelines.loading import load, sample_run  # noqa: F401 (public API)
from roofline.pipelines.request import (  # noqa: F401 (public API)
    DEFAULT_TIMEOUT_S,
    DEFAULT_TIMING_ROUNDS,
    DEFAULT_TIMING_SAMPLES,
    TOOLS,
    ProfileRequest,
    make_workload,
)
from roofline.pipelines.run import Run


def profile(
    request: ProfileRequest | str,
    workload: VerifyWorkload | None = None,
    *,
    out: str | Path | None = None,
    force: bool = False,
    progress: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    command: list[str] | None = None,
    **settings,
) -> Run:
    """Run a kernel on a workload under Nsight Compute and/or Nsight Systems in a child process and
    return the new run, analysed from what the capture read (each report is read once).

    `request`: a ProfileRequest (roofline/pipelines/request.py: the kernel, the workload and every setting,
    with their defaults), or a kernel's name with `workload` and `settings` by keyword:
    `iterations` launches in the profiled range; `tool`: "ncu", "nsys" or "both" (None takes both when both
    are found, else the one found); `ncu`/`nsys`: the tools' paths; `timeout` bounds the whole capture
    (seconds): past it the running tool's process group is ended. `preset`: the ncu metric preset
    (profiler/metrics.py; default DEFAULT_PRESET), resolved for `chip` (default: the chip of the local GPU,
    kernels/data/hardware.json). `source`: add the source counters and embed the kernel's source (profiler/metrics.py
    with_source): each sampled line's text. `timing_samples`: after the captures, a child with no profiler attached
    times the step this many times in all (rotated input sets, CUDA-graph replays) into timing.json, which `compare`
    tests; 0 skips it. `timing_rounds`: over this many child processes (rounds): compare's interval holds the spread
    between rounds, what varies between runs (3 rounds a side at least; 1: a within-run interval only).
    `why`: also run the kernel's removal experiment (its MMAs, softmax, gathers compiled out, timed by the bench's
    method) into removal.json: the verdict says what sets the pace (roofline/pipelines/why.py).
    Without `workload`, the other keywords make one (make_workload: ctx="128k", heads=8, ..., or a ragged batch,
    lens="mix:1x128k,15x2k" or lens="uniform:1k-32k" with batch=32 and seed).

    `in_kernel`: also run the step with the kernel's in-kernel stamps on into in_kernel.npz: each warpgroup's
    stages per tile, per SM, and the stamps' cost (roofline/pipelines/in_kernel.py); a kernel without stamps gets a
    one-line note.

    `env` is added to the profiled child's environment (e.g. CUDA_VISIBLE_DEVICES); `command` is the command
    recorded in spec.json as the one that made the run (default: sys.argv). The run is written atomically
    (see profiler/run_writer.py): on failure, timeout or Ctrl-C it is kept under `<out>.failed-<time>` with its
    logs, and an existing `out` is never touched unless `force`.
    """
    if not isinstance(request, ProfileRequest):
        request = ProfileRequest.of(request, workload, **settings)
    elif workload is not None or settings:
        raise TypeError("profile(request): the request holds the workload and the settings")
    return profiling.profile(request, out=out, force=force, progress=progress, env=env, command=command)


def report(
    run: Run | str | Path | None = None,
    out: str | Path | None = None,
    force: bool = False,
    source: str | Path | None = None,
) -> list[Path]:
    """A GitHub-flavoured markdown report of a run (or of what `load(path)` reads) with roofline and
    stall charts beside it; never replaces an existing report unless `force`. See roofline/pipelines/reporting.py."""
    from roofline.pipelines.reporting import report as write_report  # lazy: the markdown renderer, for reports only

    if not isinstance(run, Run):
        source = source if source is not None else run
        run = load(run)
    return write_report(run, out, force=force, source=source)


def compare(
    base: Run | str | Path,
    head: Run | str | Path,
    fail_if_slower_pct: float | None = None,
    allow_different_workload: bool = False,
    allow_incomplete: bool = False,
    p_value: float = DEFAULT_P_VALUE,
    pairs: dict[str, str] | None = None,
) -> Comparison:
    """Compare two runs (Run objects or paths `load` reads): step, kernels, timing samples and the gate
    (roofline/analysis/comparison.py). Kernels pair by name, else as `pairs` says ({base kernel: head
    kernel}), else by role (the main pass, the combine: roofline/analysis/pairing.py), each said in a note."""
    runs = [r if isinstance(r, Run) else load(r, allow_incomplete=allow_incomplete) for r in (base, head)]
    return compare_runs(
        *runs,
        fail_if_slower_pct=fail_if_slower_pct,
        allow_different_workload=allow_different_workload,
        p_value=p_value,
        pairs=pairs,
    )
