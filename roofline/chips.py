"""Which Nsight Compute chip a device is (roofline/data/chips.json), for per-chip metric presets."""

from __future__ import annotations

import json
import shutil
import subprocess
from importlib import resources

from profiler.metrics import BASE_CHIP, Preset, check_chip, resolve


def chip_table() -> dict[str, list[str]]:
    """chip -> device-name patterns."""
    data = json.loads(resources.files("roofline").joinpath("data/chips.json").read_text())
    return {chip: list(entry["match"]) for chip, entry in data["chips"].items()}


def chip_of(device_name: str | None) -> str | None:
    """The chip whose longest pattern occurs in `device_name` ('NVIDIA H200' -> 'gh100'), else None."""
    if not device_name:
        return None
    hits = [(len(p), chip) for chip, pats in chip_table().items() for p in pats if p.lower() in device_name.lower()]
    return max(hits)[1] if hits else None


def local_device_name() -> str | None:
    """The first visible GPU's name from nvidia-smi, None when there is none or it fails."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return None
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True, timeout=30
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    return lines[0] if lines else None


def preset_for_device(
    preset: str, chip: str | None = None, device_name: str | None = None
) -> tuple[Preset, str, str | None]:
    """(resolved preset, chip, note): `chip` if given, else the device's chip; an unknown device gets
    the gh100 names and a note saying so (absent metrics come back n/a, never as wrong numbers)."""
    note = None
    if chip is None:
        chip = chip_of(device_name)
        if chip is None:
            note = (
                f"device {device_name!r} is not in roofline/data/chips.json: using {BASE_CHIP} metric names"
                if device_name
                else f"no GPU name from nvidia-smi: using {BASE_CHIP} metric names"
            )
            chip = BASE_CHIP
    check_chip(chip)
    return resolve(preset, chip), chip, note
