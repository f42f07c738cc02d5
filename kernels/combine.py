"""Merge split-KV partial outputs by their log-sum-exp (shared by the split kernels).

Partials: `part_o` [splits, rows, v_dim] fp32 or bf16, each normalised within its split, and `part_lse`
[splits, rows] fp32 (natural log; -inf for a split that saw no visible token). Row r of the
output is sum_s exp(lse_s - max) * o_s / sum_s exp(lse_s - max).

Each program merges BLOCK_D columns of a few rows, every partial read once, 16-byte loads along D. It loads all
of its rows' splits as one [rows, splits, BLOCK_D] tile (the tile's splits a power of two, masked past the
request's), so its loads go out together and it waits for one round trip, not one per split; then the rows'
max and sum of exp(lse) once, and the weighted sum over the tile's split axis. A request with more splits than
the tile holds is merged a tile at a time, each rescaled by the running max. Two tiles per launch
(kernels.launch_spec.combine_tiles): the long one (SPLITS splits, ROWS rows) and, for requests with at most
SHORT slots beside longer ones, the short one (SHORT splits, SHORT_ROWS rows); each program picks by its slots.

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
def _tile(PartO, PartLse, base, stride, rows, rok, s0, n, offs_d, D: tl.constexpr, S: tl.constexpr):
    """Splits s0 .. s0 + S - 1 of `rows` (partial rows base + s x stride + row; masked past n and where not
    `rok`): their LSEs [R, S] and partials [R, S, BLOCK_D] as fp32, the partials' loads issued first. Rows
    before splits: the layout puts warps along the rows first, so a row's sum over its splits stays within a
    warp where the tile has rows enough."""
    s = s0 + tl.arange(0, S)
    ok = rok[:, None] & (s < n)[None, :]
    prow = base + s[None, :] * stride + rows[:, None]
    o = tl.load(PartO + (prow.to(tl.int64) * D)[:, :, None] + offs_d[None, None, :], mask=ok[:, :, None], other=0.0)
    lse = tl.load(PartLse + prow, mask=ok, other=float("-inf"))
    return lse, o.to(tl.float32)


@triton.jit
def _weights(lse):
    """Each row's max LSE over the tile's splits (-inf where all are) and its splits' exp(lse - max)."""
    m = tl.max(lse, 1)
    return m, tl.exp(lse - tl.where(m == float("-inf"), 0.0, m)[:, None])


@triton.jit
def _merge(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D: tl.constexpr, S: tl.constexpr,
           R: tl.constexpr):
    """Rows r0 .. r0 + nr - 1 (nr <= R) of n partials each, S splits a tile, into output rows out0 + r."""
    offs_r = tl.arange(0, R)
    rok = offs_r < nr
    rows = r0 + offs_r
    lse, o = _tile(PartO, PartLse, base, stride, rows, rok, 0, n, offs_d, D, S)
    m, p = _weights(lse)
    den = tl.sum(p, 1)
    acc = tl.sum(p[:, :, None] * o, 1)
    for s0 in range(S, n, S):  # more splits than a tile: each tile's sums rescaled to the running max
        lse, o = _tile(PartO, PartLse, base, stride, rows, rok, s0, n, offs_d, D, S)
        mt, p = _weights(lse)
        top = tl.maximum(m, mt)
        top_safe = tl.where(top == float("-inf"), 0.0, top)
        a, b = tl.exp(m - top_safe), tl.exp(mt - top_safe)  # 0 for a max of -inf
        den = den * a + tl.sum(p, 1) * b
        acc = acc * a[:, None] + tl.sum(p[:, :, None] * o, 1) * b[:, None]
        m = top
    out = acc / tl.where(den > 0, den, 1.0)[:, None]
    tl.store(Out + ((out0 + rows).to(tl.int64) * D)[:, None] + offs_d[None, :], out.to(Out.dtype.element_ty),
             mask=rok[:, None])


@triton.jit
def _combine_kernel(PartO, PartLse, Out, total_rows, num_splits,
                    D: tl.constexpr, BLOCK_D: tl.constexpr, SPLITS: tl.constexpr, ROWS: tl.constexpr,
                    SHORT: tl.constexpr, SHORT_ROWS: tl.constexpr,
                    PDL: tl.constexpr = False, Merges=None, JOB_ROWS: tl.constexpr = 0,
                    Stamps=None, STAMP: tl.constexpr = False):
    """Grid (programs, v_dim / BLOCK_D). Without JOB_ROWS: partials [num_splits, total_rows, D], program p
    merges the tile's rows p x rows .. (SHORT_ROWS rows where num_splits <= SHORT < SPLITS, else ROWS).
    JOB_ROWS > 0 (the fast kernel's batch schedule): program p's work is row p of Merges (request, first slot,
    slots, first row, rows; kernels.launch_spec.merge_table), the request's partials rows (first + s) x
    JOB_ROWS + r, its output rows request x JOB_ROWS + r. Stamps, STAMP: the in-kernel timeline's record of
    each program (kernels/stamps.py; off by default)."""
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
        per = ROWS
        if SHORT < SPLITS:
            per = tl.where(num_splits <= SHORT, SHORT_ROWS, ROWS)
        r0 = tl.program_id(0) * per
        nr = tl.minimum(per, total_rows - r0)
        base = 0
        stride = total_rows
        out0 = 0
    offs_d = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    if PDL:
        gdc_wait()  # the split kernel's partials are all written
    combine_stamp(Stamps, 3, STAMP)
    if SHORT < SPLITS:
        if n <= SHORT:
            _merge(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D, SHORT, SHORT_ROWS)
        else:
            _merge(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D, SPLITS, ROWS)
    else:
        _merge(PartO, PartLse, Out, base, stride, r0, nr, n, out0, offs_d, D, SPLITS, ROWS)
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
