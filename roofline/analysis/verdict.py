"""The bound of one kernel, the roof or cause behind it, the numbers that decided it, and what to try.

Step 1 follows Nsight Compute's own SOLBottleneck rule (sections/SpeedOfLight.py), with SM% the
compute and Memory% the memory speed-of-light throughput, both % of peak sustained:
- either missing                      -> unknown
- both under LATENCY_PCT (60)         -> latency
- one leads by LEAD_PCT (10) or more  -> compute or bandwidth
- otherwise balanced                  -> the larger one; except that with SM% >= HIGH_PCT and
  DRAM under half of Memory%, the memory traffic is on-chip operand feed (a GEMM): compute

Step 2 names the cause, from the units of ncu's own GPU Throughput Breakdown (SM% and Memory%
are each the largest of them; profiler/ncu_tidy.py SM_UNITS and MEMORY_UNITS):
- bandwidth: the memory level (L1/shared, L2, DRAM) with the busiest unit; without the breakdown,
  bytes/time over the report's own peak (DRAM from ncu's DRAM throughput %)
- compute: the busiest SM unit (tensor, FMA, ALU, XU, ADU, LSU, ... pipe, or the issue slots);
  when every pipe is well under the leader (under PIPE_LEAD_FRAC of it) and the leader is the issue
  slots, the kernel is issue-bound: "issue-bound: no pipe above 36%"
- every verdict also names the busiest unit overall with its % (`unit`)
- a report of the `verdict` preset (profiler/metrics.py) holds only the units that lead SM% and
  Memory% in practice: SM% and Memory% are then the largest of those (`sol_units` says how many)
- latency, first that applies:
  1. small grid: under one wave and fewer blocks than half the SMs (most SMs idle);
  2. short launches: under SHORT_LAUNCH_US each, launch overhead is comparable;
  3. load imbalance: the busiest SM runs well past the average, beyond what the grid's shape explains
     (roofline/analysis/imbalance.py: its threshold, and why a grid under half a wave stays a small grid);
  4. pipelined: one block per SM by design (roofline/analysis/pipelined.py: the block holds the SM's registers
     or shared memory and issues asynchronous copies and warpgroup MMAs): the memory side, the math
     side or the chain of waits, never occupancy advice;
  5. low occupancy set by the launch: theoretical occupancy under LOW_OCC_PCT, with the limit
     that caps it (registers, shared memory, warps, blocks);
  6. small grid: under one wave (the blocks do not fill the SMs' capacity; uneven blocks in its evidence);
  7. low achieved occupancy (under LOW_OCC_PCT);
  8. the dominant warp stall when it is long_scoreboard (waiting on global memory);
  otherwise "too little work in flight".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from profiler.ncu_tidy import MEMORY_UNITS, SM_UNITS
from roofline.analysis.imbalance import load_imbalance, small_grid_note
from roofline.analysis.pipelined import ADVICE as PIPELINE_ADVICE
from roofline.analysis.pipelined import MemoryFacts, memory_facts, pipeline_cause, pipelined
from roofline.analysis.values import num
from roofline.analysis.waits import WarpWaits

LATENCY_PCT = 60.0
LEAD_PCT = 10.0
HIGH_PCT = 80.0
SHORT_LAUNCH_US = 5.0
LOW_OCC_PCT = 25.0
PIPE_LEAD_FRAC = 0.8  # a pipe "leads" when it is within 80% of the busiest SM unit
BOUNDS = ("compute", "bandwidth", "latency", "unknown")

STALL_MEANING = {
    "long_scoreboard": "waiting on global/local memory loads, or on an mbarrier (TMA, cp.async)",
    "short_scoreboard": "waiting on shared memory or special-function results",
    "barrier": "waiting at block-wide barriers",
    "wait": "fixed-latency dependencies between instructions",
    "math_pipe_throttle": "math pipes busy",
    "mio_throttle": "shared-memory/IO queue full",
    "lg_throttle": "global load/store queue full",
    "not_selected": "ready but another warp issued (enough parallelism)",
    "no_instruction": "instruction cache misses",
    "branch_resolving": "branch target computation",
    "membar": "memory barriers",
    "gmma": "waiting on warpgroup MMA",
}

# Advice for any kernel, keyed by roof, unit (label prefix) or latency cause.
ADVICE = {
    "DRAM": "at the DRAM roof: only moving fewer bytes helps (fuse with neighbouring kernels, smaller dtypes, no re-reads)",
    "L2": "L2-bound: the same bytes are re-read from L2; reuse each tile from shared memory or registers (larger tiles)",
    "L1": "L1/shared-bound: cut shared-memory and L1 traffic per FLOP (bank conflicts, wider accesses, register reuse)",
    "tensor pipe": "tensor-pipe-bound: near the MMA roof; lower precision, or a faster MMA path (wgmma on Hopper)",
    "FMA": "FP32-bound: fewer FP32 operations per result, or move the math onto tensor cores",
    "ALU": "integer/logic-bound: cut index arithmetic, compares and min/max (hoist address math out of loops)",
    "XU": "transcendental-bound: fewer exp/log/rsqrt and type conversions (exp2 with folded scales, fast math)",
    "ADU": "address/branch-unit-bound: fewer divergent branches and indirect addressing",
    "CBU": "branch-bound: fewer divergent branches and barriers",
    "LSU": "load/store-instruction-bound: wider (vectorised) loads and stores, fewer instructions per byte",
    "FP64": "FP64-bound: use FP32 where precision allows",
    "uniform": "uniform-datapath-bound: fewer scalar (warp-uniform) instructions",
    "issue": "issue-bound: too many instructions per result; cut instruction count (vectorise, unroll, hoist invariant math)",
    "MIO": "MIO-bound: shared-memory and special-function instructions queue up; fewer of them per FMA",
    "small grid": "launch more blocks: split the work along another axis so blocks >= 2x the SMs",
    "short launches": "fuse the launches or capture them in a CUDA graph",
    "low occupancy": "free the occupancy limiter (fewer registers or less shared memory per block)",
    "long_scoreboard": "keep more loads in flight: deeper pipelining (num_stages), more blocks per SM",
    "default": "more independent work per SM: more blocks, deeper pipelining",
}
# For the project's attention kernels (kernels/registry.py) or a known verify workload.
ATTENTION_ADVICE = {
    "DRAM": "at the DRAM roof: only moving fewer bytes helps (read KV once, smaller KV dtype)",
    "L2": "L2-bound: the same KV bytes are re-read from L2; share each KV tile across more rows/heads",
    "tensor pipe": "tensor-pipe-bound: a faster MMA path (wgmma on Hopper), lower precision",
    "FMA": "FP32-bound: move the math onto tensor cores or cut scalar work (exp, rescales)",
    "small grid": "launch more programs: split the sequence (split-KV) so blocks >= 2x the SMs",
    "long_scoreboard": "keep more loads in flight: deeper pipelining (num_stages), more programs per SM",
}


def advice_for(key: str | None, attention: bool = False) -> str | None:
    """Advice for a roof, unit label or latency cause (matched by prefix); attention-specific if asked."""
    if not key:
        return None
    for table in (ATTENTION_ADVICE, ADVICE) if attention else (ADVICE,):
        for prefix in sorted(table, key=len, reverse=True):
            if key.startswith(prefix):
                return table[prefix]
    return None


@dataclass(frozen=True)
class Verdict:
    bound: str
    cause: str | None
    roof: str | None = None
    evidence: list[str] = field(default_factory=list)
    advice: str | None = None
    unit: str | None = None  # the busiest unit with its %, e.g. "ALU pipe 36%" or "issue-bound: ..."


def _pct(part, peak) -> float | None:
    return 100 * part / peak if part is not None and peak else None


def _busiest_per_label(m: Mapping, table: Mapping[str, tuple[str, str]]) -> dict[str, float]:
    """label -> the largest % of peak among the table's columns that carry that label."""
    out: dict[str, float] = {}
    for column, (label, _) in table.items():
        v = num(m.get(column))
        if v is not None:
            out[label] = max(v, out.get(label, v))
    return out


