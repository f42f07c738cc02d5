"""Register-blocked MMA kernels: which tensor-core path a kernel runs, what that path can reach on its GPU,
and the verdict for kernels that keep their MMA accumulators in registers on the mma.sync path (GEMMs and
FlashAttention-2-style attention): their low occupancy is the design, so they never get occupancy advice.

The paths (profiler/ncu_source.py MMA_PATH_OPS): mma.sync (`HMMA.16816...`: one warp, accumulators in its
registers; every architecture since Volta), warpgroup MMA (`HGMMA`: sm_90, asynchronous, operands from
shared memory) and tcgen05 (`UTCMMA`, `UTCHMMA`, ...: sm_100, accumulators in tensor memory). Named from the
SASS where the capture holds it (the kernel's instructions come with its PC samples), else from the tensor
pipe's instructions by path (the presets' sm__inst_executed_pipe_tensor_op_hmma / _gmma: `mma_sync_inst`,
`mma_async_inst`).

What mma.sync reaches: ncu's own peaks say it. On the H200 (gh100, Nsight Compute 2025.3.1, the --set full
capture tests/fixtures/h200/mma/gemm_mma2.ncu-rep.gz) sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off
peaks at 360,448 bf16 ops per cycle against 540,672 for the warpgroup path (_hgmma_): 2/3. A report that
holds both peaks gives its own ratio; on sm_80, sm_89 and sm_120 mma.sync is the only tensor path.

The ground truth a user can check is the same work on the other path, timed without a profiler
(tests/fixtures/capture/mma_paths.py --time, H200, torch 2.11: tests/fixtures/h200/mma/mma_times.json and
mma_times_128.json):
SAME_WORK_H200 below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from roofline.analysis.verdict import num, occupancy_limiter
from roofline.analysis.waits import WarpWaits

# bf16 ops per cycle on 132 SMs, ncu's gh100 peaks (module doc): mma.sync over warpgroup MMA
SYNC_OVER_WARPGROUP = {"sm_90": 360448 / 540672}
PEAK_SOURCE = "ncu's gh100 peaks: sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32 360,448 vs _hgmma_ 540,672 ops/cycle"
ONLY_SYNC = {"sm_80", "sm_86", "sm_89", "sm_120"}  # no warpgroup MMA and no tcgen05: mma.sync is the path
PADDED = 4.0  # executed tensor FLOPs this many times the useful ones: most of each MMA tile is padding
# (work, warpgroup kernel, its ms, mma.sync kernel, its ms): the same work timed on the H200 (module doc)
SAME_WORK_H200 = (
    ("a 4096^3 bf16 GEMM", "cuBLAS", 0.190, "Triton on mma.sync", 0.440),
    ("causal prefill, 4 x 16 heads x 4096 x 128", "cuDNN", 0.539, "FlashAttention-2", 1.026),
    ("one-row decode, 8 x 64 heads x 32k x 128", "cuDNN", 1.994, "FlashAttention-2", 3.477),
    ("the same causal prefill", "cuDNN", 0.505, "CUTLASS's sm80 attention (SDPA memory-efficient)", 1.736),
)
SAME_WORK_SOURCE = "tests/fixtures/h200/mma/mma_times.json, mma_times_128.json"
PATH_NAMES = {
    "mma_sync": "mma.sync",
    "mma_warpgroup": "warpgroup MMA (wgmma)",
    "mma_tcgen05": "tcgen05",
    "mma_async": "the asynchronous path (warpgroup MMA on sm_90, tcgen05 on sm_100)",
}
BLOCKED_OCC_PCT = 50.0  # the registers allow half the SM's warps or fewer (64+ registers a thread)
OCCUPANCY_CAUSES = ("low occupancy", "low throughput", "waiting on global memory loads")
SHARED_ADVICE = "cut the shared-memory traffic left per FLOP (bank conflicts, wider accesses, register reuse)"
OWN_CAUSES = ("small grid", "short launches", "load imbalance")  # their own advice stands


@dataclass(frozen=True)
class MmaPath:
    """The tensor-core path a kernel's MMAs take, and what says so."""

    key: str  # "mma_sync", "mma_warpgroup" or "mma_tcgen05"
    how: str  # the SASS opcode or the counters that name it

    @property
    def name(self) -> str:
        return PATH_NAMES[self.key]


