"""The bound of one kernel from its speed-of-light throughputs, with the numbers that decided it.

The rule follows Nsight Compute's own SOLBottleneck (sections/SpeedOfLight.py), with SM% the
compute throughput and Memory% the memory throughput, both as % of peak sustained:
- either missing                      -> unknown
- both under LATENCY_PCT (60)         -> latency ("small grid" when waves per SM < 1)
- one leads by LEAD_PCT (10) or more  -> compute or bandwidth
- otherwise balanced                  -> the larger of the two, marked balanced; except that
  with the SM pipes near the roof (>= 80%) and DRAM under half the memory throughput, the
  memory traffic is on-chip operand feed (L1/shared memory, as in a GEMM): compute
Either at HIGH_PCT (80) or more is noted as near the roof.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

LATENCY_PCT = 60.0
LEAD_PCT = 10.0
HIGH_PCT = 80.0
BOUNDS = ("compute", "bandwidth", "latency", "unknown")


@dataclass(frozen=True)
class Verdict:
    bound: str
    cause: str | None
    evidence: list[str] = field(default_factory=list)


def _num(x) -> float | None:
    if x is None:
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def classify(sm_pct, mem_pct, dram_pct=None, waves_per_sm=None, grid_size=None, sm_count=None,
             top_stalls: list[tuple[str, float]] | None = None) -> Verdict:
    """Bound and evidence from one kernel's metrics (any may be None/NaN)."""
    sm, mem, dram, waves = _num(sm_pct), _num(mem_pct), _num(dram_pct), _num(waves_per_sm)
    if sm is None or mem is None:
        missing = [n for n, v in (("SM throughput", sm), ("memory throughput", mem)) if v is None]
        return Verdict("unknown", None, [f"missing metric: {', '.join(missing)}"])
    evidence = [f"SM throughput {sm:.1f}% and memory throughput {mem:.1f}% of peak"
                + (f" (DRAM {dram:.1f}%)" if dram is not None else "")]
    stall_text = None
    if top_stalls:
        reason, ratio = top_stalls[0]
        stall_text = f"top warp stall: {reason} ({ratio:.1f} cycles per issued instruction)"

    if sm < LATENCY_PCT and mem < LATENCY_PCT:
        evidence.append(f"both under {LATENCY_PCT:.0f}%: neither compute nor memory is the limit")
        cause = "low throughput: too little work in flight"
        if waves is not None and waves < 1:
            grid = _num(grid_size)
            sms = _num(sm_count)
            detail = f"{waves:.2f} waves per SM"
            if grid is not None and sms is not None:
                detail = f"grid of {grid:.0f} blocks on {sms:.0f} SMs ({waves:.2f} waves)"
            evidence.append(f"small grid: {detail}; most SMs idle")
            cause = "small grid"
        elif stall_text and top_stalls[0][0] == "long_scoreboard":
            cause = "waiting on global memory loads (long_scoreboard)"
        if stall_text:
            evidence.append(stall_text)
        return Verdict("latency", cause, evidence)

    if sm - mem >= LEAD_PCT:
        bound, cause = "compute", "compute pipes lead memory by 10+ points"
    elif mem - sm >= LEAD_PCT:
        bound, cause = "bandwidth", "memory leads compute by 10+ points"
    elif sm >= HIGH_PCT and dram is not None and dram < mem / 2:
        bound = "compute"
        cause = "balanced, with memory traffic on-chip: SM pipes near the roof, DRAM lightly used"
    else:
        bound = "compute" if sm >= mem else "bandwidth"
        cause = "balanced: compute and memory within 10 points"
    if max(sm, mem) >= HIGH_PCT:
        evidence.append(f"at {max(sm, mem):.1f}% of peak: near the roof")
    if stall_text:
        evidence.append(stall_text)
    return Verdict(bound, cause, evidence)
