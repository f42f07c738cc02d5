"""The local GPU's name, for resolving a metric preset (profiler.metrics.resolve_preset) on its chip."""

from __future__ import annotations

from kernels.hardware import NoLocalGpu, local_gpu


def local_device_name() -> str | None:
    """The local GPU's name (kernels.hardware.local_gpu), None when there is none."""
    try:
        return local_gpu().name
    except NoLocalGpu:
        return None
