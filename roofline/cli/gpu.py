"""`roofline gpus` and `calibrate`: the GPU catalogue, and this GPU's ceilings measured."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from kernels.errors import RooflineError
from reports.hardware import render_calibration, render_gpus
from roofline.catalogue.gpus import MeasuredFileError, load_catalogue, user_measured_dir
from roofline.cli.common import echo_json, fail, force_option, format_option, need_kernels, out_option, progress
from roofline.pipelines.calibrating import calibrate


@click.command("gpus")
@format_option()
def gpus_cmd(fmt) -> None:
    """The GPU catalogue: each GPU's arch, ncu chip, datasheet ceilings (dense tensor rates, boost clocks) and
    measured ones."""
    try:
        gpus = load_catalogue()
    except MeasuredFileError as exc:  # a measured file of the user's that cannot be read: exit 2, as everywhere
        raise fail(exc) from None
    if fmt == "json":
        echo_json([dataclasses.asdict(g) for g in gpus])
    else:
        click.echo(render_gpus(gpus, user_measured_dir()))


@click.command("calibrate")
@click.option(
    "--save/--no-save",
    default=True,
    show_default=True,
    help="write $XDG_CONFIG_HOME/roofline/measured/<gpu>.json (~/.config/...), this GPU's ceilings from then on",
)
@out_option("out", "save the measured ceilings to this file instead (e.g. to commit them); refused if it exists")
@force_option
@format_option()
def calibrate_cmd(save, out, force, fmt) -> None:
    """Measure this GPU's ceilings: DRAM copy and read, L2-resident read, bf16 matmul, and the read at five
    sizes fitted to fixed + bytes / rate (the at-size floor) (needs a GPU). The saved file is replaced only
    if no other command changed it while this one measured, unless --force."""
    need_kernels("calibrate")
    try:
        c = calibrate(save or out is not None, progress, out=Path(out) if out else None, force=force)
    except (RooflineError, ValueError) as exc:
        raise fail(exc) from None
    if fmt == "json":
        echo_json(c.to_dict())
    else:
        click.echo(render_calibration(c))
