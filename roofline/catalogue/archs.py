"""The occupancy an architecture's per-SM limits (kernels.hardware.ArchLimits) allow a launch:
blocks per SM, what limits it, and whether the launch fits at all."""

from __future__ import annotations

from dataclasses import dataclass

from kernels.hardware import ArchLimits


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int  # 0 when the launch does not fit
    limited_by: str  # "registers", "shared memory", "warps", "blocks" or "does not fit"
    limits: dict  # blocks per SM each resource allows
    fits: bool
    problems: tuple[str, ...]  # why it does not fit, one line each


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def occupancy(limits: ArchLimits, threads: int, registers: int, shared_bytes: int) -> Occupancy:
    """Resident blocks per SM for a block of `threads` threads using `registers` per thread and
    `shared_bytes` of shared memory (the kernel's own; the driver's reserve is added here), by the
    CUDA occupancy calculator's rules."""
    warps = -(-threads // 32)
    regs_per_warp = _round_up(registers * 32, limits.register_alloc_unit)
    shared_alloc = _round_up(shared_bytes, limits.shared_alloc_unit) + limits.reserved_shared_per_block_bytes
    problems = []
    if threads > limits.max_threads_per_block:
        problems.append(f"{threads} threads per block > {limits.max_threads_per_block}")
    if registers > limits.max_registers_per_thread:
        problems.append(f"{registers} registers per thread > {limits.max_registers_per_thread}")
    if regs_per_warp * warps > limits.max_registers_per_block:
        problems.append(f"{regs_per_warp * warps} registers per block > {limits.max_registers_per_block}")
    if shared_bytes > limits.shared_per_block_bytes:
        problems.append(
            f"{shared_bytes} B shared memory per block > {limits.shared_per_block_bytes} B "
            f"({limits.shared_per_block_bytes // 1024} KB) on {limits.arch}"
        )
    per_sm = {
        "registers": (limits.registers_per_sm // regs_per_warp) // warps if regs_per_warp else limits.max_blocks_per_sm,
        "shared memory": limits.shared_per_sm_bytes // shared_alloc,
        "warps": limits.max_warps_per_sm // warps,
        "blocks": limits.max_blocks_per_sm,
    }
    if problems:
        return Occupancy(0, "does not fit", per_sm, False, tuple(problems))
    limited_by = min(per_sm, key=lambda k: (per_sm[k], k != "blocks"))
    return Occupancy(per_sm[limited_by], limited_by, per_sm, True, ())
