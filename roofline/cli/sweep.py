"""`roofline sweep`: profile a grid of points, one run directory each; resumable; table and chart.

Exit 0 when every point is done, 1 when a point failed, 130 when interrupted, 2 on bad input.
"""

from __future__ import annotations

import dataclasses
import shlex
import sys
from pathlib import Path

import click
from tqdm import tqdm

from kernels.batches import lens_text
from kernels.errors import RooflineError
from kernels.registry import get_kernel
from kernels.spec import WorkloadError, ctx_text, parse_ctx_len
from profiler.metrics import DEFAULT_PRESET
from reports.sweep import render_summary_markdown, render_summary_text
from roofline.cli.common import BadInputExit, comma_list, folder_option, format_option, ncu_option
from roofline.cli.run import profile_cmd
from roofline.pipelines.sweep_dir import LAYOUT, SweepDir
from roofline.pipelines.sweeps import DEFAULT_TIMEOUT_S, POINT_TOOL, SweepError, SweepPoint, plan, run_sweep, summarize


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
        argv += [option.opts[0]] if option.is_flag else [option.opts[0], str(value)]
    return argv


def point_command(point: SweepPoint, sweep_dir: Path, iterations: int, ncu: str | None) -> tuple[str, ...]:
    """The `roofline profile` command that makes one point on its own, with the same tool, preset and
    timeout as the sweep's own run of it (roofline.pipelines.sweeps.run_point)."""
    w = point.workload
    same = ("heads", "q_len", "page_size", "tree_mask", "seed")  # option name = workload field
    size = {"lens": lens_text(w.ctx_lens)} if w.ctx_lens else {"ctx_len": ctx_text(w.ctx_len), "batch": w.batch}
    values = {"kernel": point.kernel, **size, **{f: getattr(w, f) for f in same}}
    values |= {"iters": iterations, "tool": POINT_TOOL, "preset": DEFAULT_PRESET, "timeout": f"{DEFAULT_TIMEOUT_S:g}"}
    values |= {"out_dir": SweepDir(sweep_dir).point(point.name), "ncu_path": ncu}
    return tuple(command_line(profile_cmd, values))


def _summary(sweep_dir: Path, fmt: str, write: bool = True) -> None:
    """Print the sweep's table; with `write`, also save summary.csv and the chart in the folder."""
    sweep = SweepDir.open(sweep_dir)
    table = summarize(sweep.path)
    charts = []
    if write:
        sweep.write_summary(table)
    if write and (table["status"] == "done").any() and table["step_ms"].notna().any():
        try:
            charts = sweep.write_chart(table, title=_chart_title(sweep, table))
        except ImportError as exc:
            click.echo(f"no chart: {exc} (pip install matplotlib)", err=True)
    if fmt == "json":
        click.echo(table.to_json(orient="records", indent=2))
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
    click.echo(
        f"wrote {sweep.summary_file}"
        + (f", {', '.join(map(str, charts))}" if charts else " (no finished point: no chart)"),
        err=True,
    )


def _chart_title(sweep: SweepDir, table) -> str:
    gpu = sweep.gpu(list(table.loc[table["status"] == "done", "run"]))
    return f"{gpu + ': ' if gpu else ''}kernel time per verify step vs context length"


