"""Causes for pipelined kernels: one block per SM on purpose, asynchronous copies (TMA, cp.async) into a
ring of shared-memory buffers, warpgroup or tcgen05 MMAs, mbarrier handoffs between warp roles
(FlashMLA's decode kernel, the project's Gluon kernels, Triton's TMA kernels, cuBLAS's nvjet GEMMs).

Such a kernel's low occupancy is its design: fewer registers would change nothing. What limits it is
one of three things, decided from evidence:
- the memory side: bytes in flight per SM against what Little's law needs to reach the measured DRAM
  read bandwidth at the load latency (bandwidth x latency / SMs);
- the math side: the tensor pipe's utilisation against its peak;
- the chain: where the warps wait (profiler/ncu_source.py wait classes): at load barriers the loads
  are late, at MMA waits the math is late; at role barriers the warps wait on each other, which says where
  the waiting shows, not whether the loads or the math behind it set the pace (roofline/analysis/removal.py: a
  removal experiment decides).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofline.analysis.values import num
from roofline.analysis.waits import WarpWaits
from roofline.catalogue.gpus import GpuSpec

MIN_TENSOR_PCT = 5.0  # without SASS: a one-block-per-SM kernel this busy on the tensor pipe issues MMAs
NEAR_ROOF = 0.8  # a side at 80% of its ceiling is the limit
TIE = 0.8  # two waits within 20% of each other: the chain has no single critical path
REMOVAL_HINT = (
    "whether the loads or the math set the pace behind the handoffs, a removal experiment tells "
    "(roofline removal, then roofline analyze RUN --removal FILE)"
)
NAMES = {"loads": "load barriers", "math": "MMA waits", "handoff": "role barriers"}
# The H200's loaded DRAM latency: the pointer-chase probe (kernels/probes.py; capture
# tests/fixtures/h200/full/probe_pointer_chase_full.ncu-rep.gz): 2 waves of one-warp programs, each
# 2,000 dependent random loads, 1.404 ms -> 351 ns a load (DRAM 708 GB/s, L2 hit 9%).
H200_LOAD_LATENCY_NS = 1.40368e6 / 2 / 2000
H200_LATENCY_SOURCE = "pointer-chase probe on the H200 (roofline/data/measured/h200.json)"


@dataclass(frozen=True)
class MemoryFacts:
    """What the memory side is judged against: the read ceiling and the load latency, with sources."""

    read_gbps: float | None
    read_kind: str  # measured or datasheet
    latency_ns: float
    latency_source: str
    latency_measured: bool  # False: assumed (another GPU's measurement)
    dram_peak_gbps: float | None  # the datasheet's, to turn ncu's DRAM % into GB/s when bytes are absent


def memory_facts(gpu: GpuSpec | None) -> MemoryFacts:
    """The GPU's read ceiling and load latency (`load_latency_ns` in its measured file), else the H200's
    latency, marked assumed."""
    measured = gpu.measured if gpu else {}
    if "load_latency_ns" in measured:
        lat, src, ok = (
            float(measured["load_latency_ns"]),
            measured.get("load_latency_source", measured.get("source", "")),
            True,
        )
    else:
        lat, src, ok = H200_LOAD_LATENCY_NS, "the H200's, " + H200_LATENCY_SOURCE, False
    if gpu is None:
        return MemoryFacts(None, "", lat, src, ok, None)
    c = gpu.dram_ceiling()
    return MemoryFacts(c.value, c.kind, lat, src, ok, gpu.dram_gbps)


def pipelined(m: Mapping, traits: Mapping[str, bool] | None) -> str | None:
    """Why this kernel runs one block per SM by design (an evidence line), or None when it does not.

    One block per SM: the block holds the SM's registers or shared memory (ncu's launch limits). By
    design: its SASS issues asynchronous copies and warpgroup/tcgen05 MMAs, or, without SASS, the
    tensor pipe is busy (MIN_TENSOR_PCT)."""
    limits = [
        v for v in (num(m.get("occupancy_limit_registers")), num(m.get("occupancy_limit_shared_mem"))) if v is not None
    ]
    if not limits or min(limits) > 1:
        return None
    holds = [
        n
        for n, k in (("registers", "occupancy_limit_registers"), ("shared memory", "occupancy_limit_shared_mem"))
        if num(m.get(k)) == 1
    ]
    smem = num(m.get("shared_mem_per_block"))
    regs = num(m.get("registers_per_thread"))
    what = (
        f"one block per SM by design: the block holds the SM's {' and '.join(holds)}"
        + (f" ({regs:.0f} registers per thread" if regs else "")
        + (f", {smem / 1024:.0f} KB of shared memory" if smem else "")
        + (")" if regs else "")
    )
    if traits:
        if traits.get("mma") and traits.get("async_copies"):
            return what + "; its SASS issues asynchronous copies (TMA / cp.async) and warpgroup MMAs"
        return None
    tensor = num(m.get("tensor_pipe_pct"))
    if tensor is not None and tensor >= MIN_TENSOR_PCT:
        return what + f"; tensor pipe {tensor:.0f}% (no SASS in this capture: taken as a pipelined MMA kernel)"
    return None


@dataclass(frozen=True)
class PipelineCause:
    cause: str
    advice: str
    evidence: list[str]


ADVICE = {
    "DRAM": "at the DRAM roof for its bytes: only moving fewer bytes helps",
    "loads": (
        "keep more bytes in flight per SM: a deeper ring (more stages) or larger tiles, and issue each "
        "load as soon as its buffer is free"
    ),
    "math": (
        "overlap the softmax with the next tile's MMA (two consumer warpgroups in ping-pong), wait on the "
        "previous tile's MMA rather than the current one"
    ),
    "tensor": (
        "tensor-pipe-bound, on warpgroup MMAs already: keep the pipe fed across tiles "
        "(issue the next tile's score MMA before this tile's softmax, ping-pong consumers), lower precision"
    ),
    "handoff": (
        "shorten the handoff between roles: split it (a barrier per slice, not per tile), let the producer "
        "run further ahead (a deeper ring), overlap the softmax with the next tile's MMA"
    ),
}


def pipeline_cause(m: Mapping, waits: WarpWaits | None, facts: MemoryFacts, sm_count: float | None) -> PipelineCause:
    """Which side limits a pipelined kernel (module doc), with the numbers that decide it."""
    ev: list[str] = []
    sms = sm_count or num(m.get("sm_count"))
    grid = num(m.get("grid_size"))
    active = min(sms, grid) if sms and grid else sms
    achieved = num(m.get("dram_gbps"))
    how = "measured bytes"
    if achieved is None and num(m.get("dram_throughput_pct")) is not None and facts.dram_peak_gbps:
        achieved, how = (
            num(m["dram_throughput_pct"]) / 100 * facts.dram_peak_gbps,
            (f"DRAM {num(m['dram_throughput_pct']):.1f}% of the datasheet's {facts.dram_peak_gbps:.0f} GB/s"),
        )
    lat = facts.latency_ns
    lat_note = (
        f"load latency {lat:.0f} ns, {'measured' if facts.latency_measured else 'assumed'}: {facts.latency_source}"
    )
    at_roof = False
    if facts.read_gbps and sms:
        need = facts.read_gbps * lat / sms  # GB/s x ns = bytes
        line = (
            f"memory side: Little's law needs {facts.read_gbps:.0f} GB/s ({facts.read_kind}) x {lat:.0f} ns / "
            f"{sms:.0f} SMs = {need / 1024:.1f} KB in flight per SM"
        )
        if achieved is not None and active:
            have = achieved * lat / active
            at_roof = achieved >= NEAR_ROOF * facts.read_gbps
            line += (
                f"; this kernel keeps {have / 1024:.1f} KB in flight per SM on average ({achieved:.0f} GB/s "
                f"on {active:.0f} SMs: {how})"
            )
        ev.append(line + f" ({lat_note})")
    tensor = num(m.get("tensor_pipe_pct"))
    if tensor is not None:
        ev.append(
            f"math side: tensor pipe {tensor:.1f}% of peak"
            + (" (near its roof)" if tensor >= 100 * NEAR_ROOF else " (far from its roof)")
        )
    if waits is not None:
        shares = {
            "loads": waits.share("load barrier"),
            "math": waits.share("MMA wait"),
            "handoff": waits.share("role barrier", "block barrier"),  # a kernel without warp roles: block barriers
        }
        where = "role barriers (handoffs)" if not waits.share("block barrier") else "block barriers (__syncthreads)"
        ev.append(
            f"the chain: of {waits.samples:.0f} warp samples, {100 * shares['loads']:.1f}% wait at load "
            f"barriers, {100 * shares['math']:.1f}% at MMA waits, {100 * shares['handoff']:.1f}% at {where}"
        )
    else:
        b, g, ls = (num(m.get(f"stall_{r}")) or 0.0 for r in ("barrier", "gmma", "long_scoreboard"))
        shares = {"handoff": b, "math": g, "loads": ls}
        ev.append(
            f"the chain (stall reasons only, no per-PC samples: long_scoreboard also counts mbarrier "
            f"handoffs): barrier {b:.1f}, gmma {g:.1f}, long_scoreboard {ls:.1f} warps per issue"
        )
    if at_roof:
        return PipelineCause("pipelined: at the DRAM roof", ADVICE["DRAM"], ev)
    if tensor is not None and tensor >= 100 * NEAR_ROOF:
        return PipelineCause("pipelined: the math is late (tensor pipe near its roof)", ADVICE["math"], ev)
    side, second = sorted(shares, key=shares.get, reverse=True)[:2]
    if shares[side] > 0 and shares[second] >= TIE * shares[side]:
        ev[-1] += (
            f"; {NAMES[side]} and {NAMES[second]} within {100 * (1 - TIE):.0f}% of each other: no single "
            "critical path, the larger named"
        )
    cause = {
        "loads": "pipelined: the loads are late",
        "math": "pipelined: the math is late",
        "handoff": "pipelined: the warps wait at the handoffs between roles",
    }[side]
    if side == "handoff":  # where the waiting shows, not what sets the pace: the roles pass a late load or MMA on
        ev.append(REMOVAL_HINT)
    return PipelineCause(cause, ADVICE[side], ev)
