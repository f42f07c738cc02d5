"""First-principles floor of a verify step: KV bytes over bandwidth vs FLOPs over the tensor peak."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.spec import DTYPE_BYTES, VerifyWorkload
from roofline.gpus import Ceiling, GpuSpec


@dataclass(frozen=True)
class WorkloadFloor:
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


# From this balance on, the floor needs DRAM and the tensor cores near their ceilings together: a kernel
# that overlaps them imperfectly lands between floor_ms and serial_ms, whichever bound it is given.
BALANCED = 0.5


def workload_floor(w: VerifyWorkload, gpu: GpuSpec, layers: int = 1, bandwidth: Ceiling | None = None,
                   peak: Ceiling | None = None) -> WorkloadFloor:
    """Bytes: KV read once + Q in + O out. FLOPs: 2 * heads * visible tokens * (Lk + Lv) per query.

    `bandwidth` and `peak` override the catalogue's ceilings (e.g. ones measured in the same run).
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
    return WorkloadFloor(
        gpu=gpu.short_name, layers=layers, kv_bytes=kv_bytes, io_bytes=io_bytes, flops=flops,
        arithmetic_intensity=flops / (kv_bytes + io_bytes),
        bandwidth_gbps=bw.value, bandwidth_kind=bw.kind, peak_tflops=peak.value, peak_kind=peak.kind,
        memory_ms=memory_ms, compute_ms=compute_ms, floor_ms=max(memory_ms, compute_ms),
        bound="bandwidth" if memory_ms >= compute_ms else "compute",
        balance=min(memory_ms, compute_ms) / max(memory_ms, compute_ms), serial_ms=memory_ms + compute_ms,
    )
