"""First-principles floor of a verify step: KV bytes over bandwidth vs FLOPs over the tensor peak."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kernels.errors import BadInput
from kernels.spec import DTYPE_BYTES, VerifyWorkload
from roofline.catalogue.gpus import Ceiling, GpuSpec, ReadFit


@dataclass(frozen=True)
class Floor:
    """The floor of one workload on one GPU: its bytes and FLOPs, the ceilings used, and both floors."""

    gpu: str
    layers: int
    kv_bytes: int  # every cached token read once, per the layers asked
    io_bytes: int  # queries read + outputs written
    flops: int  # QK^T and PV over the visible tokens
    arithmetic_intensity: float  # FLOP per byte moved
    bandwidth_gbps: float
    bandwidth_kind: str
    peak_tflops: float
    peak_kind: str
    memory_ms: float
    compute_ms: float
    floor_ms: float
    bound: str  # "bandwidth" or "compute"
    balance: float  # the smaller of memory_ms and compute_ms over the larger: 1.0 when both pipes bind alike
    serial_ms: float  # memory_ms + compute_ms: the time if loads and math never overlap
    # The at-size floor: reading these bytes takes a measured fixed part plus the bytes at the fitted
    # rate (GpuSpec.read_fit); None where the GPU has no measured fit.
    at_size_ms: float | None = None  # max(fixed + bytes / fitted rate, compute_ms)
    fixed_us: float | None = None
    fit_gbps: float | None = None
    fixed_share: float | None = None  # of the at-size memory time
    at_size_note: str = ""  # the fit's source, and whether these bytes lie outside the sizes it was fitted on

    def to_dict(self) -> dict:
        """Every field: what analysis.json and `model --format json` hold under "floor"."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> Floor:
        """The inverse of to_dict (e.g. an analysis.json's "floor"); a missing or unknown field is BadInput."""
        return cls(**checked_fields(cls, data, "floor"))


@dataclass(frozen=True)
class Step:
    """One verify step's kernel time against the floor (per step: the run's launches over its iterations)."""

    kernel_ms_per_step: float
    floor_ms: float
    gap: float  # kernel_ms_per_step / floor_ms
    at_size_ms: float | None = None  # the at-size floor, where the GPU has a measured read fit
    gap_at_size: float | None = None

    @classmethod
    def of(cls, kernel_ms_per_step: float, floor: Floor) -> Step:
        at_size = floor.at_size_ms or None
        return cls(
            kernel_ms_per_step=kernel_ms_per_step,
            floor_ms=floor.floor_ms,
            gap=kernel_ms_per_step / floor.floor_ms,
            at_size_ms=at_size,
            gap_at_size=kernel_ms_per_step / at_size if at_size else None,
        )

    def to_dict(self) -> dict:
        """The fields; the at-size ones only where there is an at-size floor (as analysis.json holds them)."""
        d = dataclasses.asdict(self)
        return d if self.at_size_ms else {k: v for k, v in d.items() if k not in ("at_size_ms", "gap_at_size")}

    @classmethod
    def from_dict(cls, data: dict) -> Step:
        return cls(**checked_fields(cls, data, "step"))


# From this balance on, the floor needs DRAM and the tensor cores near their ceilings together: a kernel
# that overlaps them imperfectly lands between floor_ms and serial_ms, whichever bound it is given.
BALANCED = 0.5


