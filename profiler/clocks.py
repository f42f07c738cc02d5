"""The GPU's clocks on record: SM and memory clock, power, temperature and clock-event (throttle) reasons,
read through NVML (`nvidia-ml-py`, imported as `pynvml`) at the start and end of a timed stretch.

    sampler = ClockSampler()          # NVML opened once; "unavailable" (with why) where it cannot be
    start = sampler.sample()          # None where unavailable
    ...                               # the timed work, in flight on the GPU
    record = sampler.record(start, sampler.sample())
    record.throttled                  # [] or why the stretch ran below the GPU's own clock

A record as JSON (timing.json's `clocks`, one per round; a bench row's clock columns):

    {"source": "nvml", "device": "NVIDIA H200",
     "start": {"sm_mhz": 1980, "mem_mhz": 3201, "power_w": 187.5, "temp_c": 41, "sm_max_mhz": 1980,
               "reasons": 0, "power_violation_ns": 0, "thermal_violation_ns": 0},
     "end": {...}, "throttled": []}
    {"source": "unavailable", "why": "no module named pynvml"}

A stretch throttled when a clock-event reason other than idle or the application-clocks setting was set at
either end, when NVML's power or thermal violation time grew between them, or when the SM clock fell by more
than SM_DROP_PCT. Reading NVML starts no CUDA context, so a process that must not start CUDA may sample.
"""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field

# NVML's clock-event reasons (nvmlClocksEventReason*, formerly nvmlClocksThrottleReason*), by bit.
REASONS = {
    0x1: "gpu idle",
    0x2: "applications clocks setting",
    0x4: "sw power cap",
    0x8: "hw slowdown",
    0x10: "sync boost",
    0x20: "sw thermal slowdown",
    0x40: "hw thermal slowdown",
    0x80: "hw power brake slowdown",
    0x100: "display clock setting",
}
BENIGN = 0x1 | 0x2  # idle, or clocks the administrator set: not a slowdown of the timed work
SM_DROP_PCT = 2.0  # an SM clock this much below the stretch's start counts as throttled (steps are 15 MHz)
FIELDS = (
    "sm_mhz",
    "mem_mhz",
    "power_w",
    "temp_c",
    "sm_max_mhz",
    "reasons",
    "power_violation_ns",
    "thermal_violation_ns",
)


@dataclass(frozen=True)
class ClockSample:
    """One reading of the GPU's clocks; None for a value this GPU or driver does not report."""

    sm_mhz: float | None = None
    mem_mhz: float | None = None
    power_w: float | None = None
    temp_c: float | None = None
    sm_max_mhz: float | None = None
    reasons: int | None = None  # the clock-event reasons' bit mask (REASONS)
    power_violation_ns: int | None = None  # NVML's running total of time held back by the power limit
    thermal_violation_ns: int | None = None  # the same for the thermal limit

    def reason_names(self, benign: bool = False) -> list[str]:
        """The clock-event reasons set, by name (without idle and application clocks unless `benign`)."""
        if not self.reasons:
            return []
        bits = self.reasons if benign else self.reasons & ~BENIGN
        named = [name for bit, name in REASONS.items() if bits & bit]
        rest = bits & ~sum(REASONS)
        return named + ([f"reason bits {rest:#x}"] if rest else [])


