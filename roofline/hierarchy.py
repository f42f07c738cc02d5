"""Hierarchical roofline of one kernel from its counters: FLOPs over bytes at L1, L2 and DRAM.

For each level: bytes moved, arithmetic intensity (FLOP/byte), achieved bandwidth and its % of the
report's own peak, and the performance that level's roof allows (min(compute peak, AI x BW)).
FLOPs are tensor ops (bf16/fp16 -> fp32 MMA) plus FP32 (fadd + fmul + 2 x ffma), each against
its own peak (the report's per-cycle peak x SM clock).
"""

from __future__ import annotations

from typing import Mapping

from roofline.verdict import num

LEVELS = (("L1", "l1_bytes", "l1_peak_gbps"), ("L2", "l2_bytes", "l2_peak_gbps"),
          ("DRAM", "dram_bytes", "dram_peak_gbps"))


def hierarchical_roofline(m: Mapping) -> dict | None:
    """{'flops', 'tflops', 'compute_peak_tflops', 'compute_kind', 'levels': [...]} or None."""
    sec = (num(m.get("duration_ms")) or 0) * 1e-3
    tensor, fp32 = num(m.get("tensor_flops")) or 0.0, num(m.get("fp32_flops")) or 0.0
    if not sec or (tensor == 0 and fp32 == 0 and num(m.get("tensor_flops")) is None):
        return None
    kind = "tensor" if tensor >= fp32 else "fp32"
    peak = num(m.get("tensor_peak_tflops") if kind == "tensor" else m.get("fp32_peak_tflops"))
    flops = tensor + fp32
    out = {"flops": flops, "tensor_flops": tensor, "fp32_flops": fp32, "tflops": flops / sec / 1e12,
           "compute_kind": kind, "compute_peak_tflops": peak,
           "compute_pct": 100 * flops / sec / 1e12 / peak if peak else None, "levels": []}
    for level, bytes_key, peak_key in LEVELS:
        b, bw_peak = num(m.get(bytes_key)), num(m.get(peak_key))
        if not b:
            continue
        ai = flops / b
        achieved = b / sec / 1e9
        attainable = min(peak, ai * bw_peak / 1e3) if (peak and bw_peak) else None
        out["levels"].append({"level": level, "bytes": b, "arithmetic_intensity": ai, "gbps": achieved,
                              "peak_gbps": bw_peak, "pct_of_peak": 100 * achieved / bw_peak if bw_peak else None,
                              "attainable_tflops": attainable,
                              "roof": (None if attainable is None else
                                       ("compute" if attainable >= (peak or 0) else "memory"))})
    return out
