"""`roofline kernels`, `check` and `compile`: the registry, a kernel against its reference, its launches
compiled for an architecture without a GPU."""

from __future__ import annotations

import importlib.util
import os
import sys

import click

from kernels.device import DeviceError, interpreter_max_ctx, interpreter_too_slow, pick_device, pick_dtype
from kernels.registry import KERNELS, get_kernel
from kernels.xcompile import CompileError
from reports.resources import render_resources
from roofline.analysis.resources import kernel_resources
from roofline.cli.common import (
    BadInputExit,
    echo_json,
    format_option,
    gpu_by_name,
    gpu_option,
    kernel_name,
    kernel_workload,
    make_workload,
    need_kernels,
    progress,
    workload_options,
)


@click.command("kernels")
@format_option()
def kernels_cmd(fmt: str) -> None:
    """List the kernels in the registry."""
    missing = {k.name: k.unavailable() for k in KERNELS.values()}
    if fmt == "json":
        echo_json(
            [
                {
                    "name": k.name,
                    "description": k.description,
                    "available": missing[k.name] is None,
                    **({"unavailable": missing[k.name]} if missing[k.name] else {}),
                }
                for k in KERNELS.values()
            ]
        )
    else:
        for k in KERNELS.values():
            click.echo(
                f"{k.name:12s} {k.description}"
                + (f"\n{'':12s} unavailable: {missing[k.name]}" if missing[k.name] else "")
            )


@click.command("check")
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
@format_option()
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
    from kernels.check import check_kernel  # lazy: after TRITON_INTERPRET is set

    try:
        result = check_kernel(name, workload, device=device, dtype=dtype)
    except (ValueError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        echo_json(result.__dict__)  # a NaN error (a kernel writing NaN) is null, never a bare NaN
    else:
        click.echo(
            f"{result.kernel} on {result.device} ({result.dtype}, {result.workload})\n"
            f"  max_abs_err {result.max_abs_err:.3e}  rel_err {result.rel_err:.3e} "
            f"(tolerance {result.rel_tol:.0e})  unwritten {result.unwritten}  "
            f"{'ok' if result.ok else 'FAILED'}"
        )
    sys.exit(0 if result.ok else 1)


@click.command("compile")
@click.option("--kernel", required=True, help="a registered Triton kernel (roofline kernels)")
@click.option("--arch", required=True, type=click.Choice(["sm_90", "sm_100", "sm_120"]))
@workload_options
@click.option(
    "--gpu",
    "gpu_name",
    default=None,
    callback=gpu_option,
    help="size the grid for this GPU model (default: the arch's reference GPU)",
)
@format_option()
def compile_cmd(kernel, arch, gpu_name, fmt, **wkw) -> None:
    """Compile a kernel's launches for an architecture without a GPU: registers, spills, shared memory, MMA, fit."""
    if importlib.util.find_spec("triton") is None:
        raise BadInputExit("roofline compile needs triton (no GPU): pip install 'roofline[kernels]'")

    name = kernel_name(kernel)
    try:
        r = kernel_resources(name, make_workload(**wkw), arch, gpu_by_name(gpu_name) if gpu_name else None)
    except (KeyError, ValueError) as exc:
        raise click.UsageError(str(exc).strip("'\"")) from None
    except CompileError as exc:
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        echo_json(r)
    else:
        click.echo(render_resources(r))
