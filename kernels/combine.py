"""Merge split-KV partial outputs by their log-sum-exp (shared by the split kernels).

Partials: `part_o` [splits, rows, v_dim] fp32 or bf16, each normalised within its split, and `part_lse`
[splits, rows] fp32 (natural log; -inf for a split that saw no visible token). Row r of the
output is sum_s exp(lse_s - max) * o_s / sum_s exp(lse_s - max).

On sm_90 and later the merge is launched as a programmatic dependent launch (PDL): its programs may
start while the split kernel finishes and wait (griddepcontrol.wait) for all of its writes before
they read a partial.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_wait

from kernels.launch_spec import LaunchSpec, combine_spec, device_facts, pdl_arch
from kernels.stamps import combine_stamp


@triton.jit
def _combine_kernel(PartO, PartLse, Out, total_rows, num_splits,
                    D: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_S: tl.constexpr, PDL: tl.constexpr = False,
                    Jobs=None, JOB_ROWS: tl.constexpr = 0, Stamps=None, STAMP: tl.constexpr = False):
    """One program per (row, BLOCK_D columns), one pass over the splits, BLOCK_S at a time: a step's
    LSEs and partials are loaded together (one round trip to memory when BLOCK_S >= splits).

    JOB_ROWS > 0 (the fast kernel's batch schedule): program_id(0) is row r of job j = program_id(0) //
    JOB_ROWS, a request that was cut (a row of Jobs: request, first slot, slots); its partials are rows
    (first + s) x JOB_ROWS + r, its output row request x JOB_ROWS + r. Requests that were not cut have no job.
    Stamps, STAMP: the in-kernel timeline's record of each program (kernels/stamps.py; off by default)."""
    combine_stamp(Stamps, 0, STAMP)
    row = tl.program_id(0)
    out_row = row
    if JOB_ROWS > 0:
        job = row // JOB_ROWS
        r = row % JOB_ROWS
        b = tl.load(Jobs + job * 3)
        row = tl.load(Jobs + job * 3 + 1) * JOB_ROWS + r
        num_splits = tl.load(Jobs + job * 3 + 2)
        total_rows = JOB_ROWS
        out_row = b * JOB_ROWS + r
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    offs_s = tl.arange(0, BLOCK_S)
    if PDL:
        gdc_wait()  # the split kernel's partials are all written
    combine_stamp(Stamps, 3, STAMP)
    m = tl.max(tl.full([BLOCK_S], float("-inf"), dtype=tl.float32), 0)
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    den = tl.sum(tl.zeros([BLOCK_S], dtype=tl.float32), 0)
    for s0 in range(0, num_splits, BLOCK_S):
        s = s0 + offs_s
        ok = s < num_splits
        lse = tl.load(PartLse + s * total_rows + row, mask=ok, other=float("-inf"))
        o = tl.load(PartO + (s.to(tl.int64) * total_rows + row)[:, None] * D + offs_d[None, :],
                    mask=ok[:, None], other=0.0).to(tl.float32)
        m_new = tl.maximum(m, tl.max(lse, 0))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        scale = tl.exp(m - m_safe)  # the steps before: 0 while every LSE was -inf
        w = tl.exp(lse - m_safe)
        acc = acc * scale + tl.sum(w[:, None] * o, 0)
        den = den * scale + tl.sum(w, 0)
        m = m_new
    out = acc / tl.where(den > 0, den, 1.0)
    tl.store(Out + out_row.to(tl.int64) * D + offs_d, out.to(Out.dtype.element_ty))
    combine_stamp(Stamps, 4, STAMP)


def combine_splits(part_o: torch.Tensor, part_lse: torch.Tensor, out: torch.Tensor,
                   spec: LaunchSpec | None = None, jobs: torch.Tensor | None = None,
                   stamps: torch.Tensor | None = None) -> torch.Tensor:
    """Write the merged rows into `out` (viewed as [rows, v_dim]); returns `out`.

    `spec`: the caller's kernels.launch spec of this launch, else combine_spec for these shapes. A PDL
    launch where the spec asks for it and the device has it (kernels.launch.pdl_arch). `jobs`: the batch
    schedule's job table, where the spec merges by job (JOB_ROWS; kernels.launch_spec.combine_jobs_spec).
    `stamps`: the in-kernel timeline's buffer (kernels/stamps.py), or None."""
    if spec is None:
        splits, rows, d = part_o.shape
        spec = combine_spec(splits, rows, d, pdl=True)
    rows, splits = spec.int_args["total_rows"], spec.int_args["num_splits"]
    pdl = bool(spec.constexprs.get("PDL")) and part_o.is_cuda and pdl_arch(device_facts(part_o.device)[2])
    extra = {"launch_pdl": True} if pdl else {}  # not an option of the interpreter's launcher
    if spec.constexprs.get("JOB_ROWS"):
        if jobs is None:
            raise ValueError("this combine merges the batch schedule's jobs: pass its job table")
        extra["Jobs"] = jobs
    if stamps is not None:
        extra.update(Stamps=stamps, STAMP=True)
    _combine_kernel[spec.grid](part_o, part_lse, out, rows, splits, **{**spec.constexprs, "PDL": pdl},
                               num_warps=spec.num_warps, num_stages=spec.num_stages, **extra)
    return out
