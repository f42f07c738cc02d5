"""`roofline sweep`: profile a grid of points, one run directory each; resumable; table and chart.

Exit 0 when every point is done; 1 when a point failed, or a failure every point would repeat stopped the
sweep (no ncu: one line before anything is made; no counter permission: at the first point); 128 + the
signal when interrupted (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP); 2 on bad input.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
import sys
from pathlib import Path

import click
from tqdm import tqdm

from kernels.batches import lens_text
from kernels.errors import RooflineError
from kernels.registry import get_kernel
from kernels.spec import WorkloadError, ctx_text, parse_ctx_len
from profiler.errors import ToolNotFound
from profiler.ncu import find_ncu
from profiler.proc import stop_signals_interrupt
from profiler.staging import OutputExists
from reports.sweep import render_summary_markdown, render_summary_text
from roofline.cli.common import (
    WORKLOAD_OPTIONS,
    BadInputExit,
    comma_list,
    echo_json,
    fail,
    folder_option,
    force_option,
    format_option,
    out_option,
    renamed,
)
from roofline.cli.options import capture_options, grid_lists, grid_options, profile_request
from roofline.cli.run import profile_cmd
from roofline.pipelines.request import ProfileRequest
from roofline.pipelines.sweep_dir import LAYOUT, SweepDir
from roofline.pipelines.sweeps import POINT_REQUEST, POINT_TOOL, SweepError, SweepPoint, plan, run_sweep, summarize


def _kernel(name: str) -> str:
    return get_kernel(name).name


def _gpu_index(text: str) -> str:
    if not text.isdigit():
        raise ValueError(f"{text!r} is not a GPU index (0, 1, ...)")
    return text


def command_line(command: click.Command, values: dict) -> list[str]:
    """`roofline COMMAND ...` from values keyed by the command's own parameter names, in its option order:
    a flag when true, nothing for None or false; a name the command lacks raises (a job command can
    never ask for an option that does not exist)."""
    options = {p.name: p for p in command.params if isinstance(p, click.Option)}
    if unknown := set(values) - set(options):
        raise KeyError(f"roofline {command.name} has no option for {sorted(unknown)}")
    argv = ["roofline", command.name]
    for name, option in options.items():
        value = values.get(name)
        if value is None or value is False:
            continue
        flag = max(option.opts, key=len)  # the long name (--out, not -o): a command a reader can follow
        argv += [flag] if option.is_flag else [flag, f"{value:g}" if isinstance(value, float) else str(value)]
    return argv


def point_command(point: SweepPoint, sweep_dir: Path, settings: ProfileRequest) -> tuple[str, ...]:
    """The `roofline profile` command that makes one point on its own: the point's ProfileRequest (its kernel
    and workload, the sweep's settings), every field as profile's option of the same name."""
    request = point.request(settings)
    w = request.workload
    size = {"lens": lens_text(w.ctx_lens)} if w.ctx_lens else {"ctx_len": ctx_text(w.ctx_len), "batch": w.batch}
    workload = {k: getattr(w, k) for k in WORKLOAD_OPTIONS if k not in ("ctx_len", "batch", "lens")}
    values = {"kernel": request.kernel, **size, **workload, **request.settings()}
    values["out_dir"] = SweepDir(sweep_dir).point(point.name)
    return tuple(command_line(profile_cmd, values))


def _summary(sweep_dir: Path, fmt: str, write: bool = True, seen: dict | None = None, force: bool = False) -> None:
    """Print the sweep's table; with `write`, also save summary.csv and the chart in the folder (put in
    place together; one another command rewrote since `seen` is refused unless `force`)."""
    sweep = SweepDir.open(sweep_dir)
    table = summarize(sweep.path)
    files = []
    chart = bool((table["status"] == "done").any() and table["step_ms"].notna().any())
    if write:
        try:
            files = sweep.write_summary(table, chart=chart, title=_chart_title(sweep, table), seen=seen, force=force)
        except ImportError as exc:
            click.echo(f"no chart: {exc} (pip install matplotlib)", err=True)
            files = sweep.write_summary(table, chart=False, seen=seen, force=force)
    if fmt == "json":
        echo_json(json.loads(table.to_json(orient="records")))
    elif fmt == "markdown":
        click.echo(render_summary_markdown(table), nl=False)
    else:
        click.echo(render_summary_text(table))
    noted = table[(table["status"] == "done") & table["error"].notna()]
    if len(noted) and fmt != "json":  # done rows whose numbers are not from their run folders
        sources = noted["error"].str.split(": ").str[-1].value_counts()
        for source, n in sources.items():
            click.echo(f"note: {n} point(s) without their run folder in {sweep_dir}: {source}", err=True)
    if not write:
        click.echo(f"nothing written (pass --write to save {sweep.summary_file} and the chart)", err=True)
        return
    charts = [str(f) for f in files if f != sweep.summary_file]
    click.echo(
        f"wrote {sweep.summary_file}" + (f", {', '.join(charts)}" if charts else " (no finished point: no chart)"),
        err=True,
    )


def _chart_title(sweep: SweepDir, table) -> str:
    gpu = sweep.gpu(list(table.loc[table["status"] == "done", "run"]))
    return f"{gpu + ': ' if gpu else ''}kernel time per verify step vs context length"


@click.command("sweep")
@click.option("--kernel", "kernels", default=None, help="kernels, comma-separated (e.g. triton_mla,triton_mla_fast)")
@grid_options(ctx="8k,32k,128k", heads="8")
@out_option("out", f"the sweep folder: {LAYOUT}", default="runs/sweep", folder=True)
@click.option(
    "--devices", "devices", default=None, help="CUDA device indices of this host (0,1): one worker process per GPU"
)
@renamed("--gpus", "--devices", "devices")
@capture_options(tool_default=POINT_TOOL, tool_help="counters (ncu), timeline (nsys) or both, at each point")
@folder_option(
    "--summarize",
    "summarize_dir",
    "only print the table of an existing sweep folder (no GPU); writes nothing unless --write",
)
@click.option("--write", is_flag=True, help="with --summarize: also save the table and the chart in the folder")
@click.option(
    "--print-commands",
    is_flag=True,
    help="print one `roofline profile` command per point (for a scheduler's job array) and exit",
)
@force_option
@format_option("text", "markdown", "json")
def sweep_cmd(
    kernels,
    ctx_list,
    page_sizes,
    heads_list,
    q_lens,
    masks,
    batch,
    lens_list,
    seed,
    out,
    devices,
    summarize_dir,
    write,
    print_commands,
    force,
    fmt,
    **options,
) -> None:
    """Profile every kernel x ctx x page size x heads x q_len point; skip finished ones; table and chart.
    One command at a time writes a sweep folder (a second is refused); --force writes the summary over a
    summary.csv or chart another command changed meanwhile."""
    if summarize_dir is not None:
        try:
            if write:
                with SweepDir(summarize_dir).lock():
                    _summary(Path(summarize_dir), fmt, write=True, force=force)
            else:
                _summary(Path(summarize_dir), fmt, write=False)
        except (RooflineError, ValueError) as exc:  # the sweep file, or a run in it that cannot be read
            raise BadInputExit(str(exc).splitlines()[0]) from None
        return
    if write:
        raise BadInputExit("--write goes with --summarize DIR (a sweep run always writes its summary)")
    if not kernels:
        raise BadInputExit("--kernel is required (e.g. --kernel triton_mla,triton_mla_fast), or --summarize DIR")
    options["preset"] = options["preset"] or POINT_REQUEST.preset  # a sweep names the preset in each command
    settings = profile_request(POINT_REQUEST.kernel, POINT_REQUEST.workload, options)
    gpu_list = comma_list(devices, _gpu_index, "--devices") if devices else None
    try:
        g = grid_lists(page_sizes, heads_list, q_lens, masks)
        points = plan(
            comma_list(kernels, _kernel, "--kernel"),
            comma_list(ctx_list, parse_ctx_len, "--ctx"),
            g["page_sizes"],
            g["heads"],
            g["q_lens"],
            masks=list(g["masks"]),
            batch=batch,
            lens=list(lens_list),
            seed=seed,
        )
    except (SweepError, WorkloadError) as exc:
        raise BadInputExit(str(exc)) from None
    sweep_dir = Path(out)
    points = [dataclasses.replace(p, command=point_command(p, sweep_dir, settings)) for p in points]
    if print_commands:
        for p in points:
            click.echo(shlex.join(p.command))
        return
    params = click.get_current_context().params
    resume = shlex.join(
        command_line(
            sweep_cmd,
            {k: v for k, v in params.items() if k not in ("summarize_dir", "write", "print_commands", "fmt", "force")}
            | ({"fmt": fmt} if fmt != "text" else {}),
        )
    )
    try:
        find_ncu(settings.ncu)  # every point runs ncu: without it one error, and no folder is made
        sweep = SweepDir.create(sweep_dir)  # a folder that is not a sweep is refused before the progress bar
    except (SweepError, ToolNotFound) as exc:
        raise fail(exc) from None
    seen = sweep.seen()  # the summary's files as this sweep found them
    outcome = _run_with_progress(points, sweep_dir, settings, gpu_list, resume)
    try:
        _summary(sweep_dir, fmt, seen=seen, force=force)
    except OutputExists as exc:
        click.echo(f"Error: {exc}", err=True)
    _report(outcome, points, sweep_dir, resume)


def _report(outcome, points: list[SweepPoint], sweep_dir: Path, resume: str) -> None:
    """The counts, each failure with the command that runs its point alone, and the exit status: the
    sweep's own advice (a point's failure is profile's words; how to go on is the sweep's)."""
    failed = [r for r in outcome.results if r.status == "failed"]
    commands = {p.name: shlex.join(p.command) for p in points}
    say = lambda m: click.echo(m, err=True)  # noqa: E731
    say(
        f"{outcome.count('done')} profiled, {outcome.count('kept')} kept from before, {len(failed)} failed, "
        f"{outcome.count('interrupted')} interrupted, of {len(points)} points"
    )
    if outcome.stopped is not None:
        r = outcome.stopped
        pending = len(points) - len(outcome.results)
        say(
            f"Error: stopped at {r.name}: {r.error}\nevery point would fail the same way, so the other {pending} "
            f"were not tried (`roofline doctor` says what to fix); then resume with:\n  {resume}"
        )
        sys.exit(1)
    for r in failed:
        say(f"failed: {r.name}: {r.error}" + (f" (kept at {r.kept_at})" if r.kept_at else ""))
        if r.name in commands:
            say(f"  to see it alone: {commands[r.name]}")
    if outcome.interrupted:
        say(f"interrupted: finished points are kept in {sweep_dir}; resume with:\n  {resume}")
        sys.exit(outcome.exit_code)
    if failed:
        say(f"rerun the same command to retry the failed points (finished ones are kept):\n  {resume}")
        sys.exit(1)


def _run_with_progress(points, sweep_dir, settings: ProfileRequest, gpus, resume):
    """run_sweep with a tqdm bar on stderr: points done of all, elapsed, time left, the points running."""

    bar = tqdm(
        total=len(points),
        unit="point",
        file=sys.stderr,
        dynamic_ncols=True,
        bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} points [{elapsed}<{remaining}]{postfix}",
    )
    running: dict[str, str | None] = {}
    kept: list[str] = []

    def show() -> None:
        bar.set_postfix_str(" ".join(f"{n}" + (f"@gpu{g}" if g is not None else "") for n, g in running.items()))

    def on_start(point, gpu) -> None:
        if kept and not running and bar.n == 0:
            bar.write(f"kept {len(kept)} finished point(s) from before; {bar.total} to run", file=sys.stderr)
        running[point.name] = gpu
        show()

    def on_done(result) -> None:
        running.pop(result.name, None)
        if result.status == "kept":
            kept.append(result.name)
            bar.total -= 1  # time left counts only the points that still run
            bar.refresh()
            return
        bar.update(1)
        if result.status == "failed":
            bar.write(f"FAILED {result.name}: {result.error}", file=sys.stderr)
        show()

    try:
        with stop_signals_interrupt():  # SIGTERM / SIGHUP as Ctrl-C: finished points kept, exit 128 + signal
            return run_sweep(points, sweep_dir, settings, gpus, command=resume, on_start=on_start, on_done=on_done)
    except (SweepError, ToolNotFound) as exc:
        raise fail(exc) from None
    finally:
        bar.close()