def sm_units(m: Mapping) -> dict[str, float]:
    """% of peak of each SM unit in ncu's throughput breakdown (one value per unit: the largest)."""
    return _busiest_per_label(m, SM_UNITS)


def memory_units(m: Mapping) -> dict[str, float]:
    """% of peak of each memory level (L1/shared, L2, DRAM): its busiest unit in ncu's breakdown."""
    return _busiest_per_label(m, MEMORY_UNITS)


def _is_pipe(label: str) -> bool:
    return "pipe" in label or label.startswith("TMA")


def compute_unit(m: Mapping) -> tuple[str, str] | None:
    """(roof, phrase) for the SM side: the leading pipe, or 'issue slots' when no pipe leads."""
    units = sm_units(m)
    if not units:
        return None
    top = max(units, key=units.get)
    pipes = {k: v for k, v in units.items() if _is_pipe(k)}
    best = max(pipes, key=pipes.get) if pipes else None
    if best is not None and pipes[best] >= PIPE_LEAD_FRAC * units[top]:
        return best, f"{best} {pipes[best]:.0f}%"
    below = f"no pipe above {pipes[best]:.0f}%" if best is not None else "no pipe reported"
    if top == "issue slots":
        return top, f"issue-bound: {below} (issue slots {units[top]:.0f}%)"
    return top, f"{top} {units[top]:.0f}% ({below})"


