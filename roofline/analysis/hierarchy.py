"""Hierarchical roofline of one kernel from its counters: FLOPs over bytes at L1, L2 and DRAM.

For each level: bytes moved, arithmetic intensity (FLOP/byte), achieved bandwidth and its % of the
report's own peak, and the performance that level's roof allows (min(compute peak, AI x BW)).
FLOPs are tensor ops (bf16/fp16 -> fp32 MMA) plus FP32 (fadd + fmul + 2 x ffma), each against
its own peak (the report's per-cycle peak x SM clock).
"""

from __future__ import annotations

from collections.abc import Mapping

from roofline.analysis.values import num

LEVELS = (
    ("L1", "l1_bytes", "l1_peak_gbps"),
    ("L2", "l2_bytes", "l2_peak_gbps"),
    ("DRAM", "dram_bytes", "dram_peak_gbps"),
)


def hierarchical_roofline(m: Mapping) -> dict | None:
    """{'flops', 'tflops', 'compute_peak_tflops', 'compute_kind', 'levels': [...]} or None."""
    sec = (num(m.get("duration_ms")) or 0) * 1e-3
    tensor, fp32 = num(m.get("tensor_flops")) or 0.0, num(m.get("fp32_flops")) or 0.0
    if not sec or (tensor == 0 and fp32 == 0 and num(m.get("tensor_flops")) is None):
        return None
    kind = "tensor" if tensor >= fp32 else "fp32"
    peak = num(m.get("tensor_peak_tflops") if kind == "tensor" else m.get("fp32_peak_tflops"))
    flops = tensor + fp32
    out = {
        "flops": flops,
        "tensor_flops": tensor,
        "fp32_flops": fp32,
        "tflops": flops / sec / 1e12,
        "compute_kind": kind,
        "compute_peak_tflops": peak,
        "compute_pct": 100 * flops / sec / 1e12 / peak if peak else None,
        "levels": [],
    }
    for level, bytes_key, peak_key in LEVELS:
        b, bw_peak = num(m.get(bytes_key)), num(m.get(peak_key))
        if not b:
            continue
        ai = flops / b
        achieved = b / sec / 1e9
        attainable = min(peak, ai * bw_peak / 1e3) if (peak and bw_peak) else None
        out["levels"].append(
            {
                "level": level,
                "bytes": b,
                "arithmetic_intensity": ai,
                "gbps": achieved,
                "peak_gbps": bw_peak,
                "pct_of_peak": 100 * achieved / bw_peak if bw_peak else None,
                "attainable_tflops": attainable,
                "roof": (None if attainable is None else ("compute" if attainable >= (peak or 0) else "memory")),
            }
        )
    return out


def with_useful_work(h: dict | None, useful_flops: float, duration_ms: float | None) -> dict | None:
    """`h` with the workload's own FLOPs beside the executed ones (ncu counts every MMA the tensor
    cores ran, padded rows included). Each level gains `useful_arithmetic_intensity`; its `roof` and
    `attainable_tflops` are then the useful work's, so they agree with the workload's floor. The
    executed roof stays as `executed_roof`."""
    if not h or not useful_flops or not duration_ms:
        return h
    peak = h.get("compute_peak_tflops")
    out = {
        **h,
        "useful_flops": useful_flops,
        "useful_tflops": useful_flops / (duration_ms * 1e-3) / 1e12,
        "executed_over_useful": h["flops"] / useful_flops,
        "levels": [],
    }
    for lv in h["levels"]:
        ai = useful_flops / lv["bytes"]
        bw = lv.get("peak_gbps")
        attainable = min(peak, ai * bw / 1e3) if (peak and bw) else None
        out["levels"].append(
            {
                **lv,
                "useful_arithmetic_intensity": ai,
                "executed_roof": lv.get("roof"),
                "attainable_tflops": attainable,
                "roof": None if attainable is None else ("compute" if attainable >= peak else "memory"),
            }
        )
    return out


def useful_flops_per_launch(
    tensor_flops: list[float | None], launches: list[int], useful_per_step: float, steps: int
) -> list[float | None]:
    """The workload's FLOPs per launch of each kernel of a step: the steps' useful FLOPs split in
    proportion to the tensor FLOPs ncu counted for each kernel (all its launches); a kernel without
    MMA work gets None (its FLOPs stay ncu's)."""
    totals = [(t or 0.0) * n for t, n in zip(tensor_flops, launches)]
    whole = sum(totals)
    if not whole or not steps:
        return [None] * len(totals)
    return [useful_per_step * steps * t / whole / n if t else None for t, n in zip(totals, launches)]


def padding_note(tensor_over_useful: float, q_len: int | None) -> str:
    """What the tensor cores' FLOPs over the useful ones most likely are: MMA tiles padded past the
    query rows (e.g. 9 rows in a 32-row tile: 32/9 = 3.56x), said only when the numbers fit it."""
    if q_len:
        rows = tensor_over_useful * q_len
        if abs(rows - round(rows)) < 0.02 * rows and round(rows) % 16 == 0 and round(rows) > q_len:
            return f"MMA padding: {q_len} query rows padded to {round(rows)}-row MMA tiles"
    return "MMA padding or recomputed work: the tensor cores ran more than the workload needs"
