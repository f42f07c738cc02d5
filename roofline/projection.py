"""Project kernels profiled on one GPU onto another, saying which parts are measured and which modelled.

Measured (on the profiled GPU): duration, DRAM bytes, FLOPs, bound.
Modelled (on the target), by bound:
- bandwidth: DRAM bytes / target bandwidth, at the same fraction of the roof as measured;
- compute: FLOPs / target peak, at the same fraction of the roof as measured;
- latency: the time is serial per-program work, which tracks the SM clock, not bandwidth:
  measured time x (profiled boost clock / target boost clock); needs both clocks.
The workload floor on the target comes from the workload spec and the target's ceilings.
"""

from __future__ import annotations

import dataclasses

from kernels.spec import VerifyWorkload
from roofline.floor import workload_floor
from roofline.gpus import GpuSpec


def project(kernels: list, source: GpuSpec, target: GpuSpec, workload: VerifyWorkload | None) -> dict:
    """`kernels`: KernelSummary objects from roofline.analysis (with `hierarchy` where counters exist)."""
    rows = []
    for k in kernels:
        h = k.hierarchy or {}
        dram = next((lv["bytes"] for lv in h.get("levels", []) if lv["level"] == "DRAM"), None)
        flops = h.get("flops")
        row = {"kernel": k.kernel, "bound_measured": k.bound, "measured_ms": k.duration_ms,
               "projected_ms": None, "method": None}
        if k.duration_ms is None:
            row["method"] = "no duration measured: nothing to project"
        elif k.bound == "bandwidth" and dram:
            src_roof = dram / (source.dram_ceiling().value * 1e9)
            frac = src_roof / (k.duration_ms * 1e-3)
            row["projected_ms"] = dram / (target.dram_ceiling().value * 1e9) / frac * 1e3
            row["method"] = (f"modelled: measured DRAM bytes / {target.short_name} bandwidth at the measured "
                             f"{100 * frac:.0f}% of the roof")
        elif k.bound == "compute" and flops:
            src_roof = flops / (source.bf16_ceiling().value * 1e12)
            frac = src_roof / (k.duration_ms * 1e-3)
            row["projected_ms"] = flops / (target.bf16_ceiling().value * 1e12) / frac * 1e3
            row["method"] = (f"modelled: measured FLOPs / {target.short_name} bf16 peak at the measured "
                             f"{100 * frac:.0f}% of the roof")
        elif k.bound == "latency" and source.boost_clock_mhz and target.boost_clock_mhz:
            row["projected_ms"] = k.duration_ms * source.boost_clock_mhz / target.boost_clock_mhz
            row["method"] = ("modelled: latency-bound, so scaled by SM clock only "
                             f"({source.boost_clock_mhz:.0f} -> {target.boost_clock_mhz:.0f} MHz); "
                             "bandwidth and SM count do not help a too-small grid")
        else:
            row["method"] = "not projected: the bound or the counters it needs are missing"
        rows.append(row)
    out = {"source": source.short_name, "target": target.short_name, "target_name": target.name,
           "kernels": rows,
           "measured": "durations, bytes, FLOPs and bounds come from the report on " + source.name,
           "modelled": "projected times and the target floor are arithmetic on the target's "
                       + ("measured" if target.measured else "datasheet") + " ceilings, not measurements"}
    if workload is not None:
        f = workload_floor(workload, target)
        out["floor"] = dataclasses.asdict(f)
        out["workload_bound_on_target"] = f.bound
    total = [r["projected_ms"] for r in rows]
    if rows and all(t is not None for t in total):
        out["projected_step_ms"] = sum(total)
    return out
