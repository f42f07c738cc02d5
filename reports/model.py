"""`roofline model`'s text: the floor of a workload, both floors, the balance, the kernel's model.
Light on purpose (no pandas): `roofline model` starts without it."""

from __future__ import annotations

from roofline.analysis.floor import BALANCED, at_size_line


def render_model(m) -> str:
    """`roofline model`: the floor of a workload on a GPU (a roofline.pipelines.modeling.Model), both floors, the
    balance between memory and compute time, and the kernel's own model when there is one."""
    f, layers = m.floor, m.layers
    out = [
        f"{m.gpu.name}, {m.workload.describe()}, {layers} layer(s)",
        f"  KV bytes     {f.kv_bytes / 1e9:.3f} GB",
        f"  FLOPs        {f.flops / 1e12:.3f} TFLOP  (intensity {f.arithmetic_intensity:.0f} FLOP/B)",
        f"  memory time  {f.memory_ms:.3f} ms at {f.bandwidth_gbps:.0f} GB/s ({f.bandwidth_kind})",
        f"  compute time {f.compute_ms:.3f} ms at {f.peak_tflops:.0f} TFLOP/s ({f.peak_kind})",
        f"  floor        {f.floor_ms:.3f} ms, {f.bound}-bound",
    ]
    fit = at_size_line(f)
    out.append(
        f"  at size      {fit[len('at-size floor: ') :]}"
        if fit
        else "  at size      no measured read fit for this GPU (`roofline calibrate` measures one)"
    )
    if f.balance >= BALANCED:
        other = "compute" if f.bound == "bandwidth" else "memory"
        out.append(
            f"  balance      {other} time is {f.balance:.0%} of the floor: reaching it needs DRAM and "
            f"the tensor cores near their ceilings at once; with no overlap the step takes "
            f"{f.serial_ms:.3f} ms"
        )
    k = m.kernel_model
    if k:
        out += [
            f"{m.kernel} model (an estimate): {k.programs} programs on {k.sm_count} SMs ({k.waves:.2f} waves), "
            f"moves {k.moved_bytes * layers / 1e9:.2f} GB ({k.unique_bytes * layers / 1e9:.2f} GB unique)",
            f"  time ~ {k.time_ms * layers:.3f} ms at one SM's fair share of bandwidth, limited by {k.limited_by}: "
            f"{k.time_ms * layers / f.floor_ms:.1f}x the floor",
            f"  {k.notes}",
            f"  this {m.assumption}",
            f"  {k.arch} grid {'x'.join(map(str, k.grid))}, {k.blocks_per_sm} block(s) per SM; inputs:",
        ]
        out += [f"    {name} = {value} ({kind}): {source}" for name, value, kind, source in k.inputs]
    return "\n".join(out)