@click.command("sweep")
@click.option("--kernel", "kernels", default=None, help="kernels, comma-separated (e.g. triton_mla,triton_mla_fast)")
@click.option("--ctx", "ctx", default="8k,32k,128k", show_default=True, help="context lengths, comma-separated")
@click.option("--page-size", "pages", default="1,64", show_default=True)
@click.option("--heads", "heads", default="8", show_default=True)
@click.option("--q-len", "q_lens", default="9", show_default=True)
@click.option(
    "--batch",
    type=int,
    default=None,
    help="requests per step: equal ones at each --ctx, or the size of a --lens uniform: draw",
)
@click.option(
    "--lens",
    "lens_list",
    multiple=True,
    metavar="LENS",
    help="a ragged batch in place of --ctx (repeatable: a point each): 4k,128k,2k | uniform:1k-32k (with --batch, "
    "drawn with --seed) | mix:1x128k,15x2k | file:PATH",
)
@click.option("--seed", type=int, default=0, show_default=True, help="the draw of a uniform:LOW-HIGH batch")
@click.option("--iters", type=int, default=3, show_default=True, help="launches inside each profiled range")
@folder_option("--out", "out", f"the sweep folder: {LAYOUT}", default="runs/sweep")
@click.option("--gpus", default=None, help="GPU indices of this host (0,1): one worker process per GPU")
@ncu_option
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
@format_option("text", "markdown", "json")
def sweep_cmd(
    kernels,
    ctx,
    pages,
    heads,
    q_lens,
    batch,
    lens_list,
    seed,
    iters,
    out,
    gpus,
    ncu_path,
    summarize_dir,
    write,
    print_commands,
    fmt,
) -> None:
    """Profile every kernel x ctx x page size x heads x q_len point; skip finished ones; table and chart."""
    if summarize_dir is not None:
        try:
            _summary(Path(summarize_dir), fmt, write=write)
        except (RooflineError, ValueError) as exc:  # the sweep file, or a run in it that cannot be read
            raise BadInputExit(str(exc).splitlines()[0]) from None
        return
    if write:
        raise BadInputExit("--write goes with --summarize DIR (a sweep run always writes its summary)")
    if not kernels:
        raise BadInputExit("--kernel is required (e.g. --kernel triton_mla,triton_mla_fast), or --summarize DIR")
    if iters < 1:
        raise BadInputExit("--iters must be at least 1")
    gpu_list = comma_list(gpus, _gpu_index, "--gpus") if gpus else None
    try:
        points = plan(
            comma_list(kernels, _kernel, "--kernel"),
            comma_list(ctx, parse_ctx_len, "--ctx"),
            comma_list(pages, int, "--page-size"),
            comma_list(heads, int, "--heads"),
            comma_list(q_lens, int, "--q-len"),
            batch=batch,
            lens=list(lens_list),
            seed=seed,
        )
    except (SweepError, WorkloadError) as exc:
        raise BadInputExit(str(exc)) from None
    sweep_dir = Path(out)
    points = [dataclasses.replace(p, command=point_command(p, sweep_dir, iters, ncu_path)) for p in points]
    if print_commands:
        for p in points:
            click.echo(shlex.join(p.command))
        return
    params = click.get_current_context().params
    resume = shlex.join(
        command_line(
            sweep_cmd,
            {k: v for k, v in params.items() if k not in ("summarize_dir", "write", "print_commands", "fmt")}
            | ({"fmt": fmt} if fmt != "text" else {}),
        )
    )
    try:
        SweepDir.create(sweep_dir)  # a folder that is not a sweep is refused before the progress bar
    except SweepError as exc:
        raise BadInputExit(str(exc)) from None
    outcome = _run_with_progress(points, sweep_dir, iters, ncu_path, gpu_list, resume)
    failed = [r for r in outcome.results if r.status == "failed"]
    _summary(sweep_dir, fmt)
    say = lambda m: click.echo(m, err=True)  # noqa: E731
    say(
        f"{outcome.count('done')} profiled, {outcome.count('kept')} kept from before, {len(failed)} failed, "
        f"{outcome.count('interrupted')} interrupted, of {len(points)} points"
    )
    for r in failed:
        say(f"failed: {r.name}: {r.error}" + (f" (kept at {r.kept_at})" if r.kept_at else ""))
    if outcome.interrupted:
        say(f"interrupted: finished points are kept in {sweep_dir}; resume with:\n  {resume}")
        sys.exit(130)
    if failed:
        say(f"rerun the same command to retry the failed points:\n  {resume}")
        sys.exit(1)


def _run_with_progress(points, sweep_dir, iters, ncu_path, gpus, resume):
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
        return run_sweep(
            points,
            sweep_dir,
            iterations=iters,
            ncu=ncu_path,
            gpus=gpus,
            command=resume,
            on_start=on_start,
            on_done=on_done,
        )
    except SweepError as exc:
        raise BadInputExit(str(exc)) from None
    finally:
        bar.close()
