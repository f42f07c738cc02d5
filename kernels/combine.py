"""Merge split-KV partial outputs by their log-sum-exp (shared by the split kernels).

Partials: `part_o` [splits, rows, v_dim] fp32 or bf16, each normalised within its split, and `part_lse`
[splits, rows] fp32 (natural log; -inf for a split that saw no visible token). Row r of the
output is sum_s exp(lse_s - max) * o_s / sum_s exp(lse_s - max).

Each program merges BLOCK_D columns of some rows, every partial read once, 16-byte loads along D, and
the sums kept in registers: each thread owns the same columns of every split it adds up, so no value
crosses threads until a row's last step. Two shapes of work, chosen per program by its splits:

- many splits (>= LONG, one row at a time): a [LONG, BLOCK_D] tile holds LONG splits of the row, each
  tile row its own running max, sum and output (the tile's rows spread over the warps); after the last
  step the LONG running states are merged once, across the warps;
- fewer: a [ROWS, BLOCK_D] tile holds ROWS rows, and each step adds 4 splits (4 tiles loaded before
  any is used), each row's running max, sum and output in the threads that hold it.

On sm_90 and later the merge is launched as a programmatic dependent launch (PDL): its programs may
start while the split kernel finishes and wait (griddepcontrol.wait) for all of its writes before
they read a partial.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_wait

from kernels.launch_spec import MERGE_FIELDS, LaunchSpec, combine_spec, device_facts, pdl_arch
from kernels.stamps import combine_stamp


@triton.jit
def _split_tile(PartO, PartLse, prow, ok, offs_d, D: tl.constexpr):
    """The LSEs and partial rows `prow` (a tile of them; masked off where not `ok`), the partials as fp32."""
    lse = tl.load(PartLse + prow, mask=ok, other=float("-inf"))
    o = tl.load(PartO + (prow.to(tl.int64) * D)[:, None] + offs_d[None, :], mask=ok[:, None], other=0.0)
    return lse, o.to(tl.float32)


@triton.jit
def _add(m, den, acc, lse, o):
    """One more partial per running state (elementwise: each state its own max, sum and output)."""
    m_new = tl.maximum(m, lse)
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
    scale = tl.exp(m - m_safe)  # 0 while every LSE so far was -inf
    w = tl.exp(lse - m_safe)
    return m_new, den * scale + w, acc * scale[:, None] + w[:, None] * o


@triton.jit
def _first(lse, o):
    """The running states of a first partial each (started from it: their layout is the loads' own, none
    converted in the loop)."""
    w = tl.where(lse == float("-inf"), 0.0, 1.0)
    return lse, w, w[:, None] * o


@triton.jit
def _merge_long(PartO, PartLse, Out, base, stride, r, n, out_row, offs_d, D: tl.constexpr, BLOCK_D: tl.constexpr,
                LONG: tl.constexpr):
    """Row r's n partials (rows base + s x stride + r), LONG at a time, into output row out_row."""
    offs_s = tl.arange(0, LONG)
    lse, o = _split_tile(PartO, PartLse, base + offs_s * stride + r, offs_s < n, offs_d, D)
    m, den, acc = _first(lse, o)
    for s0 in range(LONG, n, LONG):
        s = s0 + offs_s
        lse, o = _split_tile(PartO, PartLse, base + s * stride + r, s < n, offs_d, D)
        m, den, acc = _add(m, den, acc, lse, o)
    top = tl.max(m, 0)
    f = tl.exp(m - tl.where(top == float("-inf"), 0.0, top))
    total = tl.sum(den * f, 0)
    out = tl.sum(acc * f[:, None], 0) / tl.where(total > 0, total, 1.0)
    tl.store(Out + out_row.to(tl.int64) * D + offs_d, out.to(Out.dtype.element_ty))


@triton.jit
def _merge_rows(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D: tl.constexpr,
                BLOCK_D: tl.constexpr, ROWS: tl.constexpr):
    """Rows r0 .. r0 + nr - 1 (n partials each), ROWS at a time, 4 splits a step, into rows out0 + r."""
    offs_r = tl.arange(0, ROWS)
    for rt in range(0, nr, ROWS):
        r = r0 + rt + offs_r
        rok = rt + offs_r < nr
        l0, o0 = _split_tile(PartO, PartLse, base + r, rok, offs_d, D)
        l1, o1 = _split_tile(PartO, PartLse, base + stride + r, rok & (1 < n), offs_d, D)
        l2, o2 = _split_tile(PartO, PartLse, base + 2 * stride + r, rok & (2 < n), offs_d, D)
        l3, o3 = _split_tile(PartO, PartLse, base + 3 * stride + r, rok & (3 < n), offs_d, D)
        m, den, acc = _first(l0, o0)
        m, den, acc = _add(m, den, acc, l1, o1)
        m, den, acc = _add(m, den, acc, l2, o2)
        m, den, acc = _add(m, den, acc, l3, o3)
        for s in range(4, n, 4):  # the 4 tiles loaded before any is added
            l0, o0 = _split_tile(PartO, PartLse, base + s * stride + r, rok & (s < n), offs_d, D)
            l1, o1 = _split_tile(PartO, PartLse, base + (s + 1) * stride + r, rok & (s + 1 < n), offs_d, D)
            l2, o2 = _split_tile(PartO, PartLse, base + (s + 2) * stride + r, rok & (s + 2 < n), offs_d, D)
            l3, o3 = _split_tile(PartO, PartLse, base + (s + 3) * stride + r, rok & (s + 3 < n), offs_d, D)
            m, den, acc = _add(m, den, acc, l0, o0)
            m, den, acc = _add(m, den, acc, l1, o1)
            m, den, acc = _add(m, den, acc, l2, o2)
            m, den, acc = _add(m, den, acc, l3, o3)
        out = acc / tl.where(den > 0, den, 1.0)[:, None]
        tl.store(Out + ((out0 + r).to(tl.int64) * D)[:, None] + offs_d[None, :], out.to(Out.dtype.element_ty),
                 mask=rok[:, None])


