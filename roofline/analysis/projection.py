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

from kernels.spec import VerifyWorkload
from roofline.analysis.floor import workload_floor
from roofline.analysis.kernel_models import compare_with_measurement
from roofline.catalogue.gpus import GpuSpec


def _scaling(k, source: GpuSpec, target: GpuSpec, dram, flops) -> tuple[float, str] | None:
    """(factor from measured to projected time, how) for one kernel, or None."""
    sec = k.duration_ms * 1e-3
    if k.bound in ("bandwidth", "compute") and (dram if k.bound == "bandwidth" else flops):
        if k.bound == "bandwidth":
            src, tgt, amount, what, unit = (
                source.dram_ceiling(),
                target.dram_ceiling(),
                dram / 1e9,
                "DRAM bytes",
                "GB/s",
            )
        else:
            src, tgt, amount, what, unit = (
                source.bf16_ceiling(),
                target.bf16_ceiling(),
                flops / 1e12,
                "FLOPs",
                "TFLOP/s",
            )
        frac = amount / src.value / sec
        return src.value / tgt.value, (
            f"modelled: measured {what} at the measured {100 * frac:.0f}% of the roof, "
            f"{src.value:.0f} -> {tgt.value:.0f} {unit} ({tgt.kind})"
        )
    if k.bound == "latency" and source.boost_clock_mhz and target.boost_clock_mhz:
        return source.boost_clock_mhz / target.boost_clock_mhz, (
            "modelled: latency-bound, so scaled by SM clock only "
            f"({source.boost_clock_mhz:.0f} -> {target.boost_clock_mhz:.0f} MHz); "
            "bandwidth and SM count do not help a too-small grid"
        )
    return None


def project(kernels: list, source: GpuSpec, target: GpuSpec, workload: VerifyWorkload | None) -> dict:
    """`kernels`: KernelSummary objects from roofline.analysis.summary (with `hierarchy` where counters exist)."""
    rows = []
    for k in kernels:
        h = k.hierarchy or {}
        dram = next((lv["bytes"] for lv in h.get("levels", []) if lv["level"] == "DRAM"), None)
        row = {
            "kernel": k.kernel,
            "bound_measured": k.bound,
            "measured_ms": k.duration_ms,
            "projected_ms": None,
            "method": "no duration measured: nothing to project",
        }
        if k.duration_ms is not None:
            scaled = _scaling(k, source, target, dram, h.get("flops"))
            if scaled is None:
                row["method"] = "not projected: the bound or the counters it needs are missing"
            else:
                row["projected_ms"] = k.duration_ms * scaled[0]
                row["method"] = scaled[1]
        rows.append(row)
    out = {
        "source": source.short_name,
        "target": target.short_name,
        "target_name": target.name,
        "kernels": rows,
        "measured": "durations, bytes, FLOPs and bounds come from the report on " + source.name,
        "modelled": "projected times and the target floor are arithmetic on the target's "
        + ("measured" if target.measured else "datasheet")
        + " ceilings, not measurements",
    }
    if workload is not None:
        f = workload_floor(workload, target)
        out["floor"] = f.to_dict()
        out["workload_bound_on_target"] = f.bound
    total = [r["projected_ms"] for r in rows]
    if rows and all(t is not None for t in total):
        out["projected_step_ms"] = sum(total)
    registered = {getattr(k, "project_kernel", None) for k in kernels}
    measured = [k.duration_ms for k in kernels]
    if (
        workload is not None
        and len(registered) == 1
        and None not in registered
        and all(m is not None for m in measured)
    ):
        # one registered kernel's launches: put its own model beside the projection, and say why they differ

        out["kernel_model"] = compare_with_measurement(
            registered.pop(), workload, source, target, sum(measured), out.get("projected_step_ms")
        )
    return out
