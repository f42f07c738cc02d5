"""Each kernel's own model: the bytes its algorithm moves (re-reads included), its grid against
the GPU's SMs, and the time that implies. Plain arithmetic on the launch shapes in kernels/plan.py.

Time model (an estimate, not a bound): the larger of
- all bytes the algorithm moves through the memory system / DRAM bandwidth, and
- the serial work of one program: its bytes / (DRAM bandwidth / SMs), times the waves
  (ceil(programs / SMs), one program per SM): each program streams at its SM's fair share of
  DRAM bandwidth. A lone SM can draw more than that, and a latency-bound one less (triton_mla on
  the H200 drew 10 GB/s per program against a 34 GB/s share), so compare with a profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.plan import (DECODE_BLOCK_H, DECODE_KV_SPLITS, EXTEND_BLOCK_M, FAST_DEFAULTS, FAST_MIN_SPLIT_LEN,
                          cdiv, plan_splits)
from kernels.spec import VerifyWorkload
from roofline.gpus import GpuSpec

PARTIAL_BYTES = 4  # fp32 partial outputs of the split kernels


@dataclass(frozen=True)
class KernelModel:
    kernel: str
    programs: int
    sm_count: int
    waves: float
    moved_bytes: int  # through the memory system, re-reads included
    unique_bytes: int  # the least DRAM traffic it needs (KV once + scratch)
    per_program_bytes: float
    time_ms: float
    limited_by: str  # "bandwidth" or "serial program" (too few programs for the bytes each walks)
    notes: str


def kernel_model(kernel: str, w: VerifyWorkload, gpu: GpuSpec) -> KernelModel:
    kv_total, kv_max = w.kv_tokens * w.token_bytes, w.max_kv_len * w.token_bytes  # closed form, any batch
    if kernel == "triton_mla":
        per_req = w.heads * cdiv(w.q_len, EXTEND_BLOCK_M)
        programs = w.batch * per_req
        moved = per_req * kv_total
        unique, per_program = kv_total, kv_max
        notes = (f"grid (batch, heads, cdiv(q_len, {EXTEND_BLOCK_M})): each program walks its request's whole "
                 f"prefix, so the KV is read {per_req}x (once per head)")
    elif kernel == "triton_mla_decode":
        per_row = cdiv(w.heads, DECODE_BLOCK_H)
        programs = w.batch * w.q_len * per_row * DECODE_KV_SPLITS
        scratch = 2 * DECODE_KV_SPLITS * w.batch * w.q_len * w.heads * (w.v_dim + 1) * PARTIAL_BYTES
        moved = w.q_len * per_row * kv_total + scratch
        unique, per_program = kv_total + scratch, kv_max / DECODE_KV_SPLITS
        notes = (f"each of the q_len={w.q_len} draft rows re-reads the prefix ({w.q_len * per_row}x the KV), "
                 f"{DECODE_KV_SPLITS} splits per row, fp32 partials merged by a second kernel")
    elif kernel == "triton_mla_fast":
        cfg = FAST_DEFAULTS
        m_blocks = cdiv(w.q_len * w.heads, cfg["block_m"])
        split_len, splits = plan_splits(w.max_kv_len, w.batch, m_blocks, gpu.sm_count, cfg["block_n"],
                                        cfg["programs_per_sm"], FAST_MIN_SPLIT_LEN)
        programs = m_blocks * splits * w.batch
        scratch = 2 * splits * w.batch * w.q_len * w.heads * (w.v_dim + 1) * PARTIAL_BYTES
        moved = m_blocks * kv_total + scratch
        unique, per_program = kv_total + scratch, split_len * w.token_bytes
        notes = (f"default launch parameters; {m_blocks} M block(s) of {cfg['block_m']} rows share each KV tile (re-reads hit L2 when they "
                 f"run together); {splits} splits of {split_len} tokens; fp32 partials + LSE merged after")
    else:
        raise KeyError(f"no model for kernel {kernel!r}; models exist for triton_mla, triton_mla_decode, triton_mla_fast")
    bw = gpu.dram_ceiling().value * 1e9
    waves = programs / gpu.sm_count
    bandwidth_ms = moved / bw * 1e3
    serial_ms = cdiv(programs, gpu.sm_count) * per_program / (bw / gpu.sm_count) * 1e3
    return KernelModel(kernel=kernel, programs=programs, sm_count=gpu.sm_count, waves=waves, moved_bytes=moved,
                       unique_bytes=unique, per_program_bytes=per_program, time_ms=max(bandwidth_ms, serial_ms),
                       limited_by="bandwidth" if bandwidth_ms >= serial_ms else "serial program", notes=notes)


def share_gbps(gpu: GpuSpec) -> float:
    """One SM's fair share of DRAM bandwidth: the per-program rate the serial-program time assumes."""
    return gpu.dram_ceiling().value / gpu.sm_count


def assumption_note(model: KernelModel, gpu: GpuSpec) -> str:
    """What the model's time assumes, and how `analyze --project-to` differs, in one sentence."""
    if model.limited_by != "serial program":
        return ("assumes the bytes it moves stream at the full DRAM bandwidth; `roofline analyze RUN "
                "--project-to GPU` instead scales a measured time by the measured bound")
    return (f"assumes each program streams its {model.per_program_bytes / 1e6:.1f} MB at one SM's share of "
            f"DRAM bandwidth ({share_gbps(gpu):.1f} GB/s on {gpu.short_name}); a latency-bound program draws "
            "only what its own loads in flight allow, which tracks the SM clock, not the bandwidth, so "
            "`roofline analyze RUN --project-to GPU` (measured time x SM clock ratio) is the number to "
            "trust for a profiled kernel")


def compare_with_measurement(kernel: str, w: VerifyWorkload, source: GpuSpec, target: GpuSpec,
                             measured_ms: float, projected_ms: float | None) -> dict:
    """The kernel model against a profile of the same kernel and its projection: where they differ, why."""
    src, tgt = kernel_model(kernel, w, source), kernel_model(kernel, w, target)
    out = {"kernel": kernel, "model_ms_source": src.time_ms, "measured_ms_source": measured_ms,
           "model_ms_target": tgt.time_ms, "projected_ms_target": projected_ms, "limited_by": tgt.limited_by}
    text = (f"kernel model (`roofline model --kernel {kernel}`): {src.time_ms:.3f} ms on {source.short_name} "
            f"against {measured_ms:.3f} ms measured, {tgt.time_ms:.3f} ms on {target.short_name}"
            + (f" against {projected_ms:.3f} ms projected" if projected_ms is not None else ""))
    if src.limited_by == "serial program":
        drawn = src.per_program_bytes / (measured_ms * 1e-3) / 1e9
        text += (f". The model assumes each program streams at one SM's share of DRAM bandwidth "
                 f"({share_gbps(source):.1f} GB/s on {source.short_name}, {share_gbps(target):.1f} GB/s on "
                 f"{target.short_name}); measured, each program drew {drawn:.1f} GB/s: it is latency-bound, "
                 "so the projection scales the measured time by the SM clock instead, and the projection "
                 "is the number to trust")
    else:
        text += (". The model streams the bytes at full DRAM bandwidth; the projection keeps the measured "
                 "fraction of the roof")
    out["explanation"] = text
    return out
