"""The `roofline` command: the one place that wires kernels, profiler, roofline and reports."""

from __future__ import annotations

import json
import os
import sys
import time
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path

import click

from kernels.registry import KERNELS, UnknownKernel, get_kernel
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from profiler.errors import ProfilerError
from roofline.gpus import UnknownGpu, get_gpu

SAMPLE_RUN = "data/samples/h200-triton_mla-128k"


def sample_run() -> Path:
    """The bundled H200 capture that `roofline analyze` reads when given no path."""
    return Path(str(resources.files("roofline").joinpath(SAMPLE_RUN)))


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
        click.option("--ctx", "ctx_len", type=CtxLen(), default="128k", show_default=True,
                     help="prefix tokens already in the cache (128k, 131072, 1m)"),
        click.option("--batch", type=int, default=1, show_default=True),
        click.option("--heads", type=int, default=8, show_default=True, help="attention heads per GPU"),
        click.option("--q-len", type=int, default=9, show_default=True, help="draft tokens per request"),
        click.option("--page-size", type=int, default=1, show_default=True),
        click.option("--mask", "tree_mask", type=click.Choice(["tree", "chain"]), default="tree",
                     show_default=True),
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


def progress(msg: str) -> None:
    click.echo(msg, err=True)


@click.group()
@click.version_option(package_name="roofline")
def main() -> None:
    """How far an attention kernel is from what the GPU allows, and why."""


@main.command("kernels")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def kernels_cmd(fmt: str) -> None:
    """List the kernels in the registry."""
    if fmt == "json":
        click.echo(json.dumps([{"name": k.name, "description": k.description} for k in KERNELS.values()], indent=2))
    else:
        for k in KERNELS.values():
            click.echo(f"{k.name:12s} {k.description}")


@main.command("check")
@click.option("--kernel", default="triton_mla", show_default=True)
@workload_options
@click.option("--device", type=click.Choice(["cpu", "cuda"]), default="cuda", show_default=True,
              help="cpu runs Triton's interpreter (TRITON_INTERPRET=1)")
@click.option("--dtype", type=click.Choice(["bf16", "fp16", "fp32"]), default=None,
              help="default: bf16 on cuda, fp16 on cpu (the interpreter gets bf16 dots wrong)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def check_cmd(kernel, device, dtype, fmt, **wkw) -> None:
    """Run a kernel and torch_ref on the same random inputs; exit 1 when they disagree."""
    name = kernel_name(kernel)
    workload = make_workload(**wkw)
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"  # before the kernel module imports triton
        dtype = dtype or "fp16"
        if fmt == "text":
            progress("note: on cpu the kernel runs in Triton's interpreter with fp16 inputs "
                     "(its bf16 dots are wrong, triton-lang/triton#11584); bf16 is checked on the GPU")
    from kernels.check import check_kernel
    try:
        result = check_kernel(name, workload, device=device, dtype=dtype)
    except (ValueError, RuntimeError) as exc:
        raise click.ClickException(f"{name}: {exc}") from None
    if fmt == "json":
        click.echo(json.dumps(result.__dict__, indent=2))
    else:
        click.echo(f"{result.kernel} on {result.device} ({result.dtype}, {result.workload})\n"
                   f"  max_abs_err {result.max_abs_err:.3e}  rel_err {result.rel_err:.3e} "
                   f"(tolerance {result.rel_tol:.0e})  unwritten {result.unwritten}  "
                   f"{'ok' if result.ok else 'FAILED'}")
    sys.exit(0 if result.ok else 1)


@main.command("profile")
@click.option("--kernel", default="triton_mla", show_default=True)
@workload_options
@click.option("--iters", type=int, default=3, show_default=True, help="launches inside the profiled range")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=None,
              help="run directory (default runs/<kernel>-<ctx>-<time>)")