def busiest_unit(m: Mapping) -> str | None:
    """The busiest unit of the whole GPU (SM units and memory levels) with its %."""
    cands = {**{k: v for k, v in sm_units(m).items()}, **memory_units(m)}
    if not cands:
        return None
    top = max(cands, key=cands.get)
    if top in sm_units(m):
        return compute_unit(m)[1]
    return f"{top} {cands[top]:.0f}%"


def memory_levels(m: Mapping, duration_ms: float | None) -> dict[str, float]:
    """% of peak at each memory level: ncu's breakdown when the report has it, else bytes/time."""
    levels = memory_units(m)
    if levels:
        return levels
    dram = num(m.get("dram_throughput_pct"))
    if dram is not None:
        levels["DRAM"] = dram
    sec = duration_ms * 1e-3 if duration_ms else None
    for level, bytes_key, peak_key in (("L2", "l2_bytes", "l2_peak_gbps"), ("L1", "l1_bytes", "l1_peak_gbps")):
        b, peak = num(m.get(bytes_key)), num(m.get(peak_key))
        if b is not None and peak and sec:
            levels[level] = _pct(b / sec / 1e9, peak)
    return levels


def top_stalls(m: Mapping, n: int = 3) -> list[tuple[str, float]]:
    stalls = [
        (k[len("stall_") :], num(v))
        for k, v in m.items()
        if k.startswith("stall_") and k != "stall_selected" and num(v)
    ]
    return sorted(stalls, key=lambda kv: -kv[1])[:n]


def occupancy_limiter(m: Mapping) -> str | None:
    """The launch limit with the fewest blocks per SM (ncu's launch__occupancy_limit_*)."""
    limits = {k: num(m.get(f"occupancy_limit_{k}")) for k in ("registers", "shared_mem", "warps", "blocks")}
    limits = {k: v for k, v in limits.items() if v is not None}
    if not limits:
        return None
    name = min(limits, key=limits.get)
    return {"shared_mem": "shared memory"}.get(name, name)


def classify(
    m: Mapping,
    attention: bool = False,
    waits: WarpWaits | None = None,
    traits: Mapping[str, bool] | None = None,
    memory: MemoryFacts | None = None,
) -> Verdict:
    """Verdict from one kernel's metrics (tidy column names; any may be missing or NaN).

    `attention`: the kernel is one of the project's attention kernels (attention-specific advice).
    `waits`, `traits`: its PC samples by wait class and its SASS traits (profiler/ncu_source.py), when
    the capture has them; `memory`: the read ceiling and load latency for a pipelined kernel's memory side.
    """
    sm, mem = num(m.get("sm_throughput_pct")), num(m.get("memory_throughput_pct"))
    if sm is None or mem is None:
        missing = [n for n, v in (("SM throughput", sm), ("memory throughput", mem)) if v is None]
        return Verdict("unknown", None, None, [f"missing metric: {', '.join(missing)}"])
    dram = num(m.get("dram_throughput_pct"))
    evidence = _throughput_lines(m, sm, mem, dram)
    stalls = top_stalls(m)
    stall_line = _stall_line(m, stalls)
    unit = busiest_unit(m)
    if sm < LATENCY_PCT and mem < LATENCY_PCT:
        evidence.append(f"both under {LATENCY_PCT:.0f}%: neither compute nor memory is the limit")
        cause, advice = _latency_cause_and_advice(m, attention, waits, traits, memory, stalls, evidence)
        evidence += [line for line in (f"busiest unit: {unit}" if unit else None, stall_line) if line]
        return Verdict("latency", cause, None, evidence, advice, unit)

    bound, cause = _bound(sm, mem, dram)
    if max(sm, mem) >= HIGH_PCT:
        evidence.append(f"at {max(sm, mem):.1f}% of peak: near the roof")
    roof, unit = _roof(m, bound, unit, evidence)
    evidence += [line for line in (f"busiest unit: {unit}" if unit else None, stall_line) if line]
    key = "issue" if (unit or "").startswith("issue-bound") else roof
    advice = advice_for(key, attention)
    why = pipelined(m, traits) if roof == "tensor pipe" else None
    if why is not None:  # already on warpgroup (or tcgen05) MMAs: "a faster MMA path" would be wrong
        evidence.append(why)
        advice = PIPELINE_ADVICE["tensor"]
    return Verdict(bound, cause, roof, evidence, advice, unit)


