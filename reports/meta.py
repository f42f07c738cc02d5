"""What a report says besides the analysis: where it came from, how to reproduce it, the roofs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

KINDS = {"datasheet": "datasheet", "report": "report's own", "measured": "measured"}
# PC-sampled warp stalls: samples of warps stalled for a reason over samples of warps issuing
STALL_UNIT = "warps stalled per issued instruction"
STALL_UNIT_SHORT = "warps/issue"
LAUNCH_BOUND_PCT = 50  # the GPU ran kernels less than this share of the profiled range: it waits for the host  # in table headers, defined beside each table that uses it


@dataclass(frozen=True)
class Roof:
    """One roof for the chart: a memory level (GB/s) or a compute pipe (TFLOP/s), and its kind."""

    level: str  # "DRAM", "L2", "L1" (GB/s) or "tensor", "fp32" (TFLOP/s)
    value: float
    kind: str  # "datasheet", "report" (the report's own peak) or "measured"
    source: str = ""

    @property
    def is_memory(self) -> bool:
        return self.level in ("DRAM", "L2", "L1")

    @property
    def unit(self) -> str:
        return "GB/s" if self.is_memory else "TFLOP/s"


@dataclass(frozen=True)
class ReportMeta:
    """Everything a report shows that is not in `Analysis.to_dict()`. All optional but `source`."""

    source: str  # the run directory or report, as the user named it
    source_kind: str = "report"  # "run directory" or "report"
    kernel: str | None = None  # the registry kernel a run profiled
    iterations: int | None = None  # launches per capture, from the run's spec
    commands: list[str] = field(default_factory=list)  # how the evidence was captured, in order
    report_command: str | None = None  # how to regenerate this report
    versions: dict[str, str] = field(default_factory=dict)
    ceilings: list[dict] = field(default_factory=list)  # the catalogue's: value, unit, kind, source
    roofs: list[Roof] = field(default_factory=list)  # catalogue roofs for the chart (datasheet, measured)
    why_no_floor: str | None = None  # said in place of the floor section when there is none
    preset: str | None = None  # the ncu metric preset the run was captured with, when known


def nsys_version(versions: dict | None, summary: dict | None = None) -> str | None:
    """The one nsys version a run shows: that of the nsys that captured it (`nsys --version`, in the
    manifest), else the stamp in its sqlite export's META_DATA_EXPORT. The two can differ for one
    binary (nsys 2025.3.1.0 stamps its exports 2025.3.2.0), so a run never shows the stamp."""
    text = str((versions or {}).get("nsys") or "")
    found = re.search(r"\d+(\.\d+)+", text)
    if found:
        return found.group(0)
    return (summary or {}).get("nsys_version")
