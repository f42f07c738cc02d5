"""`roofline profile` and `roofline analyze`: a run captured or re-read, its verdicts printed."""

from __future__ import annotations

import sys

import click

from kernels.errors import RooflineError
from profiler.checks import strict_json
from profiler.ncu_reader import discard_prefetched, prefetch_capture
from profiler.proc import stop_signals_interrupt
from roofline.cli.common import (
    WORKLOAD_OPTIONS,
    BadInputExit,
    allow_incomplete_option,
    api,
    chip_option,
    force_option,
    format_option,
    gpu_by_name,
    gpu_option,
    kernel_name,
    make_workload,
    out_option,
    progress,
    removal_option,
    renamed,
    useful_options,
    useful_work,
    workload_options,
)
from roofline.cli.common import fail as _fail
from roofline.cli.options import capture_options, profile_request
from roofline.cli.output import claim, printed_output_options, write
from roofline.pipelines.request import DEFAULT_KERNEL
from roofline.pipelines.run_folder import run_folders, summarize_runs


def run_output(run, fmt: str, project_to: str | None = None) -> str:
    """A run's analysis as printed (text or JSON), with a projection onto another GPU when asked."""
    # lazy: pandas comes with these; `analyze` starts reading its report (prefetch) before they load
    from reports.pm_sampling import pm_text
    from reports.step_times import step_times, step_times_text
    from reports.text import render_projection, render_text, render_timeline
    from roofline.analysis.projection import project
    from roofline.catalogue.gpus import match_gpu

    result = run.to_dict()
    projection = None
    if project_to is not None:
        target = gpu_by_name(project_to)
        source = match_gpu(run.analysis.gpu.name)
        if source is None:
            raise BadInputExit(f"cannot project: profiled device {run.analysis.gpu.name!r} is not in the GPU catalogue")
        projection = project(run.analysis.kernels, source, target, run.workload)
        result["projection"] = run.analysis.clean(projection)
    if fmt == "json":
        return strict_json(result) + "\n"
    parts = [render_text(run.analysis)]
    if run.timeline is not None:
        counters = run.launch_table.counters  # False: the table is the timeline's own
        tools = run.manifest.tools if run.manifest is not None else None
        parts.append(render_timeline(run.timeline, run.analysis if counters else None, tools))
    if times := step_times_text(step_times(run.analysis, run.timeline, run.timing)):
        parts.append("\n".join(times))
    if pm := pm_text(run.pm_sampling):
        parts.append("\n".join(pm))
    if projection:
        parts.append(render_projection(projection))
    return "\n\n".join(parts) + "\n"


def print_run(run, fmt: str, project_to: str | None = None) -> str:
    """Print a run's analysis (run_output) and return what was printed."""
    text = run_output(run, fmt, project_to)
    click.echo(text, nl=False)
    return text


@click.command("profile")
@click.option("--kernel", default=DEFAULT_KERNEL, show_default=True)
@workload_options
@out_option("out_dir", "run directory (default runs/<kernel>-<ctx>-h<heads>-q<q_len>-p<page>-<time>)", folder=True)
@force_option
@capture_options()
@renamed("--chip", "--gpu", "chip", callback=chip_option)
@click.option(
    "--source",
    is_flag=True,
    help="add the source counters and embed the kernel's source: where the warps "
    "wait with each line's text (about one more replay pass)",
)
@click.option(
    "--why",
    is_flag=True,
    help="also run the kernel's removal experiment (its MMAs, softmax, gathers compiled out, timed by the "
    "bench's method): the verdict names what sets the pace; the run keeps removal.json",
)
@click.option(
    "--in-kernel",
    is_flag=True,
    help="also run the step with the kernel's in-kernel stamps on (each warpgroup's stages per tile, per SM, "
    "their cost on the step): the run keeps in_kernel.npz, the report draws it",
)
@format_option()
def profile_cmd(kernel, out_dir, force, fmt, **options) -> None:
    """Run a kernel under Nsight Compute and/or Nsight Systems, parse the reports, print verdicts (needs a GPU)."""

    workload = make_workload(**{k: options.pop(k) for k in WORKLOAD_OPTIONS})
    request = profile_request(kernel_name(kernel), workload, options)
    try:
        with stop_signals_interrupt():  # SIGTERM / SIGHUP: as Ctrl-C, the run kept marked failed
            run = api().profile(request, out=out_dir, force=force, progress=progress)
    except (RooflineError, ValueError) as exc:  # CaptureFailed names where the run was kept
        raise _fail(exc) from None
    except KeyboardInterrupt as exc:
        click.echo("Error: " + str(_fail(exc).message).strip(), err=True)
        sys.exit(getattr(exc, "exit_code", 130))
    print_run(run, fmt)


def _runs_output(path: str, folders, fmt: str) -> str:
    """A folder of run directories: one row per run (its step, floor, gap and bound)."""
    from reports.sweep import render_runs_text  # lazy: pandas, as in run_output

    table = summarize_runs(folders)
    if fmt == "json":
        return strict_json({"runs": table.astype(object).where(table.notna(), None).to_dict("records")}) + "\n"
    return (
        f"{path}: {len(folders)} run directories (`roofline analyze RUN` for one run's verdicts)\n"
        + render_runs_text(table)
        + "\n"
    )


@click.command("analyze")
@click.argument("path", type=click.Path(), required=False)
@click.option(
    "--gpu",
    "project_to",
    default=None,
    callback=gpu_option,
    help="also project the kernels onto this GPU model (e.g. rtx-pro-6000; see `roofline gpus`)",
)
@renamed("--project-to", "--gpu", "project_to", callback=gpu_option)
@allow_incomplete_option("analyze a report holding fewer launches than its run asked for (marked complete: false)")
@removal_option
@useful_options
@format_option()
@printed_output_options
def analyze_cmd(path, project_to, allow_incomplete, removal, useful_flops, useful_bytes, fmt, out, force) -> None:
    """Re-read a run directory, a report or a folder of reports (no GPU needed); a folder of run directories
    gives a row per run. Default: the bundled H200 sample."""
    folders = run_folders(path)
    per_run = {"--gpu": project_to, "--removal": removal, "--allow-incomplete": allow_incomplete or None}
    per_run.update({"--useful-flops": useful_flops, "--useful-bytes": useful_bytes})
    if folders and (given := [o for o, v in per_run.items() if v is not None]):
        raise BadInputExit(f"{path}: a folder of run directories takes no {', '.join(given)}: name one run")
    staged = claim(out, force)
    if folders:
        text = _runs_output(path, folders, fmt)
        click.echo(text, nl=False)
        return write(staged, out, text)
    if path:  # start reading the report in a child now, while pandas and the analysis load here
        prefetch_capture(path)

    if not path and fmt == "text":
        progress(f"no path given: analyzing the bundled H200 capture {api().sample_run()}")
    try:
        useful = useful_work(useful_flops, useful_bytes)
        run = api().load(path, allow_incomplete=allow_incomplete, removal=removal, useful=useful)
        text = print_run(run, fmt, project_to)
    except (RooflineError, ValueError, click.ClickException) as exc:  # a bad report, workload or experiment file
        if path:
            discard_prefetched()  # refused before its report was read: end that read
        if staged is not None:
            staged.discard()
        raise exc if isinstance(exc, click.ClickException) else _fail(exc) from None
    write(staged, out, text)