def _throughput_lines(m: Mapping, sm: float, mem: float, dram: float | None) -> list[str]:
    """The verdict's first evidence: SM and memory throughput, and where those two numbers came from when
    the capture lacks ncu's own."""
    evidence = [
        f"SM throughput {sm:.1f}% and memory throughput {mem:.1f}% of peak"
        + (f" (DRAM {dram:.1f}%)" if dram is not None else "")
    ]
    if num(m.get("memory_from_dram")):
        evidence.append(
            "memory throughput here is DRAM throughput (dram__throughput): the capture has neither "
            "ncu's gpu__compute_memory_throughput nor its breakdown units, so L1 and L2 are not counted"
        )
    units_used = num(m.get("sol_units"))
    if units_used:
        evidence.append(
            f"SM% and memory% here are the largest of the {units_used:.0f} throughput breakdown units "
            "the report holds (ncu's own take the largest of 25 and 26 on the H200)"
        )
    return evidence


def _stall_line(m: Mapping, stalls: list[tuple[str, float]]) -> str | None:
    """The top warp stall, its count per issued instruction and what it means."""
    if not stalls:
        return None
    per = (
        "warps stalled per issued instruction, PC-sampled"
        if num(m.get("stalls_sampled"))
        else "warps stalled per issued instruction, from the stall counters"
    )
    return (
        f"top warp stall: {stalls[0][0]} ({stalls[0][1]:.1f} {per}: {STALL_MEANING.get(stalls[0][0], 'see ncu docs')})"
    )


def _latency_cause_and_advice(m, attention, waits, traits, memory, stalls, evidence: list[str]) -> tuple:
    """(cause, advice) of a latency-bound kernel, in order: a small grid or short launches, a load imbalance
    (roofline/analysis/imbalance.py), a pipelined kernel's handoffs (pipelined.py), then the stalls and
    occupancy; the lines that show it are added to `evidence`."""
    waves, duration = num(m.get("waves_per_sm")), num(m.get("duration_ms"))
    uneven = None if _grid_or_launch_first(m, waves, duration) else load_imbalance(m, attention)
    pipe = None if uneven else _pipelined_cause(m, waves, duration, traits, waits, memory)
    if uneven is not None:  # before any pipeline or occupancy cause
        evidence += uneven.evidence
        return uneven.cause, uneven.advice
    if pipe is not None:
        evidence += pipe.evidence
        return pipe.cause, pipe.advice
    cause, key = _latency_cause(m, waves, duration, stalls, evidence)
    if cause == "small grid" and (note := small_grid_note(m)):
        evidence.append(note)
    return cause, advice_for(key, attention)


def _bound(sm: float, mem: float, dram: float | None) -> tuple[str, str]:
    """(bound, cause) of a kernel busy enough to have one: the side that leads by LEAD_PCT, else the balance."""
    if sm - mem >= LEAD_PCT:
        return "compute", "compute pipes lead memory by 10+ points"
    if mem - sm >= LEAD_PCT:
        return "bandwidth", "memory leads compute by 10+ points"
    if sm >= HIGH_PCT and dram is not None and dram < mem / 2:
        return "compute", "balanced, with memory traffic on-chip: SM pipes near the roof, DRAM lightly used"
    return ("compute" if sm >= mem else "bandwidth"), "balanced: compute and memory within 10 points"


def _roof(m: Mapping, bound: str, unit: str | None, evidence: list[str]) -> tuple[str | None, str | None]:
    """(roof, busiest unit): the busiest memory level of a bandwidth-bound kernel, the leading SM unit of a
    compute-bound one, each with the breakdown added to `evidence`; `unit` stays where there is none."""
    if bound == "bandwidth":
        levels = memory_levels(m, num(m.get("duration_ms")))
        if not levels:
            return None, unit
        roof = max(levels, key=levels.get)
        evidence.append("memory levels, % of peak: " + ", ".join(f"{k} {v:.1f}%" for k, v in levels.items()))
        return roof, f"{roof} {levels[roof]:.0f}%"
    found = compute_unit(m)
    if not found:
        return None, unit
    units = sorted(sm_units(m).items(), key=lambda kv: -kv[1])[:5]
    evidence.append("busiest SM units, % of peak: " + ", ".join(f"{k} {v:.1f}%" for k, v in units))
    return found