@dataclass(frozen=True)
class ClockRecord:
    """The clocks at the start and end of one timed stretch (a timing round, a bench row), or why there are none."""

    source: str  # "nvml" | "unavailable"
    start: ClockSample | None = None
    end: ClockSample | None = None
    device: str | None = None
    why: str | None = None  # why unavailable

    @property
    def available(self) -> bool:
        return self.source == "nvml" and (self.start is not None or self.end is not None)

    @property
    def throttled(self) -> list[str]:
        """Why the stretch ran below the GPU's own clock ([] when it did not, or nothing was recorded)."""
        said: list[str] = []
        for where, s in (("start", self.start), ("end", self.end)):
            if s is not None and (names := s.reason_names()):
                said.append(f"{', '.join(names)} at {where}")
        a, b = self.start, self.end
        if a is None or b is None:
            return said
        for kind in ("power", "thermal"):
            before, after = getattr(a, f"{kind}_violation_ns"), getattr(b, f"{kind}_violation_ns")
            if before is not None and after is not None and after > before:
                said.append(f"{kind} limit held the clocks back {(after - before) / 1e6:.1f} ms")
        if a.sm_mhz and b.sm_mhz and b.sm_mhz < a.sm_mhz * (1 - SM_DROP_PCT / 100):
            said.append(f"SM clock fell {a.sm_mhz:.0f} -> {b.sm_mhz:.0f} MHz")
        return said

    def samples(self) -> list[ClockSample]:
        return [s for s in (self.start, self.end) if s is not None]

    def to_dict(self) -> dict:
        if self.source != "nvml":
            return {"source": self.source, "why": self.why}
        return {
            "source": "nvml",
            "device": self.device,
            "start": asdict(self.start) if self.start else None,
            "end": asdict(self.end) if self.end else None,
            "throttled": self.throttled,  # derived: readers recompute it
        }


# A bench row's clock columns (bench.json, bench.csv): row_columns.
CLOCK_COLUMNS = ("sm_mhz_start", "sm_mhz_end", "mem_mhz", "power_w_start", "power_w_end", "temp_c_end", "throttled")


def row_columns(record: ClockRecord | None) -> dict:
    """A bench row's clock columns from its record: the SM clock, power at start and end, the memory clock and
    temperature at the end (None where not read), and `throttled`: why it ran below the GPU's own clock, or ""."""
    a = record.start if record is not None else None
    b = record.end if record is not None else None
    return {
        "sm_mhz_start": _value(a, "sm_mhz"),
        "sm_mhz_end": _value(b, "sm_mhz"),
        "mem_mhz": _value(b, "mem_mhz") or _value(a, "mem_mhz"),
        "power_w_start": _value(a, "power_w"),
        "power_w_end": _value(b, "power_w"),
        "temp_c_end": _value(b, "temp_c"),
        "throttled": "; ".join(record.throttled) if record is not None else "",
    }


def _value(sample: ClockSample | None, key: str):
    return getattr(sample, key) if sample is not None else None


UNRECORDED = ClockRecord("unavailable", why="its timing.json predates clock records")


class ClockError(ValueError):
    """A clock record that is not one (parse_record)."""


def _number(value, where: str, key: str):
    ok = value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))
    if not ok or (value is not None and value < 0):
        raise ClockError(f"{where}: {key} must be a number >= 0 or null, got {value!r:.40}")
    return value


def _sample(data, where: str) -> ClockSample | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ClockError(f"{where} must be an object or null, got {type(data).__name__}")
    values = {k: _number(data.get(k), where, k) for k in FIELDS}
    if values["reasons"] is not None and not isinstance(values["reasons"], int):
        raise ClockError(f"{where}: reasons must be an integer bit mask, got {values['reasons']!r}")
    return ClockSample(**values)


def parse_record(data, where: str) -> ClockRecord:
    """A clock record from its JSON (ClockRecord.to_dict's); ClockError naming `where` and the field."""
    if not isinstance(data, dict):
        raise ClockError(f"{where} must be an object, got {type(data).__name__}")
    source = data.get("source")
    if source == "unavailable":
        why = data.get("why")
        return ClockRecord("unavailable", why=str(why) if why is not None else None)
    if source != "nvml":
        raise ClockError(f"{where}: source must be 'nvml' or 'unavailable', got {source!r:.40}")
    device = data.get("device")
    return ClockRecord(
        "nvml",
        _sample(data.get("start"), f"{where}.start"),
        _sample(data.get("end"), f"{where}.end"),
        device=str(device) if device is not None else None,
    )