@triton.jit
def _combine_kernel(PartO, PartLse, Out, total_rows, num_splits,
                    D: tl.constexpr, BLOCK_D: tl.constexpr, LONG: tl.constexpr, ROWS: tl.constexpr,
                    PDL: tl.constexpr = False, Merges=None, JOB_ROWS: tl.constexpr = 0,
                    Stamps=None, STAMP: tl.constexpr = False):
    """Grid (programs, v_dim / BLOCK_D). Without JOB_ROWS: partials [num_splits, total_rows, D], program p
    merges rows p x ROWS .. (one row where num_splits >= LONG). JOB_ROWS > 0 (the fast kernel's batch
    schedule): program p's work is row p of Merges (request, first slot, slots, first row, rows;
    kernels.launch_spec.merge_table), the request's partials rows (first + s) x JOB_ROWS + r, its output rows
    request x JOB_ROWS + r. Stamps, STAMP: the in-kernel timeline's record of each program (kernels/stamps.py;
    off by default)."""
    combine_stamp(Stamps, 0, STAMP)
    if JOB_ROWS > 0:
        job = Merges + tl.program_id(0) * 5
        b = tl.load(job)
        base = tl.load(job + 1) * JOB_ROWS
        n = tl.load(job + 2)
        r0 = tl.load(job + 3)
        nr = tl.load(job + 4)
        stride = JOB_ROWS
        out0 = b * JOB_ROWS
    else:
        n = num_splits
        per = ROWS if num_splits < LONG else 1
        r0 = tl.program_id(0) * per
        nr = tl.minimum(per, total_rows - r0)
        base = 0
        stride = total_rows
        out0 = 0
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    if PDL:
        gdc_wait()  # the split kernel's partials are all written
    combine_stamp(Stamps, 3, STAMP)
    if n >= LONG:
        for i in range(nr):
            _merge_long(PartO, PartLse, Out, base, stride, r0 + i, n, out0 + r0 + i, offs_d, D, BLOCK_D, LONG)
    else:
        _merge_rows(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D, BLOCK_D, ROWS)
    combine_stamp(Stamps, 4, STAMP)


def combine_splits(part_o: torch.Tensor, part_lse: torch.Tensor, out: torch.Tensor,
                   spec: LaunchSpec | None = None, jobs: torch.Tensor | None = None,
                   stamps: torch.Tensor | None = None) -> torch.Tensor:
    """Write the merged rows into `out` (viewed as [rows, v_dim]); returns `out`.

    `spec`: the caller's kernels.launch spec of this launch, else combine_spec for these shapes. A PDL
    launch where the spec asks for it and the device has it (kernels.launch.pdl_arch). `jobs`: the batch
    schedule's merge table (kernels.launch_spec.merge_table, MERGE_FIELDS a row), where the spec merges by job
    (JOB_ROWS; kernels.launch_spec.combine_jobs_spec). `stamps`: the in-kernel timeline's buffer
    (kernels/stamps.py), or None."""
    if spec is None:
        splits, rows, d = part_o.shape
        spec = combine_spec(splits, rows, d, pdl=True)
    rows, splits = spec.int_args["total_rows"], spec.int_args["num_splits"]
    pdl = bool(spec.constexprs.get("PDL")) and part_o.is_cuda and pdl_arch(device_facts(part_o.device)[2])
    extra = {"launch_pdl": True} if pdl else {}  # not an option of the interpreter's launcher
    if spec.constexprs.get("JOB_ROWS"):
        if jobs is None or jobs.shape != (spec.grid[0], len(MERGE_FIELDS)):
            raise ValueError(f"this combine merges the batch schedule's jobs: pass its merge table ({spec.grid[0]} "
                             f"rows of {', '.join(MERGE_FIELDS)})")
        extra["Merges"] = jobs
    if stamps is not None:
        extra.update(Stamps=stamps, STAMP=True)
    _combine_kernel[spec.grid](part_o, part_lse, out, rows, splits, **{**spec.constexprs, "PDL": pdl},
                               num_warps=spec.num_warps, num_stages=spec.num_stages, **extra)
    return out
