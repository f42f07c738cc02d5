"""Plain-text rendering of an analysis: one table, then each kernel's evidence."""

from __future__ import annotations

from roofline.analysis import Analysis


def _fmt(value, spec: str, missing: str = "-") -> str:
    return missing if value is None else format(value, spec)


def kernel_table(analysis: Analysis) -> list[list[str]]:
    header = ["kernel", "launches", "ms", "DRAM GB/s", "DRAM %", "L2 hit %", "waves/SM",
              "top stalls", "bound", "gap"]
    rows = [header]
    for k in analysis.kernels:
        stalls = ", ".join(s["reason"] for s in k.top_stalls) or "-"
        rows.append([_short(k.kernel), str(k.launches), _fmt(k.duration_ms, ".3f"), _fmt(k.dram_gbps, ".0f"),
                     _fmt(k.dram_throughput_pct, ".1f"), _fmt(k.l2_hit_rate_pct, ".1f"),
                     _fmt(k.waves_per_sm, ".2f"), stalls, k.bound,
                     _fmt(k.gap_to_floor, ".1f") + ("x" if k.gap_to_floor is not None else "")])
    return rows


def _short(name: str, width: int = 40) -> str:
    return name if len(name) <= width else name[:width - 3] + "..."


def align(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_text(analysis: Analysis) -> str:
    out = [f"GPU: {analysis.gpu.get('name') or 'unknown'}"]
    if analysis.workload:
        w = analysis.workload
        out.append(f"workload: ctx_len={w['ctx_lens'] or w['ctx_len']} batch={w['batch']} heads={w['heads']} "
                   f"q_len={w['q_len']} page_size={w['page_size']} {w['dtype']} mask={w['tree_mask']}")
    if analysis.floor:
        f = analysis.floor
        out.append(f"floor: {f['floor_ms'] * 1e3:.1f} us per layer ({f['bound']}-bound: "
                   f"{f['kv_bytes'] / 1e6:.1f} MB of KV at {f['bandwidth_gbps']:.0f} GB/s {f['bandwidth_kind']}, "
                   f"{f['flops'] / 1e9:.2f} GFLOP at {f['peak_tflops']:.0f} TFLOP/s {f['peak_kind']})")
    out += ["", align(kernel_table(analysis)), ""]
    for k in analysis.kernels:
        out.append(f"{k.kernel}: {k.bound}" + (f" ({k.cause})" if k.cause else ""))
        out += [f"  - {e}" for e in k.evidence]
        if k.ncu_rule:
            out.append(f"  - ncu SOLBottleneck says: {k.ncu_rule}")
    if analysis.step:
        s = analysis.step
        out.append(f"\nstep: {s['kernel_ms_per_step']:.3f} ms of kernels vs floor {s['floor_ms']:.4f} ms: "
                   f"{s['gap']:.1f}x from the floor")
    out += [f"note: {n}" for n in analysis.notes]
    return "\n".join(out)
