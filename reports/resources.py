"""`roofline compile` as text: one row per launch, then what does not fit and why."""

from __future__ import annotations

from reports.numbers import fmt as _fmt
from reports.table import align


def render_resources(r: dict) -> str:
    """`roofline compile`: one row per launch, then what does not fit and why."""
    rows = [
        [
            "launch",
            "grid",
            "warps",
            "stages",
            "regs",
            "spill B",
            "smem KB",
            "mma",
            "blocks/SM",
            "limited by",
            "waves",
            "fits",
        ]
    ]
    for x in r["launches"]:
        rows.append(
            [
                x["name"],
                "x".join(map(str, x["grid"])),
                str(x["threads"] // 32),
                str(x["num_stages"]),
                str(x["registers"]),
                str(x["spill_bytes"]),
                f"{x['shared_bytes'] / 1024:.1f}",
                x["mma"],
                str(x["blocks_per_sm"]),
                x["limited_by"],
                _fmt(x["waves"], ".2f"),
                "yes" if x["fits"] else "NO",
            ]
        )
    lines = [
        f"{r['kernel']} on {r['arch']} (grid sized for {r['gpu']}, {r['sm_count']} SMs), compiled with triton "
        f"{r['triton']} without a GPU",
        align(rows),
    ]
    for x in r["launches"]:
        lines += [f"{x['name']} does not fit: {p}" for p in x["problems"]]
    lines += r.get("notes", [])
    lines.append(
        "smem = the kernel's own shared memory per block; the driver adds 1 KB per block "
        "(ncu: launch__shared_mem_per_block = dynamic + static + driver)"
    )
    return "\n".join(lines)
