"""What `roofline calibrate` measured on a GPU: its ceilings and its read fit (a `Calibration`), as the
measured file holds them (roofline/catalogue/gpus.py reads it back); the measuring is
roofline/pipelines/calibrating.py."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from kernels.errors import RooflineError
from roofline.catalogue.gpus import ReadFit


class CalibrationError(RooflineError):
    """No GPU to measure, or nowhere to save what was measured."""


@dataclass(frozen=True)
class Calibration:
    device: str
    read_gbps: float
    copy_gbps: float  # bytes read + written
    l2_read_gbps: float | None
    matmul_tflops: float
    read_fit: ReadFit
    source: str
    saved_to: Path | None = None  # the user's measured file, when saved

    def to_dict(self) -> dict:
        """What the measured file holds (roofline/catalogue/gpus.py reads it back)."""
        data = dataclasses.asdict(self)
        del data["saved_to"]
        return data