def workload_floor(
    w: VerifyWorkload,
    gpu: GpuSpec,
    layers: int = 1,
    bandwidth: Ceiling | None = None,
    peak: Ceiling | None = None,
    read_fit: ReadFit | None = None,
) -> Floor:
    """Bytes: KV read once + Q in + O out. FLOPs: 2 * heads * visible tokens * (Lk + Lv) per query.

    `bandwidth` and `peak` override the catalogue's ceilings (e.g. ones measured in the same run);
    `read_fit` the GPU's measured read fit for the at-size floor (one read per layer: each layer pays
    the fixed part).
    """
    elem = DTYPE_BYTES[w.dtype]
    kv_bytes = w.kv_tokens * w.token_bytes * layers  # closed form: no per-request list, any batch
    io_bytes = w.batch * w.q_len * w.heads * (w.head_dim + w.v_dim) * elem * layers
    # Query i of a request sees the prefix plus its ancestors; count the whole draft block
    # (an upper bound by at most q_len tokens per query: negligible next to ctx_len).
    visible = w.q_len * w.kv_tokens
    flops = 2 * w.heads * visible * (w.head_dim + w.v_dim) * layers
    bw, peak = bandwidth or gpu.dram_ceiling(), peak or gpu.bf16_ceiling()
    memory_ms = (kv_bytes + io_bytes) / (bw.value * 1e9) * 1e3
    compute_ms = flops / (peak.value * 1e12) * 1e3
    at_size = at_size_floor(kv_bytes + io_bytes, layers, compute_ms, read_fit or gpu.read_fit())
    return Floor(
        gpu=gpu.short_name,
        layers=layers,
        kv_bytes=kv_bytes,
        io_bytes=io_bytes,
        flops=flops,
        arithmetic_intensity=flops / (kv_bytes + io_bytes),
        bandwidth_gbps=bw.value,
        bandwidth_kind=bw.kind,
        peak_tflops=peak.value,
        peak_kind=peak.kind,
        memory_ms=memory_ms,
        compute_ms=compute_ms,
        floor_ms=max(memory_ms, compute_ms),
        bound="bandwidth" if memory_ms >= compute_ms else "compute",
        balance=min(memory_ms, compute_ms) / max(memory_ms, compute_ms),
        serial_ms=memory_ms + compute_ms,
        **at_size,
    )


def at_size_floor(nbytes: int, layers: int, compute_ms: float, fit: ReadFit | None) -> dict:
    """The at-size fields of Floor: each layer's read takes fit.fixed_us + its bytes at fit.gbps."""
    if fit is None:
        return {}
    per_layer = nbytes / layers
    memory = layers * fit.time_ms(per_layer)
    where = (
        ""
        if fit.min_bytes <= per_layer <= fit.max_bytes
        else f"; {per_layer / 1e6:.1f} MB per layer is outside the {fit.min_bytes / 1e6:.0f} MB to "
        f"{fit.max_bytes / 1e9:.1f} GB it was fitted over (extrapolated)"
    )
    return {
        "at_size_ms": max(memory, compute_ms),
        "fixed_us": fit.fixed_us,
        "fit_gbps": fit.gbps,
        "fixed_share": layers * fit.fixed_us * 1e-3 / memory,
        "at_size_note": f"measured read fit: {fit.source}{where}",
    }


def at_size_line(f: Floor) -> str | None:
    """One line on the at-size floor, or None without a fit."""
    if f.at_size_ms is None:
        return None
    most = ": the fixed part is most of the time" if f.fixed_share > 0.5 else ""
    read_ms = f.layers * f.fixed_us * 1e-3 / f.fixed_share if f.fixed_share else None
    if read_ms is not None and f.at_size_ms > read_ms * (1 + 1e-9):  # the compute floor outlasts the read
        return (
            f"at-size floor: {f.at_size_ms * 1e3:.4g} µs per layer, the compute floor: a read of these bytes "
            f"takes less, {read_ms * 1e3:.4g} µs at this size ({f.fixed_us:.1f} µs fixed, "
            f"{100 * f.fixed_share:.0f}% of the read{most.replace('the time', 'the read')}, + the bytes at "
            f"{f.fit_gbps:.0f} GB/s) ({f.at_size_note})"
        )
    return (
        f"at-size floor: {f.at_size_ms * 1e3:.4g} µs per layer: a read of these bytes takes "
        f"{f.fixed_us:.1f} µs fixed ({100 * f.fixed_share:.0f}% of it{most}) + the bytes at "
        f"{f.fit_gbps:.0f} GB/s ({f.at_size_note})"
    )


def checked_fields(cls, data: dict, what: str) -> dict:
    """`data` checked against the dataclass's fields: every required one present, none unknown."""
    names = {f.name for f in dataclasses.fields(cls)}
    required = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    unknown, missing = sorted(set(data) - names), sorted(required - set(data))
    if unknown or missing:
        raise BadInput(
            f"{what}: "
            + "; ".join(
                ([f"unknown fields {', '.join(unknown)}"] if unknown else [])
                + ([f"missing fields {', '.join(missing)}"] if missing else [])
            )
        )
    return dict(data)