def _grid_or_launch_first(m, waves, duration) -> bool:
    """A small grid (fewer blocks than half the SMs) or short launches: causes that come before any other."""
    grid, sms = num(m.get("grid_size")), num(m.get("sm_count"))
    if waves is not None and waves < 1 and (grid is None or sms is None or grid < sms / 2):
        return True
    return duration is not None and duration * 1e3 < SHORT_LAUNCH_US


def _pipelined_cause(m, waves, duration, traits, waits, memory):
    """The pipelined kernel's cause (roofline/analysis/pipelined.py), or None: not pipelined, or a small grid
    (fewer blocks than half the SMs) or short launches come first."""
    if _grid_or_launch_first(m, waves, duration):
        return None
    sms = num(m.get("sm_count"))
    why = pipelined(m, traits)
    if why is None:
        return None
    found = pipeline_cause(m, waits, memory or memory_facts(None), sms)
    return dataclasses.replace(found, evidence=[why] + found.evidence)


def _latency_cause(m, waves, duration, stalls, evidence) -> tuple[str, str]:
    """(cause, advice key)."""
    grid, sms = num(m.get("grid_size")), num(m.get("sm_count"))
    occ, theo = num(m.get("achieved_occupancy_pct")), num(m.get("theoretical_occupancy_pct"))
    small = waves is not None and waves < 1

    def grid_line() -> str:
        if grid is None or sms is None:
            return f"small grid: {waves:.2f} waves per SM"
        idle = f"{sms - grid:.0f} of {sms:.0f} SMs get no block" if grid < sms else "the SMs are not full"
        return f"small grid: grid of {grid:.0f} blocks on {sms:.0f} SMs ({waves:.2f} waves): {idle}"

    def occupancy_lines() -> None:
        evidence.append(f"achieved occupancy {occ:.1f}%" if occ is not None else "achieved occupancy unknown")
        if theo is not None:
            evidence[-1] += f" (theoretical {theo:.1f}%)"
        limiter = occupancy_limiter(m)
        if limiter:
            regs = num(m.get("registers_per_thread"))
            evidence.append(
                f"occupancy limited by {limiter}"
                + (f" ({regs:.0f} registers per thread)" if limiter == "registers" and regs else "")
            )

    if small and (grid is None or sms is None or grid < sms / 2):
        evidence.append(grid_line())
        return "small grid", "small grid"
    if duration is not None and duration * 1e3 < SHORT_LAUNCH_US:
        evidence.append(f"each launch runs {duration * 1e3:.1f} µs: launch overhead is comparable")
        return "short launches", "short launches"
    if theo is not None and theo < LOW_OCC_PCT:
        occupancy_lines()
        if small:
            evidence.append(grid_line())
        limiter = occupancy_limiter(m)
        return f"low occupancy{' (' + limiter + ')' if limiter else ''}", "low occupancy"
    if small:
        evidence.append(grid_line())
        return "small grid", "small grid"
    if occ is not None and occ < LOW_OCC_PCT:
        occupancy_lines()
        limiter = occupancy_limiter(m)
        return f"low occupancy{' (' + limiter + ')' if limiter else ''}", "low occupancy"
    if stalls and stalls[0][0] == "long_scoreboard":
        return "waiting on global memory loads (long_scoreboard)", "long_scoreboard"
    return "low throughput: too little work in flight", "default"


NCU_TITLES = {
    "Small Grid": {"latency"},
    "Latency Issue": {"latency"},
    "High Compute Throughput": {"compute"},
    "High Memory Throughput": {"bandwidth"},
    "High Throughput": {"compute", "bandwidth"},
    "Balanced Throughput": {"compute", "bandwidth"},
}


def agrees_with_ncu(bound: str, ncu_rule: str | None) -> bool | None:
    """Whether ncu's SOLBottleneck title ('Small Grid: ...') allows this bound; None if unknown."""
    if not ncu_rule:
        return None
    title = ncu_rule.split(":", 1)[0].strip()
    allowed = NCU_TITLES.get(title)
    return None if allowed is None else bound in allowed