@click.option("--ncu", "ncu_path", default=None, help="path to ncu (else $NCU, PATH, usual folders)")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def profile_cmd(kernel, iters, out_dir, ncu_path, fmt, **wkw) -> None:
    """Run a kernel under Nsight Compute, parse the report, print verdicts (needs a GPU)."""
    from profiler.ncu import run_ncu
    from profiler.rundir import RunDir

    started = time.time()
    name = kernel_name(kernel)
    workload = make_workload(**wkw)
    if iters < 1:
        raise click.UsageError("--iters must be at least 1")
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    run = RunDir.create(out_dir or Path("runs") / f"{name}-{workload.ctx_len}-{stamp}")
    run.write_spec({"kernel": name, "workload": json.loads(workload.to_json()), "iterations": iters,
                    "created": stamp, "command": sys.argv})
    app = [sys.executable, "-m", "profiler.harness", "--spec", str(run.path / "spec.json"),
           "--kernel", name, "--iters", str(iters), "--info", str(run.path / "harness.json")]
    progress(f"[1/3] profiling {name} ({workload.describe()}) under ncu -> {run.path}")
    try:
        ncu_run = run_ncu(app, run.path, ncu=ncu_path, progress=progress)
    except ProfilerError as exc:
        raise click.ClickException(str(exc)) from None
    run.log_command(ncu_run.command)
    progress(f"[2/3] ncu done: {len(ncu_run.passes)} launches profiled, "
             f"{max(ncu_run.passes, default=0)} replay passes each")
    analysis = _analyze_run(run.path, fmt)
    analysis["profile"] = {"passes": ncu_run.passes, "wall_s": round(time.time() - started, 1)}
    (run.path / "analysis.json").write_text(json.dumps(analysis, indent=2) + "\n")
    progress(f"[3/3] wrote {run.path} in {time.time() - started:.1f} s")


def _load(path: Path):
    """(launch table, workload or None, iterations or None) from a run directory or a bare report."""
    from profiler.ncu_reader import read_ncu_report
    from profiler.ncu_tidy import tidy_launches
    from profiler.rundir import RunDir

    if path.is_dir():
        run = RunDir(path)
        spec = run.read_spec()
        report = run.ncu_report()
    elif path.suffix in (".ncu-rep", ".ncu-repz") or path.exists():
        spec, report = None, path
    else:
        raise click.ClickException(f"{path}: no such run directory or report")
    launches = tidy_launches(read_ncu_report(report))
    workload = VerifyWorkload.from_dict(spec["workload"]) if spec and "workload" in spec else None
    return launches, workload, (spec or {}).get("iterations")


def _analyze_run(path: Path, fmt: str) -> dict:
    from reports.text import render_text
    from roofline.analysis import summarize

    try:
        launches, workload, iterations = _load(path)
    except (ProfilerError, WorkloadError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None
    if path.is_dir():
        launches.to_csv(path / "launches.csv", index=False)
    analysis = summarize(launches, workload, iterations)
    if fmt == "json":
        click.echo(json.dumps(analysis.to_dict(), indent=2))
    else:
        click.echo(render_text(analysis))
    return analysis.to_dict()


@main.command("analyze")
@click.argument("path", type=click.Path(), required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def analyze_cmd(path, fmt) -> None:
    """Re-read a run directory or a bare .ncu-rep (no GPU needed). Default: the bundled H200 sample."""
    target = Path(path) if path else sample_run()
    if not path and fmt == "text":
        progress(f"no path given: analyzing the bundled H200 capture {target}")
    if not target.exists():
        raise click.ClickException(f"{target}: no such run directory or report")
    _analyze_run(target, fmt)


@main.command("model")
@click.option("--kernel", default=None, help="(reserved) a kernel's own model")
@workload_options
@click.option("--layers", type=int, default=1, show_default=True)
@click.option("--gpu", "gpu_name", default="h200", show_default=True)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text")
def model_cmd(kernel, layers, gpu_name, fmt, **wkw) -> None:
    """The floor the hardware allows for a verify workload (no GPU needed)."""
    import dataclasses

    from roofline.floor import workload_floor

    workload = make_workload(**wkw)
    try:
        gpu = get_gpu(gpu_name)
    except UnknownGpu as exc:
        raise click.UsageError(str(exc)) from None
    if layers < 1:
        raise click.UsageError("--layers must be at least 1")
    floor = workload_floor(workload, gpu, layers)
    if fmt == "json":
        click.echo(json.dumps(dataclasses.asdict(floor), indent=2))
        return
    click.echo(f"{gpu.name}, {workload.describe()}, {layers} layer(s)\n"
               f"  KV bytes     {floor.kv_bytes / 1e9:.3f} GB\n"
               f"  FLOPs        {floor.flops / 1e12:.3f} TFLOP  (intensity {floor.arithmetic_intensity:.0f} FLOP/B)\n"
               f"  memory time  {floor.memory_ms:.3f} ms at {floor.bandwidth_gbps:.0f} GB/s ({floor.bandwidth_kind})\n"
               f"  compute time {floor.compute_ms:.3f} ms at {floor.peak_tflops:.0f} TFLOP/s ({floor.peak_kind})\n"
               f"  floor        {floor.floor_ms:.3f} ms, {floor.bound}-bound")


if __name__ == "__main__":
    main()
