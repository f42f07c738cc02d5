"""What `roofline validate` checks: each probe kernel (kernels/probes.py) is built to be bound one way, so
its verdict must start with that bound and roof (or, for latency, that cause). The profiling that feeds
these checks is roofline/pipelines/probes.py."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Expected:
    """What a probe must be called: its bound, and the roof (or, for latency, the cause) it starts with."""

    bound: str
    starts: str


EXPECTED = {
    "stream_copy": Expected("bandwidth", "DRAM"),
    "matmul": Expected("compute", "tensor pipe"),
    "pointer_chase": Expected("latency", "waiting on global memory loads"),
    "small_grid": Expected("latency", "small grid"),
    "l2_reread": Expected("bandwidth", "L2"),
}


@dataclass(frozen=True)
class ProbeCheck:
    probe: str
    expected_bound: str
    expected: str  # the roof (or, for latency, the cause) the verdict must start with
    bound: str
    got: str | None
    run: Path | None = None  # the probe's run directory

    @property
    def ok(self) -> bool:
        return self.bound == self.expected_bound and bool(self.got) and self.got.startswith(self.expected)

    @property
    def message(self) -> str:
        return f"{self.probe}: expected {self.expected_bound} ({self.expected}), got {self.bound} ({self.got})"


@dataclass(frozen=True)
class Validation:
    checks: tuple[ProbeCheck, ...]
    preset: str
    chip: str

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)


def check_probe(name: str, bound: str, roof: str | None, cause: str | None) -> ProbeCheck:
    """One probe's verdict against what its construction guarantees."""
    want = EXPECTED[name]
    return ProbeCheck(name, want.bound, want.starts, bound, roof if want.bound != "latency" else cause)
