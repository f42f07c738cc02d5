"""What one profile is asked to do: the kernel, the workload and how to capture it, declared once.

`roofline profile` builds a `ProfileRequest` from its options (roofline/cli/common.py `request_options`),
`roofline.profile` builds one from its keywords (`ProfileRequest.of`), a sweep builds one per point from
its own; roofline/pipelines/profiling.py runs it. Every default of a profile lives here and nowhere else.
The workload itself reaches the child processes through the run's spec.json, never through their argv.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from kernels.batches import make_workload as batch_workload
from kernels.spec import VerifyWorkload

TOOLS = ("ncu", "nsys", "both")
DEFAULT_KERNEL = "triton_mla"
DEFAULT_ITERATIONS = 3  # launches inside the profiled range
DEFAULT_TIMEOUT_S = 900.0  # the whole capture; a 128k run under both tools fits well inside it
DEFAULT_TIMING_SAMPLES = 30  # the timing pass after the captures (what `compare` tests and gates on)
DEFAULT_TIMING_ROUNDS = 4  # the timing pass's child processes (compare's between-run interval needs 3 a side)


def make_workload(
    ctx: int | str | None = None, lens: str | None = None, batch: int | None = None, seed: int = 0, **fields
) -> VerifyWorkload:
    """A VerifyWorkload from user-facing arguments: `ctx` takes 131072, "128k" (the default), "1m"; `lens` a ragged batch
    (`"4k,128k,2k"`, `"uniform:1k-32k"` with `batch` and `seed`, `"mix:1x128k,15x2k"`, `"file:PATH"`:
    kernels/batches.py), which replaces `ctx`."""
    return batch_workload(ctx, lens=lens, batch=batch, seed=seed, **fields)


@dataclass(frozen=True)
class ProfileRequest:
    """One profile: `kernel` on `workload`, captured by `tool` ("ncu", "nsys", "both"; None: both when both are
    found, else the one found) with the ncu metric `preset` resolved for `chip`, `iterations` launches in the
    profiled range, the whole capture bounded by `timeout` seconds; then `timing_samples` timings of the step
    over `timing_rounds` child processes with no profiler attached (0 samples: none), with `why` the
    kernel's removal experiment, and with `in_kernel` the step with its in-kernel stamps on. `ncu`/`nsys`: the tools' paths (None: found as `roofline doctor` finds them).
    ValueError for a setting out of range."""

    kernel: str = DEFAULT_KERNEL
    workload: VerifyWorkload = field(default_factory=VerifyWorkload)
    iterations: int = DEFAULT_ITERATIONS
    tool: str | None = None
    preset: str | None = None
    chip: str | None = None
    source: bool = False
    timeout: float | None = DEFAULT_TIMEOUT_S
    timing_samples: int = DEFAULT_TIMING_SAMPLES
    timing_rounds: int = DEFAULT_TIMING_ROUNDS
    why: bool = False
    in_kernel: bool = False
    ncu: str | None = None
    nsys: str | None = None

    def __post_init__(self) -> None:
        if self.iterations < 1:
            raise ValueError("iterations must be at least 1")
        if self.timeout is not None and self.timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if self.timing_samples < 0:
            raise ValueError("timing_samples must be 0 (no timing pass) or more")
        if self.timing_rounds < 1:
            raise ValueError("timing_rounds must be at least 1")
        if self.tool is not None and self.tool not in TOOLS:
            raise ValueError(f"tool must be one of {', '.join(TOOLS)}, got {self.tool!r}")

    @classmethod
    def of(cls, kernel: str, workload: VerifyWorkload | None = None, **given) -> ProfileRequest:
        """The request `roofline.profile`'s keywords describe: the settings by name, and without `workload`
        the rest make one (make_workload: ctx="128k", heads=8, lens="mix:1x128k,15x2k", ...)."""
        settings = {k: given.pop(k) for k in list(given) if k in SETTINGS}
        return cls(kernel, workload or make_workload(**given), **settings)

    def settings(self) -> dict:
        """The settings by name (every field but the kernel and the workload)."""
        return {k: getattr(self, k) for k in SETTINGS}

    def to_dict(self) -> dict:
        """The request as JSON: `from_dict` gives it back exactly."""
        return {"kernel": self.kernel, "workload": self.workload.to_dict(), **self.settings()}

    @classmethod
    def from_dict(cls, data: dict) -> ProfileRequest:
        settings = {k: data[k] for k in SETTINGS if k in data}
        return cls(data["kernel"], VerifyWorkload.from_dict(data["workload"]), **settings)

    def replace(self, **changes) -> ProfileRequest:
        return dataclasses.replace(self, **changes)


SETTINGS = tuple(f.name for f in dataclasses.fields(ProfileRequest) if f.name not in ("kernel", "workload"))