def mma_path(m: Mapping, traits: Mapping | None) -> MmaPath | None:
    """The path from the SASS (`traits`, profiler/ncu_source.py) where the capture holds it, else from the
    tensor pipe's instructions by path; None for a kernel that issues no MMA (or a capture that says neither)."""
    if traits:
        issued = [k for k in ("mma_tcgen05", "mma_warpgroup", "mma_sync") if traits.get(k)]
        if not issued:
            return None
        op = traits.get("mma_opcode")
        others = [PATH_NAMES[k] for k in issued[1:]]
        how = f"its SASS issues {op or issued[0]}" + (f" (and {', '.join(others)})" if others else "")
        return MmaPath(issued[0], how + " (PC samples' instructions)")
    sync, async_ = num(m.get("mma_sync_inst")), num(m.get("mma_async_inst"))
    if not sync and not async_:
        return None
    counts = f"tensor-pipe instructions: {sync or 0:,.0f} mma.sync, {async_ or 0:,.0f} warpgroup/tcgen05 (no SASS here)"
    return MmaPath("mma_sync" if (sync or 0) > (async_ or 0) else "mma_async", counts)


@dataclass(frozen=True)
class BlockedVerdict:
    """A register-blocked kernel's cause (None: its own stands), advice and evidence lines to add."""

    cause: str | None
    advice: str
    evidence: list[str]


def register_blocked(
    m: Mapping,
    traits: Mapping | None,
    waits: WarpWaits | None,
    arch: str | None,
    hierarchy: Mapping | None,
    bound: str,
    cause: str | None,
    unit: str | None = None,
) -> BlockedVerdict | None:
    """The verdict of a register-blocked kernel (blocked_by_registers), else None.

    Its latency causes that would ask for occupancy become "register-blocked on mma.sync"; where its busiest
    unit is L1/shared, the warpgroup path comes before cutting shared-memory traffic (it removes the operands'
    register staging); a small grid, short launches and DRAM or L2 bandwidth keep their own advice (the path
    is then evidence). `arch`: the GPU's (sm_90); `hierarchy`: the kernel's roofline
    (roofline/analysis/hierarchy.py), with the useful work where known; `unit`: the busiest unit with its %."""
    path = blocked_by_registers(m, traits)
    if path is None:
        return None
    evidence = _evidence(m, path, waits, arch, hierarchy, bool((traits or {}).get("mma_register_loop")))
    padded = _padding(hierarchy) is not None
    advice = _advice(arch, padded)
    if bound == "latency" and (cause or "").startswith(OCCUPANCY_CAUSES):
        return BlockedVerdict("register-blocked on mma.sync: low occupancy by design", advice, evidence)
    if bound == "compute":
        return BlockedVerdict(None, advice, evidence)
    if (unit or "").startswith("L1") and not (cause or "").startswith(OWN_CAUSES):
        return BlockedVerdict(None, f"{advice}; then {SHARED_ADVICE}", evidence)
    return BlockedVerdict(None, "", evidence)  # a small grid, short launches, DRAM or L2: their own advice stands


def blocked_by_registers(m: Mapping, traits: Mapping | None) -> MmaPath | None:
    """The kernel's mma.sync path when it is register-blocked, else None: its MMAs are mma.sync-class and,
    where the capture holds the SASS, accumulate in registers inside a loop (profiler/sass_mma.py); and its
    registers set its occupancy (ncu's launch__occupancy_limit_registers is the tightest limit) at
    BLOCKED_OCC_PCT or under. Whatever the register count: 98 registers at 25% as much as 255 at 12.5%."""
    path = mma_path(m, traits)
    if path is None or path.key != "mma_sync":
        return None
    if traits and "mma_register_loop" in traits and not traits["mma_register_loop"]:
        return None
    theo = num(m.get("theoretical_occupancy_pct"))
    if occupancy_limiter(m) != "registers" or theo is None or theo > BLOCKED_OCC_PCT:
        return None
    return path


def _evidence(m: Mapping, path: MmaPath, waits, arch, hierarchy, looped: bool) -> list[str]:
    """The path, the registers and occupancy, what the path reaches, where the warps wait, padding, ground truth."""
    regs, theo = num(m.get("registers_per_thread")), num(m.get("theoretical_occupancy_pct"))
    loop = " across the loop (the MMAs accumulate in place)" if looped else ""
    evidence = [
        f"register-blocked on mma.sync: {path.how}; "
        + (f"{regs:.0f} registers per thread hold " if regs else "the registers hold ")
        + f"the MMA accumulators{loop}, so the {theo:.1f}% occupancy they allow is the design (fewer registers "
        "would spill them)"
    ]
    reach = _reach(m, arch, hierarchy)
    if reach:
        evidence.append(reach)
    if waits is not None and waits.samples:
        evidence.append(
            f"of {waits.samples:,.0f} warp samples, {100 * waits.share('math'):.0f}% wait on math (the MMAs and "
            f"the arithmetic between them) and {100 * waits.share('shared memory'):.0f}% on shared memory "
            "(the operands' loads, which the warpgroup path does not stage through registers)"
        )
    padded = _padding(hierarchy)
    if padded is not None:
        evidence.append(padded[0])
    truth = ground_truth(arch)
    if truth:
        evidence.append(truth)
    return evidence


