"""The metric preset for a device: its ncu chip from the hardware table (kernels.hardware.chip_of),
the preset resolved with that chip's metric names (profiler.metrics)."""

from __future__ import annotations

from kernels.hardware import HARDWARE_FILE, NoLocalGpu, chip_of, local_gpu
from profiler.metrics import BASE_CHIP, Preset, check_chip, resolve


def local_device_name() -> str | None:
    """The local GPU's name (kernels.hardware.local_gpu), None when there is none."""
    try:
        return local_gpu().name
    except NoLocalGpu:
        return None


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
                f"device {device_name!r} has no ncu chip in {HARDWARE_FILE}: using {BASE_CHIP} metric names"
                if device_name
                else f"no GPU name from nvidia-smi: using {BASE_CHIP} metric names"
            )
            chip = BASE_CHIP
    check_chip(chip)
    return resolve(preset, chip), chip, note
