"""`roofline metrics`: the metric list a preset resolves to on a chip."""

from __future__ import annotations

import click

from profiler.metrics import BASE_CHIP, CHIPS, DEFAULT_PRESET, PRESETS, UnknownChip, UnknownPreset, resolve_preset
from roofline.cli.common import chip_option, echo_json, fail, format_option, renamed


def resolved_list(chip: str, preset: str) -> dict:
    """{"chip", "preset", "metrics", "sections", "sets", "passes_h200"}; one-line errors for unknown names."""
    r = resolve_preset(preset, chip)
    return {
        "chip": r.chip,
        "preset": r.name,
        "metrics": list(r.metrics),
        "sections": list(r.ncu.sections),
        "sets": list(r.ncu.sets),
        "passes_h200": r.ncu.passes_h200,
    }


@click.command("metrics")
@click.option(
    "--gpu",
    "chip",
    default=BASE_CHIP,
    show_default=True,
    callback=chip_option,
    help=f"a GPU model (h200, rtx-pro-6000) or an ncu chip: {', '.join(CHIPS)}",
)
@renamed("--chip", "--gpu", "chip", callback=chip_option)
@click.option("--preset", default=DEFAULT_PRESET, show_default=True, help=f"one of {', '.join(PRESETS)}")
@format_option()
def metrics_cmd(chip: str, preset: str, fmt: str) -> None:
    """The ncu metrics a preset collects on a chip (names checked against that chip's list)."""
    try:
        data = resolved_list(chip.lower(), preset)
    except (UnknownChip, UnknownPreset) as exc:
        raise fail(exc) from None
    if fmt == "json":
        echo_json(data)
        return
    cost = f", {data['passes_h200']} replay passes per launch on the H200" if data["passes_h200"] else ""
    click.echo(f"preset {data['preset']} on {data['chip']}{cost}: {PRESETS[data['preset']].description}")
    for s in data["sets"]:
        click.echo(f"--set {s}")
    for s in data["sections"]:
        click.echo(f"--section {s}")
    for m in data["metrics"]:
        click.echo(m)
