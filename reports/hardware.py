"""The GPU side as text: the catalogue (`roofline gpus`) and a calibration."""

from __future__ import annotations

from pathlib import Path

from reports.table import align
from roofline.catalogue.calibration import Calibration
from roofline.catalogue.gpus import GpuSpec


def render_gpus(gpus: list[GpuSpec], user_dir: Path) -> str:
    """One row a GPU, where its measured numbers come from, and where calibrate writes."""
    rows = [
        [
            "short name",
            "name",
            "arch",
            "ncu chip",
            "SMs",
            "boost MHz",
            "DRAM GB/s",
            "L2 MB",
            "FP32 TF",
            "BF16 TF",
            "FP8 TF",
            "measured",
        ]
    ]
    for g in gpus:
        m = g.measured
        rows.append(
            [
                g.short_name,
                g.name,
                g.arch,
                g.chip or "-",
                str(g.sm_count),
                str(g.boost_clock_mhz or "-"),
                f"{g.dram_gbps:.0f}",
                f"{g.l2_mb:.0f}",
                f"{g.fp32_tflops:g}",
                f"{g.bf16_dense_tflops:g}",
                f"{g.fp8_dense_tflops:g}" if g.fp8_dense_tflops else "-",
                f"read {m['read_gbps']:.0f} GB/s, bf16 {m['matmul_tflops']:.0f} TF" if m else "-",
            ]
        )
    lines = [align(rows), "", "tensor rates dense (no sparsity), clocks boost; sources: roofline gpus --format json"]
    for g in gpus:
        if g.measured_from:
            mine = Path(g.measured_from).parent == user_dir
            lines.append(
                f"{g.short_name} measured: {g.measured_from} "
                + ("(yours, from roofline calibrate --save)" if mine else "(packaged defaults)")
            )
    lines.append(f"roofline calibrate --save writes to {user_dir}, read before the packaged numbers")
    return "\n".join(lines)


def render_calibration(c: Calibration) -> str:
    fit = c.read_fit
    l2 = f"L2 read {c.l2_read_gbps:.0f} GB/s, " if c.l2_read_gbps else ""
    return (
        f"{c.device}: read {c.read_gbps:.0f} GB/s, copy {c.copy_gbps:.0f} GB/s (read+write), "
        f"{l2}bf16 matmul {c.matmul_tflops:.0f} TFLOP/s\n"
        f"read at size: {fit.fixed_us:.1f} µs fixed + bytes at {fit.gbps:.0f} GB/s "
        f"({fit.min_bytes / 1e6:.0f} MB to {fit.max_bytes / 1e9:.1f} GB)"
    )