def _reach(m: Mapping, arch: str | None, h: Mapping | None) -> str | None:
    """What mma.sync can reach on this GPU, and where this kernel is against it."""
    tensor = num(m.get("tensor_pipe_pct"))
    own = num(m.get("tensor_ops_per_cycle_peak")), num(m.get("tensor_sync_ops_per_cycle_peak"))
    if arch in ONLY_SYNC:
        where = f"; the tensor pipe {tensor:.1f}% busy" if tensor is not None else ""
        return f"mma.sync is the only tensor-core path on {arch} (no warpgroup MMA, no tcgen05){where}"
    frac, source = None, ""
    if own[0] and own[1]:
        frac, source = own[1] / own[0], "this report's own peaks"
    elif arch in SYNC_OVER_WARPGROUP:
        frac, source = SYNC_OVER_WARPGROUP[arch], PEAK_SOURCE
    if frac is None:
        if arch == "sm_100":
            return "on sm_100 tcgen05 is the full-rate tensor path; mma.sync runs below it"
        return None
    peak = (h or {}).get("compute_peak_tflops") if (h or {}).get("compute_kind") == "tensor" else None
    rate = f": {frac * peak:.0f} of {peak:.0f} TFLOP/s" if peak else ""
    line = f"mma.sync peaks at {frac:.2f} of this GPU's warpgroup-MMA rate{rate} ({source})"
    if tensor is not None:
        done = (h or {}).get("tflops") if (h or {}).get("compute_kind") == "tensor" else None
        line += f"; this kernel keeps the tensor pipe {tensor:.1f}% busy" + (
            f" ({done:.0f} TFLOP/s executed: {100 * done / (frac * peak):.0f}% of the mma.sync peak)"
            if done and peak
            else " (ncu counts the pipe against the path's own peak)"
        )
    return line


def _padding(h: Mapping | None) -> tuple[str] | None:
    """The executed tensor FLOPs against the useful ones, when they show that most of each tile is padding."""
    if not h or not h.get("useful_flops") or not h.get("tensor_flops"):
        return None
    x = h["tensor_flops"] / h["useful_flops"]
    if x < PADDED:
        return None
    return (
        f"the tensor cores executed {x:.0f}x the useful FLOPs ({h['tensor_flops'] / 1e9:,.1f} against "
        f"{h['useful_flops'] / 1e9:,.2f} GFLOP): most of each MMA tile is padding (e.g. one query row in a "
        "16- to 128-row tile)",
    )


def ground_truth(arch: str | None) -> str | None:
    """The same-work comparison that applies on this architecture (warpgroup MMA exists: sm_90)."""
    if arch != "sm_90":
        return None
    runs = "; ".join(
        f"{work}: {fast} {fast_ms:.3f} ms vs {slow} {slow_ms:.3f} ({fast_ms / slow_ms:.2f}x)"
        for work, fast, fast_ms, slow, slow_ms in SAME_WORK_H200
    )
    return (
        "ground truth to check: the same work on the warpgroup path, timed without a profiler (cuBLAS for a "
        f"GEMM, cuDNN or FlashAttention-3 for attention); on the H200: {runs} ({SAME_WORK_SOURCE})"
    )


def _advice(arch: str | None, padded: bool) -> str:
    """What fits a register-blocked kernel: a faster path where the GPU has one; never fewer registers."""
    if arch == "sm_90":
        move = (
            "move the MMAs to the warpgroup path (wgmma), which reads its operands from shared memory without "
            "staging them in registers and runs up to 1.5x mma.sync's peak (Triton's MMAv3, which DISABLE_MMA_V3=1 "
            "turns off; FlashAttention-3 or cuDNN for attention)"
        )
    elif arch == "sm_100":
        move = "move the MMAs to tcgen05 (accumulators in tensor memory, which frees the registers)"
    else:
        move = (
            "mma.sync is this GPU's path: more work per warp (larger warp tiles, deeper cp.async pipelining) "
            "hides the latency that occupancy cannot"
        )
    pack = (
        "; most of each tile is padding: pack more query rows into a tile (the query heads that share a KV "
        "head, or several queries: q_len x heads as the MMA's M) or take a smaller MMA tile"
        if padded
        else ""
    )
    return f"{move}{pack}; keep the registers (they hold the accumulators), not more occupancy"