@dataclass
class ClockSampler:
    """Reads one GPU's clocks through NVML, opened on first use. Which GPU: `device` (an NVML index or a
    `GPU-...` UUID), else the first of CUDA_VISIBLE_DEVICES, else index 0. Where NVML cannot be opened
    (no pynvml, no driver), every record says "unavailable" and why; a reading that fails is left out."""

    device: str | int | None = None
    nvml: object | None = None  # the pynvml module; None: imported on first use
    why: str | None = None  # why unavailable, once known
    _handle: object | None = field(default=None, repr=False)
    _name: str | None = field(default=None, repr=False)

    def _open(self) -> object | None:
        if self._handle is not None or self.why is not None:
            return self._handle
        try:
            nvml = self.nvml
            if nvml is None:
                import pynvml as nvml  # lazy: only a GPU machine has it

                self.nvml = nvml
            nvml.nvmlInit()
            which = self.device if self.device is not None else _visible_first()
            if isinstance(which, str) and which.startswith(("GPU-", "MIG-")):
                self._handle = nvml.nvmlDeviceGetHandleByUUID(which)
            else:
                self._handle = nvml.nvmlDeviceGetHandleByIndex(int(which))
            name = nvml.nvmlDeviceGetName(self._handle)
            self._name = name.decode() if isinstance(name, bytes) else str(name)
        except ImportError:
            self.why = "no NVML here: nvidia-ml-py (import pynvml) is not installed"
            self._handle = None
        except Exception as exc:  # noqa: BLE001 - any NVML failure means no clocks, never a failed run
            self.why = f"NVML: {type(exc).__name__}: {exc}".splitlines()[0][:160]
            self._handle = None
        return self._handle

    def sample(self) -> ClockSample | None:
        """The clocks now, or None where NVML is unavailable."""
        handle = self._open()
        if handle is None:
            return None
        n = self.nvml
        reasons_of = getattr(n, "nvmlDeviceGetCurrentClocksEventReasons", None) or getattr(
            n, "nvmlDeviceGetCurrentClocksThrottleReasons", None
        )
        return ClockSample(
            sm_mhz=_read(lambda: n.nvmlDeviceGetClockInfo(handle, n.NVML_CLOCK_SM)),
            mem_mhz=_read(lambda: n.nvmlDeviceGetClockInfo(handle, n.NVML_CLOCK_MEM)),
            power_w=_read(lambda: n.nvmlDeviceGetPowerUsage(handle) / 1000.0),
            temp_c=_read(lambda: n.nvmlDeviceGetTemperature(handle, n.NVML_TEMPERATURE_GPU)),
            sm_max_mhz=_read(lambda: n.nvmlDeviceGetMaxClockInfo(handle, n.NVML_CLOCK_SM)),
            reasons=_read(lambda: int(reasons_of(handle))) if reasons_of else None,
            power_violation_ns=_read(
                lambda: n.nvmlDeviceGetViolationStatus(handle, n.NVML_PERF_POLICY_POWER).violationTime
            ),
            thermal_violation_ns=_read(
                lambda: n.nvmlDeviceGetViolationStatus(handle, n.NVML_PERF_POLICY_THERMAL).violationTime
            ),
        )

    def record(self, start: ClockSample | None, end: ClockSample | None) -> ClockRecord:
        """The record of a stretch from its two samples (sample()'s)."""
        if start is None and end is None:
            return ClockRecord("unavailable", why=self.why or "NVML gave no reading")
        return ClockRecord("nvml", start, end, device=self._name)


def _read(get):
    """One NVML value, None where this GPU or driver does not report it."""
    try:
        return get()
    except Exception:  # noqa: BLE001 - NVMLError_NotSupported and kin: that value is left out
        return None


def _visible_first() -> str | int:
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return first if first.startswith(("GPU-", "MIG-")) else int(first) if first.isdigit() else 0
