"""`roofline gpus` and `calibrate`: the GPU catalogue, and this GPU's ceilings measured."""

from __future__ import annotations

import dataclasses
import json

import click

from kernels.errors import RooflineError
from reports.hardware import render_calibration, render_gpus
from roofline.catalogue.gpus import MeasuredFileError, load_catalogue, user_measured_dir
from roofline.cli.common import fail, format_option, need_kernels, progress
from roofline.pipelines.calibrating import calibrate


@click.command("gpus")
@format_option()
def gpus_cmd(fmt) -> None:
    """The GPU catalogue: each GPU's arch, ncu chip, datasheet ceilings (dense tensor rates, boost clocks) and
    measured ones."""
    try:
        gpus = load_catalogue()
    except MeasuredFileError as exc:  # a measured file of the user's that cannot be read: exit 1, as everywhere
        raise click.ClickException(str(exc)) from None
    if fmt == "json":
        click.echo(json.dumps([dataclasses.asdict(g) for g in gpus], indent=2))
    else:
        click.echo(render_gpus(gpus, user_measured_dir()))


@click.command("calibrate")
@click.option(
    "--save/--no-save",
    default=True,
    show_default=True,
    help="write $XDG_CONFIG_HOME/roofline/measured/<gpu>.json (~/.config/...), this GPU's ceilings from then on",
)
@format_option()
def calibrate_cmd(save, fmt) -> None:
    """Measure this GPU's ceilings: DRAM copy and read, L2-resident read, bf16 matmul, and the read at five
    sizes fitted to fixed + bytes / rate (the at-size floor) (needs a GPU)."""
    need_kernels("calibrate")
    try:
        c = calibrate(save, progress)
    except (RooflineError, ValueError) as exc:
        raise fail(exc) from None
    click.echo(json.dumps(c.to_dict(), indent=2) if fmt == "json" else render_calibration(c))
