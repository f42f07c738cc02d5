"""The `roofline` command: the one place that wires kernels, profiler, roofline and reports. Run through
roofline/entry.py, which first checks that `kernels` and `profiler` are this project's."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import sys
from datetime import datetime, timezone
from pathlib import Path

import click

from kernels.device import (
    DeviceError,
    interpreter_max_ctx,
    interpreter_too_slow,
    pick_device,
    pick_dtype,
)
from kernels.errors import RooflineError
from kernels.registry import KERNELS, UnknownKernel, check_workload, get_kernel
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from kernels.xcompile import CompileError
from profiler.errors import ProfilerError
from profiler.metrics import DEFAULT_PRESET
from profiler.ncu import run_ncu
from profiler.ncu_reader import (
    discard_prefetched,
    prefetch_capture,
    read_ncu_report,
)
from profiler.ncu_tidy import tidy_launches
from reports.model import render_model
from reports.table import align
from roofline import modeling
from roofline.chips import local_device_name, preset_for_device
from roofline.cli_common import api, progress
from roofline.cli_common import fail as _fail
from roofline.cli_compare import compare_cmd
from roofline.cli_report import report_cmd
from roofline.cli_sweep import sweep_cmd
from roofline.doctor import doctor_cmd
from roofline.gpus import (
    MeasuredFileError,
    UnknownGpu,
    get_gpu,
    load_catalogue,
    match_gpu,
    save_measured,
    user_measured_dir,
)
from roofline.metrics_cmd import metrics_cmd
from roofline.projection import project
from roofline.resources import kernel_resources
from roofline.validation import EXPECTED, check_probe


class CtxLen(click.ParamType):
    name = "ctx_len"

    def convert(self, value, param, ctx):
        try:
            return parse_ctx_len(value)
        except WorkloadError as exc:
            self.fail(str(exc), param, ctx)


def workload_options(f):
    """The options every command that builds a workload shares."""
    opts = [
        click.option(
            "--ctx",
            "ctx_len",
            type=CtxLen(),
            default="128k",
            show_default=True,
            help="prefix tokens already in the cache (128k, 131072, 1m)",
        ),
        click.option("--batch", type=int, default=1, show_default=True),
        click.option("--heads", type=int, default=8, show_default=True, help="attention heads per GPU"),
        click.option("--q-len", type=int, default=9, show_default=True, help="draft tokens per request"),
        click.option("--page-size", type=int, default=1, show_default=True),
        click.option("--mask", "tree_mask", type=click.Choice(["tree", "chain"]), default="tree", show_default=True),
        click.option("--seed", type=int, default=0, show_default=True),
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def make_workload(**kw) -> VerifyWorkload:
    try:
        return VerifyWorkload(**kw)
    except WorkloadError as exc:
        raise click.UsageError(str(exc)) from None


def kernel_name(name: str) -> str:
    try:
        return get_kernel(name).name
    except UnknownKernel as exc:
        raise click.UsageError(str(exc)) from None


def kernel_workload(name: str, workload: VerifyWorkload) -> VerifyWorkload:
    """The workload, if the kernel can run it (the same check the kernel makes when it runs)."""
    try:
        check_workload(name, workload)
    except WorkloadError as exc:
        raise click.UsageError(str(exc)) from None
    return workload


def need_kernels(command: str) -> None:
    """A clear error when torch/triton are missing (the reading commands never need them)."""

    missing = [m for m in ("torch", "triton") if importlib.util.find_spec(m) is None]
    if missing:
        raise click.ClickException(
            f"roofline {command} needs {' and '.join(missing)}: "
            "pip install 'roofline[kernels]' (on a CPU machine: pip install torch==2.13.0 first)"
        )


@click.group()
@click.version_option(package_name="roofline")
def main() -> None:
    """How far an attention kernel is from what the GPU allows, and why."""


@main.command("kernels")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def kernels_cmd(fmt: str) -> None:
    """List the kernels in the registry."""
    missing = {k.name: k.unavailable() for k in KERNELS.values()}
    if fmt == "json":
        click.echo(
            json.dumps(
                [
                    {
                        "name": k.name,
                        "description": k.description,
                        "available": missing[k.name] is None,
                        **({"unavailable": missing[k.name]} if missing[k.name] else {}),
                    }
                    for k in KERNELS.values()
                ],
                indent=2,
            )
        )
    else:
        for k in KERNELS.values():
            click.echo(
                f"{k.name:12s} {k.description}"
                + (f"\n{'':12s} unavailable: {missing[k.name]}" if missing[k.name] else "")
            )


@main.command("check")
@click.option("--kernel", default="triton_mla", show_default=True)
@workload_options
@click.option(
    "--device",
    type=click.Choice(["cpu", "cuda"]),
    default=None,
    help="default: cuda when torch sees a GPU; cpu runs Triton's interpreter (TRITON_INTERPRET=1, slow)",
)
@click.option(
    "--dtype",
    type=click.Choice(["bf16", "fp16", "fp32"]),
    default=None,
    help="default: bf16 on cuda, fp16 on cpu (bf16 refused there: the interpreter gets bf16 dots wrong)",
)
@click.option("--allow-slow", is_flag=True, help="run the interpreter above its size limit (minutes)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def check_cmd(kernel, device, dtype, allow_slow, fmt, **wkw) -> None:
    """Run a kernel and torch_ref on the same random inputs; exit 1 when they disagree."""
    name = kernel_name(kernel)
    workload = kernel_workload(name, make_workload(**wkw))
    try:
        get_kernel(name).require(workload)  # an optional kernel not built, a workload it cannot run
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    need_kernels("check")

    try:
        device = pick_device(device)
    except DeviceError as exc:
        raise click.ClickException(str(exc)) from None
    try:
        dtype = pick_dtype(device, dtype)
    except DeviceError as exc:
        raise click.UsageError(str(exc)) from None
    if device == "cpu":
        too_slow = interpreter_too_slow(workload)
        if too_slow and not allow_slow:
            fits = interpreter_max_ctx(workload)
            smaller = f"--ctx {fits} or less" if fits else "fewer --heads or a smaller --batch"
            raise click.UsageError(f"{too_slow}: use {smaller}, or --allow-slow to run it anyway")
        os.environ["TRITON_INTERPRET"] = "1"  # before the kernel module imports triton
        if fmt == "text":
            progress(
                f"note: on cpu the kernel runs in Triton's interpreter with {dtype} inputs "
                "(its bf16 dots are wrong, triton-lang/triton#11584); bf16 is checked on the GPU"
            )
            if too_slow:
                progress(f"note: --allow-slow: {too_slow}")
    from kernels.check import check_kernel  # lazy

    try:
        result = check_kernel(name, workload, device=device, dtype=dtype)
    except (ValueError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps(result.__dict__, indent=2))
    else:
        click.echo(
            f"{result.kernel} on {result.device} ({result.dtype}, {result.workload})\n"
            f"  max_abs_err {result.max_abs_err:.3e}  rel_err {result.rel_err:.3e} "
            f"(tolerance {result.rel_tol:.0e})  unwritten {result.unwritten}  "
            f"{'ok' if result.ok else 'FAILED'}"
        )
    sys.exit(0 if result.ok else 1)


def _print_run(run, fmt: str, project_to: str | None = None) -> dict:
    """Print a run's analysis (text or JSON), with a projection onto another GPU when asked."""
    from reports.text import render_projection, render_text, render_timeline  # lazy

    result = run.to_dict()
    projection = None
    if project_to is not None:
        target = _gpu(project_to)
        source = match_gpu(run.analysis.gpu.get("name"))
        if source is None:
            raise click.ClickException(
                f"cannot project: profiled device {run.analysis.gpu.get('name')!r} is not in the GPU catalogue"
            )
        projection = project(run.analysis.kernels, source, target, run.workload)
        result["projection"] = run.analysis.clean(projection)
    if fmt == "json":
        click.echo(json.dumps(result, indent=2))
    else:
        click.echo(render_text(run.analysis))
        if run.timeline is not None:
            counters = run.launches.attrs.get("counters", True)  # False: the table is the timeline's own
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


