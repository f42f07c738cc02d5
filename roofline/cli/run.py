"""`roofline profile` and `roofline analyze`: a run captured or re-read, its verdicts printed."""

from __future__ import annotations

import sys

import click

from kernels.errors import RooflineError
from profiler.ncu_reader import discard_prefetched, prefetch_capture
from profiler.proc import stop_signals_interrupt
from roofline.cli.common import (
    WORKLOAD_OPTIONS,
    BadInputExit,
    allow_incomplete_option,
    api,
    chip_option,
    echo_json,
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
from roofline.pipelines.request import DEFAULT_KERNEL


def print_run(run, fmt: str, project_to: str | None = None) -> dict:
    """Print a run's analysis (text or JSON), with a projection onto another GPU when asked."""
    # lazy: pandas comes with these; `analyze` starts reading its report (prefetch) before they load
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
        echo_json(result)
    else:
        click.echo(render_text(run.analysis))
        if run.timeline is not None:
            counters = run.launch_table.counters  # False: the table is the timeline's own
            click.echo(
                "\n"
                + render_timeline(
                    run.timeline,
                    run.analysis if counters else None,
                    run.manifest.tools if run.manifest is not None else None,
                )
            )
        if projection:
            click.echo("\n" + render_projection(projection))
    return result


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
def analyze_cmd(path, project_to, allow_incomplete, removal, useful_flops, useful_bytes, fmt) -> None:
    """Re-read a run directory, a report or a folder of reports (no GPU needed). Default: the bundled H200 sample."""
    if path:  # start reading the report in a child now, while pandas and the analysis load here
        prefetch_capture(path)

    if not path and fmt == "text":
        progress(f"no path given: analyzing the bundled H200 capture {api().sample_run()}")
    try:
        useful = useful_work(useful_flops, useful_bytes)
        run = api().load(path, allow_incomplete=allow_incomplete, removal=removal, useful=useful)
    except (RooflineError, ValueError) as exc:  # a bad report, workload or experiment file
        if path:
            discard_prefetched()  # refused before its report was read: end that read
        raise _fail(exc) from None
    print_run(run, fmt, project_to)
