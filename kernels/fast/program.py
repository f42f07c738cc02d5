"""The start every Gluon split kernel's program makes before its warpgroups part ways (gl.warp_specialize): its
entry stamped (the in-kernel timeline) and the combine let in (programmatic dependent launch), its M block, split
or work item and request (_start_program), the shared memory its warpgroups share (_main_smem, _tail_smem), and
its tokens (_span). The kernels: kernels/fast/seesaw.py, ring.py; what else they share: kernels/fast/gluon.py.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from kernels.fast.gluon import _q_in_smem
from kernels.fast.timeline import stamp_head


@gluon.jit
def _launch_dependents():
    """Programmatic dependent launch: the next kernel in the stream (the combine) may start now; it
    waits for this grid's writes itself (griddepcontrol.wait). A no-op when it was not so launched."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // $0", "=r", [], dtype=gl.int32, is_pure=False,
                              pack=1)


@gluon.jit
def _start_program(Items, Stamps, BLOCK_N: gl.constexpr, ITEMS: gl.constexpr, STAMP_TILES: gl.constexpr):
    """A split kernel's start: the program's entry stamped (the in-kernel timeline, kernels/fast/timeline.py),
    the combine (a PDL launch) let be scheduled as SMs free up. (mb, split, b, item): this program's M block,
    split and request (grid (m_blocks, splits, batch)), item (). With ITEMS the grid is the batch schedule's
    (m_blocks, items): `split` is the item's index (where the uniform grid has its split: program_id(1) costs no
    register through the loop), b and item = (ctx_len, lo, hi, n_full, n_tiles) from its row of Items (request,
    lo, hi, ctx_len, slot; kernels.fast.common.plan_batch); the stores read the rest again (_item_out)."""
    stamp_head(Stamps, 0, 8, STAMP_TILES)
    _launch_dependents()
    mb, split, b = gl.program_id(0), gl.program_id(1), gl.program_id(2)
    item = ()
    if ITEMS:
        row = Items + split * 5
        b = gl.load(row)
        lo = gl.load(row + 1)
        hi = gl.load(row + 2)
        ctx_len = gl.load(row + 3)
        n_full, n_tiles = _tile_counts(ctx_len, lo, hi, BLOCK_N)
        item = (ctx_len, lo, hi, n_full, n_tiles)
    return mb, split, b, item


@gluon.jit
def _tile_counts(ctx_len, lo, hi, BLOCK_N: gl.constexpr):
    """(n_full, n_tiles) of tokens [lo, hi): the first n_full tiles are whole prefix tiles (no masks), the rest of
    the n_tiles a partial tile and the drafts."""
    n_full = gl.maximum(gl.minimum(hi, ctx_len) - lo, 0) // BLOCK_N
    return n_full, gl.cdiv(gl.maximum(hi - lo, 0), BLOCK_N)


@gluon.jit
def _span(KVLens, b, mb, split, item, split_len, stride_pt, total_rows, Q_LEN: gl.constexpr, BLOCK_N: gl.constexpr,
          ITEMS: gl.constexpr):
    """This program's place in the problem, as the partitions take it: (b, mb, split, total_rows, page_base, lo, hi,
    ctx_len, n_full, n_tiles), tokens [lo, hi) of request b, whose prefix is ctx_len long: with ITEMS the item's
    (`item`, from _start_program), else split `split`'s of the uniform grid (n_full, n_tiles: _tile_counts)."""
    if ITEMS:
        ctx_len, lo, hi, n_full, n_tiles = item
    else:
        kv_len = gl.load(KVLens + b)
        ctx_len = kv_len - Q_LEN
        lo = split * split_len
        hi = gl.minimum(lo + split_len, kv_len)
        n_full, n_tiles = _tile_counts(ctx_len, lo, hi, BLOCK_N)
    return b, mb, split, total_rows, b * stride_pt, lo, hi, ctx_len, n_full, n_tiles


@gluon.jit
def _main_smem(Q, KLat, KPe, b, mb, HEADS: gl.constexpr, Q_LEN: gl.constexpr, D_LATENT: gl.constexpr,
               D_ROPE: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, num_warps: gl.constexpr):
    """The main warpgroups' shared memory: (q_lat_s, q_pe_s) their block's query rows (_q_in_smem), (klat_s, kpe_s)
    two tile buffers of the latent and the rope dims ([2, BLOCK_N, dims], the descriptors' layouts), and two
    [BLOCK_M] fp32 row vectors (the kernel's row maxima and sums)."""
    q_lat_s, q_pe_s = _q_in_smem(Q, b, mb * BLOCK_M, BLOCK_M, Q_LEN * HEADS, D_LATENT, D_ROPE, num_warps)
    klat_s = gl.allocate_shared_memory(KLat.dtype, [2, BLOCK_N, D_LATENT], KLat.layout)
    kpe_s = gl.allocate_shared_memory(KPe.dtype, [2, BLOCK_N, D_ROPE], KPe.layout)
    vec_sl: gl.constexpr = gl.SwizzledSharedLayout(vec=1, per_phase=1, max_phase=1, order=[0])
    vec0 = gl.allocate_shared_memory(gl.float32, [BLOCK_M], vec_sl)
    vec1 = gl.allocate_shared_memory(gl.float32, [BLOCK_M], vec_sl)
    return q_lat_s, q_pe_s, klat_s, kpe_s, vec0, vec1


@gluon.jit
def _tail_smem(Q, q_lat_s, q_pe_s, TAIL_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """The tail warpgroup's shared memory: its query rows (latent part, rope part) and its P^T."""
    D_LATENT: gl.constexpr = q_lat_s.shape[2]
    D_ROPE: gl.constexpr = q_pe_s.shape[2]
    qt_lat_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, D_LATENT], q_lat_s.layout)
    qt_pe_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, D_ROPE], q_pe_s.layout)
    pt_s = gl.allocate_shared_memory(Q.dtype.element_ty, [1, TAIL_M, BLOCK_N], q_pe_s.layout)
    return qt_lat_s, qt_pe_s, pt_s