@main.command("profile")
@click.option("--kernel", default="triton_mla", show_default=True)
@workload_options
@click.option("--iters", type=int, default=3, show_default=True, help="launches inside the profiled range")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False),
    default=None,
    help="run directory (default runs/<kernel>-<ctx>-h<heads>-q<q_len>-p<page>-<time>)",
)
@click.option(
    "--force", is_flag=True, help="replace an existing run directory at --out (only once the new run is complete)"
)
@click.option(
    "--tool",
    type=click.Choice(["ncu", "nsys", "both"]),
    default=None,
    help="counters (ncu), timeline (nsys) or both [default: both when both are found, else the one found]",
)
@click.option("--ncu", "ncu_path", default=None, help="path to ncu (else $NCU, PATH, usual folders)")
@click.option("--nsys", "nsys_path", default=None, help="path to nsys (else $NSYS, PATH, usual folders)")
@click.option(
    "--preset",
    default=None,
    help="ncu metric preset: roofline (default, 6 passes on the H200), "
    "verdict (4), full (--set full, 38); see `roofline metrics`",
)
@click.option("--chip", default=None, help="resolve the preset for this ncu chip (default: the local GPU's)")
@click.option(
    "--source",
    is_flag=True,
    help="add the source counters and embed the kernel's source: where the warps "
    "wait with each line's text (about one more replay pass)",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=900,
    show_default=True,
    help="seconds for the whole capture; past it the running tool's process group is ended",
)
@click.option(
    "--timing-samples",
    type=click.IntRange(min=0),
    default=30,
    show_default=True,
    help="after the captures, time the step this many times with no profiler attached (timing.json, "
    "what `roofline compare` tests); 0 skips it",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def profile_cmd(
    kernel, iters, out_dir, force, tool, ncu_path, nsys_path, preset, chip, source, timeout, timing_samples, fmt, **wkw
) -> None:
    """Run a kernel under Nsight Compute and/or Nsight Systems, parse the reports, print verdicts (needs a GPU)."""

    name = kernel_name(kernel)
    workload = make_workload(**wkw)
    if iters < 1:
        raise click.UsageError("--iters must be at least 1")
    from profiler.proc import stop_signals_interrupt  # lazy: only profile needs it

    try:
        with stop_signals_interrupt():  # SIGTERM / SIGHUP: as Ctrl-C, the run kept marked failed
            run = api().profile(
                name,
                workload,
                iterations=iters,
                out=out_dir,
                force=force,
                ncu=ncu_path,
                nsys=nsys_path,
                tool=tool,
                timeout=timeout,
                progress=progress,
                preset=preset,
                chip=chip,
                timing_samples=timing_samples,
                source=source,
            )
    except (RooflineError, ValueError) as exc:  # CaptureFailed names where the run was kept
        raise _fail(exc) from None
    except KeyboardInterrupt as exc:
        click.echo("Error: " + str(_fail(exc).message).strip(), err=True)
        sys.exit(getattr(exc, "exit_code", 130))
    _print_run(run, fmt)


def _gpu(name: str):
    try:
        return get_gpu(name)
    except UnknownGpu as exc:
        raise click.UsageError(str(exc)) from None
    except MeasuredFileError as exc:
        raise click.ClickException(str(exc)) from None


def _gpu_option(ctx, param, value):
    """Check a GPU-name option before any work; an empty name is an error naming the option."""
    if value is None:
        return None
    try:
        get_gpu(value)
    except UnknownGpu as exc:
        raise click.BadParameter(
            str(exc) if value.strip() else f"needs a GPU name; {str(exc).split('; ')[-1]}", ctx, param
        ) from None
    except MeasuredFileError as exc:
        raise click.ClickException(str(exc)) from None
    return value


@main.command("analyze")
@click.argument("path", type=click.Path(), required=False)
@click.option(
    "--project-to",
    default=None,
    callback=_gpu_option,
    help="also project the kernels onto this GPU (e.g. rtx-pro-6000)",
)
@click.option(
    "--allow-incomplete",
    is_flag=True,
    help="analyze a report holding fewer launches than its run asked for (marked complete: false)",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def analyze_cmd(path, project_to, allow_incomplete, fmt) -> None:
    """Re-read a run directory, a report or a folder of reports (no GPU needed). Default: the bundled H200 sample."""
    if path:  # start reading the report in a child now, while pandas and the analysis load here
        prefetch_capture(path)

    if not path and fmt == "text":
        progress(f"no path given: analyzing the bundled H200 capture {api().sample_run()}")
    try:
        run = api().load(path, allow_incomplete=allow_incomplete)
    except (ProfilerError, WorkloadError, ValueError) as exc:
        if path:
            discard_prefetched()  # refused before its report was read: end that read
        raise _fail(exc) from None
    _print_run(run, fmt, project_to)


def _int_list(text: str, parse=int) -> list[int]:
    try:
        return [parse(x) for x in text.split(",") if x.strip()]
    except (ValueError, WorkloadError) as exc:
        raise click.BadParameter(f"{text!r}: {exc}") from None


@main.command("bench")
@click.option(
    "--kernel",
    "--kernels",
    "kernel_list",
    default="triton_mla,triton_mla_decode,triton_mla_fast",
    show_default=True,
    help="comma list; `read` times a bare read of each point's KV bytes",
)
@click.option("--ctx", "ctx_list", default="8k,32k,128k,256k", show_default=True)
@click.option("--page-size", "--page-sizes", "page_sizes", default="1,64", show_default=True)
@click.option("--heads", "heads_list", default="8,64", show_default=True)
@click.option(
    "--mask",
    "mask_list",
    default="tree",
    show_default=True,
    help="comma list of tree, chain; a kernel that cannot run a point (FlashMLA: chain mask, page 64) "
    "is left out of it, and the table says so",
)
@click.option("--q-len", type=int, default=9, show_default=True)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/bench", show_default=True)
@click.option(
    "--from",
    "from_json",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="re-read a saved bench.json instead (no GPU; the other options are not used)",
)
@click.option(
    "--method",
    type=click.Choice(["rotated", "flush"]),
    default="rotated",
    show_default=True,
    help="rotated: CUDA-graph replays over rotated input sets, no L2 flush (as a model's layers read "
    "their own KV caches); flush: triton's do_bench, L2 flushed before each call",
)
def bench_cmd(kernel_list, ctx_list, page_sizes, heads_list, mask_list, q_len, out_dir, from_json, method) -> None:
    """Time every kernel x ctx x page size x heads on this GPU against the floor (needs a GPU), and fit
    each kernel's time to fixed + KV bytes / rate over the context lengths."""

    from reports.text import render_bench  # lazy
    from roofline.benching import read_bench, run_bench  # lazy: pandas

    try:
        if from_json:
            bench = read_bench(Path(from_json))
        else:
            need_kernels("bench")
            names = [k.strip() if k.strip() == "read" else kernel_name(k) for k in kernel_list.split(",")]
            masks = tuple(m.strip() for m in mask_list.split(","))
            if bad := [m for m in masks if m not in ("tree", "chain")]:
                raise click.BadParameter(f"{', '.join(bad)}: a mask is tree or chain", param_hint="--mask")
            bench = run_bench(
                names,
                _int_list(ctx_list, parse_ctx_len),
                _int_list(page_sizes),
                _int_list(heads_list),
                masks,
                q_len,
                method,
                progress,
            )
    except RooflineError as exc:
        raise _fail(exc) from None
    click.echo(render_bench(bench.table, bench.meta, bench.fits))
    if not from_json:
        files = bench.save(Path(out_dir))
        progress(f"wrote {' and '.join(str(f) for f in files)}")


@main.command("model")
@click.option("--kernel", default=None, help="add this kernel's own model (bytes it moves, grid, time)")
@workload_options
@click.option("--layers", type=int, default=1, show_default=True)
@click.option("--gpu", "gpu_name", default="h200", show_default=True, help="short name; see `roofline gpus`")
@click.option(
    "--compile",
    "compile_",
    is_flag=True,
    help="compile the kernel for the GPU's architecture (needs triton) for blocks per SM",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def model_cmd(kernel, layers, gpu_name, compile_, fmt, **wkw) -> None:
    """The floor the hardware allows for a verify workload, and a kernel's own model (no GPU needed)."""
    workload = make_workload(**wkw)
    gpu = _gpu(gpu_name)
    if compile_ and kernel is not None:
        need_kernels("model --compile")
    try:
        m = modeling.model(workload, gpu, layers, kernel_name(kernel) if kernel else None, compile_)
    except RooflineError as exc:
        raise _fail(exc) from None
    if fmt == "json":
        click.echo(json.dumps(m.to_dict(), indent=2))
        return
    for note in m.notes:
        progress(f"note: {note}")
    click.echo(render_model(m))


@main.command("compile")
@click.option("--kernel", required=True, help="a registered Triton kernel (roofline kernels)")
@click.option("--arch", required=True, type=click.Choice(["sm_90", "sm_100", "sm_120"]))
@workload_options
@click.option("--gpu", "gpu_name", default=None, help="size the grid for this GPU (default: the arch's reference GPU)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def compile_cmd(kernel, arch, gpu_name, fmt, **wkw) -> None:
    """Compile a kernel's launches for an architecture without a GPU: registers, spills, shared memory, MMA, fit."""
    from reports.text import render_resources  # lazy

    if importlib.util.find_spec("triton") is None:
        raise click.ClickException("roofline compile needs triton: pip install 'roofline[kernels]'")

    name = kernel_name(kernel)
    try:
        r = kernel_resources(name, make_workload(**wkw), arch, _gpu(gpu_name) if gpu_name else None)
    except (KeyError, ValueError) as exc:
        raise click.UsageError(str(exc).strip("'\"")) from None
    except CompileError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(r, indent=2) if fmt == "json" else render_resources(r))


@main.command("calibrate")
@click.option(
    "--save/--no-save",
    default=True,
    show_default=True,
    help="write $XDG_CONFIG_HOME/roofline/measured/<gpu>.json (~/.config/...), this GPU's ceilings from then on",
)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def calibrate_cmd(save, fmt) -> None:
    """Measure this GPU's ceilings: DRAM copy and read, L2-resident read, bf16 matmul, and the read at five
    sizes fitted to fixed + bytes / rate (the at-size floor) (needs a GPU)."""
    need_kernels("calibrate")

    import torch  # lazy

    from profiler.bench import measure_ceilings  # lazy
    from profiler.read_sizes import read_times  # lazy
    from roofline.scaling import read_fit  # lazy

    if not torch.cuda.is_available():
        raise click.ClickException("roofline calibrate needs a CUDA GPU (torch sees none)")
    progress("measuring: 4 GiB copy and read, 16 MiB L2-resident re-read, 8192^3 bf16 matmul")
    c = measure_ceilings()
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    data = {
        **c.__dict__,
        "source": f"roofline calibrate on this {c.device}, {stamp} (do_bench medians; "
        "copy counts bytes read + written; L2 read timed back to back without a flush)",
    }
    progress("measuring: stream_read at 75 MB to 1.2 GB for the at-size floor (time = fixed + bytes / rate)")
    fit = read_fit(
        read_times(), f"stream_read at 5 sizes on this {c.device}, {stamp} (CUDA-graph replays, do_bench medians)"
    )
    data["read_fit"] = dataclasses.asdict(fit)
    gpu = match_gpu(c.device)
    if save:
        if gpu is None:
            raise click.ClickException(f"{c.device!r} is not in the catalogue: nothing to save it under")
        try:
            path = save_measured(gpu.short_name, data)
        except OSError as exc:
            raise click.ClickException(f"cannot save the measured ceilings: {exc}") from None
        progress(f"saved {path} (`roofline gpus` reads it before the packaged numbers)")
    if fmt == "json":
        click.echo(json.dumps(data, indent=2))
    else:
        click.echo(
            f"{c.device}: read {c.read_gbps:.0f} GB/s, copy {c.copy_gbps:.0f} GB/s (read+write), "
            f"L2 read {c.l2_read_gbps:.0f} GB/s, bf16 matmul {c.matmul_tflops:.0f} TFLOP/s"
        )
        click.echo(
            f"read at size: {fit.fixed_us:.1f} us fixed + bytes at {fit.gbps:.0f} GB/s "
            f"({fit.min_bytes / 1e6:.0f} MB to {fit.max_bytes / 1e9:.1f} GB)"
        )


@main.command("validate")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default="runs/validate", show_default=True)
@click.option("--ncu", "ncu_path", default=None)
@click.option("--probe", "only", multiple=True, help="run only these probes")
@click.option("--preset", default=None, help="ncu metric preset (default: profile's)")
def validate_cmd(out_dir, ncu_path, only, preset) -> None:
    """Profile the probe kernels (known bounds) and check the verdicts against them (needs a GPU)."""
    from roofline.analysis import summarize  # lazy

    names = list(only) or list(EXPECTED)
    unknown = set(names) - set(EXPECTED)
    if unknown:
        raise click.UsageError(f"unknown probe(s) {sorted(unknown)}; known: {', '.join(EXPECTED)}")
    failures = 0
    try:
        resolved, chip, note = preset_for_device(preset or DEFAULT_PRESET, device_name=local_device_name())
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    for name in names:
        progress(f"profiling probe {name} (preset {resolved.name}, {chip})" + (f": {note}" if note else ""))
        try:
            run = run_ncu(
                [sys.executable, "-m", "profiler.probes", name],
                Path(out_dir),
                name=name,
                ncu=ncu_path,
                progress=progress,
                preset=resolved,
            )
        except ProfilerError as exc:
            raise click.ClickException(str(exc)) from None
        progress(f"{name}: {max(run.passes, default=0)} replay passes per launch")
        k = summarize(tidy_launches(read_ncu_report(run.report)), preset=resolved.name).kernels[0]
        ok, msg = check_probe(name, k.bound, k.roof, k.cause)
        failures += not ok
        click.echo(("ok    " if ok else "WRONG ") + msg)
    sys.exit(1 if failures else 0)


@main.command("gpus")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def gpus_cmd(fmt) -> None:
    """The hardware table: each GPU's arch, ncu chip, datasheet ceilings (dense tensor rates, boost clocks) and measured ones."""

    try:
        gpus = load_catalogue()
    except MeasuredFileError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps([dataclasses.asdict(g) for g in gpus], indent=2))
        return
    rows = [
        [
            "short name",
            "name",
            "arch",
            "ncu chip",
            "SMs",
            "boost MHz",
            "DRAM GB/s",
            "L2 MB",
            "FP32 TF",
            "BF16 TF",
            "FP8 TF",
            "measured",
        ]
    ]
    for g in gpus:
        m = g.measured
        meas = f"read {m['read_gbps']:.0f} GB/s, bf16 {m['matmul_tflops']:.0f} TF" if m else "-"
        rows.append(
            [
                g.short_name,
                g.name,
                g.arch,
                g.chip or "-",
                str(g.sm_count),
                str(g.boost_clock_mhz or "-"),
                f"{g.dram_gbps:.0f}",
                f"{g.l2_mb:.0f}",
                f"{g.fp32_tflops:g}",
                f"{g.bf16_dense_tflops:g}",
                f"{g.fp8_dense_tflops:g}" if g.fp8_dense_tflops else "-",
                meas,
            ]
        )
    click.echo(align(rows))
    click.echo("\ntensor rates dense (no sparsity), clocks boost; sources: roofline gpus --format json")
    for g in gpus:
        if g.measured_from:
            mine = Path(g.measured_from).parent == user_measured_dir()
            click.echo(
                f"{g.short_name} measured: {g.measured_from} "
                + ("(yours, from roofline calibrate --save)" if mine else "(packaged defaults)")
            )
    click.echo(f"roofline calibrate --save writes to {user_measured_dir()}, read before the packaged numbers")


# Commands that live in modules of their own.

main.add_command(compare_cmd)
main.add_command(report_cmd)
main.add_command(sweep_cmd)
main.add_command(metrics_cmd)
main.add_command(doctor_cmd)
