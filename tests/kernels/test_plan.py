"""Launch planning in plain Python: split counts, row tiles, per-architecture configs, code paths."""

import dataclasses
import importlib
import subprocess
import sys

import pytest

from kernels.fast.common import (
    ARCH_FAST_CONFIGS,
    CONFIG_KEYS,
    CUTS,
    FAST_DEFAULTS,
    GLUON_TAIL_MIN_SPLIT_LEN,
    NO_MMA_STAGES,
    FastConfig,
    arch_fast_config,
    fast_config_status,
    gluon_tail_rows,
    plan_splits,
    resolve_config,
    split_rows,
)
from kernels.fast.paths import DEVICE_KERNELS, SPLIT_PATHS, plan_fast
from kernels.launch import fast_specs
from kernels.plan import code_path
from kernels.registry import KERNELS
from kernels.registry import code_path as registry_code_path
from kernels.spec import VerifyWorkload


def test_splits_never_overfill_the_last_wave():
    # 9 M blocks (64 heads x 9 rows / 64) on 132 SMs: 14 splits (126 programs), not 15 (135)
    split_len, splits = plan_splits(131072 + 9, 1, 9, 132, 64, 1.0, 256)
    assert splits * 9 <= 132 and split_len % 64 == 0 and split_len * splits >= 131081
    _, splits = plan_splits(131081, 1, 9, 132, 64, 2.0, 256)
    assert 9 * splits <= 264
    _, splits = plan_splits(131081, 1, 2, 148, 64, 1.0, 256)  # the split count follows the SM count
    assert splits == 74


def test_short_context_keeps_min_split_len():
    split_len, splits = plan_splits(100, 1, 2, 132, 64, 1.0, 256)
    assert (split_len, splits) == (256, 1)


@pytest.mark.parametrize(
    "m,block_m,tail_m,expected",
    [
        (72, 64, 16, (64, 16)),  # 9 x 8 heads: 64 + 16 rows, not 128
        (72, 64, 0, (64, 0)),
        (100, 64, 16, (64, 0)),  # 36 left over: no 16-row tail fits, plain M blocks
        (576, 64, 16, (64, 0)),
        (18, 16, 16, (16, 16)),
        (40, 64, 16, (64, 0)),  # one block holds all rows
    ],
)
def test_split_rows(m, block_m, tail_m, expected):
    assert split_rows(m, block_m, tail_m) == expected


def test_launch_config_per_architecture():
    h8_flat = arch_fast_config("sm_90", 8, 1)
    assert h8_flat["block_m"] == 32 and h8_flat["programs_per_sm"] == 2.0
    assert arch_fast_config("90", 64, 64)["programs_per_sm"] == 2.0
    sm120 = arch_fast_config("sm_120", 8, 64)
    assert sm120["block_n"] == 32  # half tiles: 99 KB of shared memory per block
    assert arch_fast_config("sm_100", 64, 64)["block_n"] == 32  # 64-token tiles need 356 KB there
    assert arch_fast_config("sm_75", 8, 1) == FAST_DEFAULTS
    assert arch_fast_config("interpreter", 8, 1) == FAST_DEFAULTS
    assert "untuned" in fast_config_status("sm_120") and "measured" in fast_config_status("sm_90")
    for arch, entry in ARCH_FAST_CONFIGS.items():  # every entry names only known launch parameters
        for e in entry["entries"]:
            assert set(e["config"]) <= set(FAST_DEFAULTS), (arch, e)


def test_code_paths_gluon_on_sm90_at_every_page_size():
    for page in (1, 16, 64, 128):
        for kv in (None, 8192 + 9, 131072 + 9):
            assert code_path("triton_mla_fast", "sm_90", page, max_kv_len=kv) == "gluon"
    for arch in ("sm_100", "sm_120", "sm_80", "interpreter", "cpu"):
        assert code_path("triton_mla_fast", arch, 64) == "portable"
    assert code_path("triton_mla", "sm_90", 64) == "portable"
    assert registry_code_path("triton_mla_fast_graph", "sm_90", 64) == "gluon"
    assert "triton_mla_fast_graph" in KERNELS and "gluon" in KERNELS["triton_mla_fast"].paths


def test_gluon_path_has_its_own_config_and_rejects_what_it_cannot_run():
    w = VerifyWorkload(ctx_len=131072, heads=8, page_size=1)
    split, _ = fast_specs(w, arch="sm_90", device_name="NVIDIA H200")  # the H200's tuned entry is the portable one's
    # 72 rows: one 64-row block plus the 8-row tail warpgroup: three 4-warp partitions, the ring schedule
    # (at page 1 too: its gathers complete their barriers as the copies land)
    assert split.name == "_gluon_ring_kernel" and split.num_warps == 12 and split.constexprs["TAIL_M"] == 8
    assert split.constexprs["ASYNC_GATHER"] is True
    pairs, _ = fast_specs(w, arch="sm_90", ring=False)  # the pairs-of-tiles schedule takes no async_gather
    assert pairs.name == "_gluon_seesaw_kernel" and "ASYNC_GATHER" not in pairs.constexprs
    announce, _ = fast_specs(w, arch="sm_90", async_gather=False)
    assert announce.name == "_gluon_ring_kernel" and announce.constexprs["ASYNC_GATHER"] is False
    with pytest.raises(ValueError, match="async_gather is an option of the ring"):
        fast_specs(w, arch="sm_90", ring=False, async_gather=True)
    assert {k: split.constexprs[k] for k in ("BLOCK_M", "BLOCK_N", "num_warps")} == dict(
        BLOCK_M=64, BLOCK_N=64, num_warps=4
    )
    assert split.signature["KLat"] == "tensordesc<bf16[64,128]>"  # tiles arrive in 128-dim slices
    with pytest.raises(ValueError, match=r"single-schedule kernel \(seesaw=False\) was retired"):
        fast_specs(w, arch="sm_90", path="gluon", seesaw=False)
    assert split.grid[0] == 1 and split.grid[0] * split.grid[1] <= 132  # one program per SM, one wave
    assert split.int_args["split_len"] == 1024  # 16 tiles of 64 tokens each
    portable, _ = fast_specs(w, arch="sm_90", device_name="NVIDIA H200", path="portable")
    assert portable.constexprs["BLOCK_M"] == 32  # the Triton kernels keep their tuned configs
    for bad in (
        dict(block_m=32),
        dict(tail_m=16),
        dict(num_warps=6),
        dict(block_n=32),
        dict(num_warps=16),
    ):
        with pytest.raises(ValueError, match="gluon path"):
            fast_specs(w, arch="sm_90", path="gluon", **bad)
    with pytest.raises(ValueError, match="q_len <= 64"):
        fast_specs(VerifyWorkload(ctx_len=4096, q_len=65), arch="sm_90")
    with pytest.raises(ValueError, match="seesaw is the gluon path's schedule"):
        fast_specs(w, arch="sm_90", path="portable", seesaw=True)
    # GLUON_CONFIG takes what it does not name from FAST_DEFAULTS: the measured config, whatever those become
    cfg = resolve_config("gluon", "sm_90", 8, 1, None, {})
    assert (cfg.block_m, cfg.block_n, cfg.num_warps, cfg.num_stages, cfg.programs_per_sm) == (64, 64, 8, 2, 1.0)
    assert cfg.seesaw and cfg.tail_m == 8 and cfg.ring and cfg.async_gather and cfg.partials == "fp32"


def test_plan_imports_without_torch():
    code = (
        "import sys, kernels.fast.common, kernels.registry; kernels.fast.common.arch_fast_config('sm_120', 8, 1); "
        "kernels.registry.code_path('triton_mla_fast', 'sm_90', 64); assert 'torch' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_gluon_tail_only_where_it_was_measured_to_pay():
    """The 8-row tail warpgroup: rows past whole 64-row blocks, at most 8; by default only when its
    plan (one M block fewer, so more splits) keeps >= GLUON_TAIL_MIN_SPLIT_LEN tokens per split."""
    assert [gluon_tail_rows(m, 64, 8) for m in (72, 136, 64, 32, 80, 576, 65)] == [8, 8, 0, 0, 0, 0, 8]
    assert gluon_tail_rows(72, 64, 0) == 0

    def plan(ctx_len, **kw):
        split = fast_specs(
            VerifyWorkload(ctx_len=ctx_len, **{k: v for k, v in kw.items() if k in ("q_len", "heads")}),
            arch="sm_90",
            **{k: v for k, v in kw.items() if k not in ("q_len", "heads")},
        )[0]
        return split.grid[0], split.constexprs["TAIL_M"], split.int_args["split_len"]

    assert plan(131072) == (1, 8, 1024) and GLUON_TAIL_MIN_SPLIT_LEN == 512
    assert plan(65536) == (1, 8, 512)
    assert plan(32768) == (2, 0, 512)  # the tail's plan would give 256-token splits: two padded blocks
    assert plan(8192) == (2, 0, 256)
    assert plan(8192, tail_m=8)[:2] == (1, 8)  # asked for: used at any length
    assert plan(131072, tail_m=0)[:2] == (2, 0)
    assert plan(131072, split_len=256)[:2] == (2, 0) and plan(131072, split_len=4096)[:2] == (1, 8)
    assert plan(131072, q_len=17, tail_m=8)[:2] == (2, 8)  # 136 = 2 x 64 + 8
    assert plan(131072, heads=64, ring=False)[:2] == (9, 0)  # 576 rows: whole blocks
    assert plan(131072, heads=64)[:2] == (9, 8)  # ... in the ring: TAIL_M sizes its loading warpgroup's buffers


def test_the_ring_runs_tails_and_whole_blocks_the_seesaw_padded_rows():
    """sm_90's default Gluon schedule: the ring where there is a tail warpgroup (72 rows, long splits);
    where the rows are 64-row blocks without a tail, whole (576 rows) or the last one padded (72 rows in short
    splits, 144 rows), the seesaw kernel's staggered schedule at pages that hold whole tiles; below them the ring
    for whole blocks (ring_whole, its third warpgroup only loading) and for a batch's padded ones (ring_padded), the
    seesaw's pairs of tiles for one request's padded blocks."""

    def spec(ctx_len, heads=8, page_size=64, **kw):
        return fast_specs(VerifyWorkload(ctx_len=ctx_len, heads=heads, page_size=page_size), arch="sm_90", **kw)[0]

    def kernel(ctx_len, heads=8, page_size=64, **kw):
        s = spec(ctx_len, heads, page_size, **kw)
        return s.name + (" stagger" if s.constexprs.get("STAGGER") else "")

    assert kernel(131072) == kernel(131072, heads=64, page_size=1) == kernel(8192, heads=64, page_size=16)
    assert kernel(131072) == kernel(131072, heads=64, stagger=False) == "_gluon_ring_kernel"
    assert kernel(131072, heads=64) == kernel(8192, heads=64) == kernel(131072, heads=64, page_size=128)
    assert kernel(131072, heads=64) == kernel(131072, heads=64, ring=False) == "_gluon_seesaw_kernel stagger"
    assert kernel(131072, heads=64, page_size=1, stagger=True) == "_gluon_seesaw_kernel stagger"  # asked for
    assert kernel(32768) == kernel(131072, heads=16) == "_gluon_seesaw_kernel stagger"  # padded blocks
    assert kernel(32768, page_size=16) == kernel(32768, stagger=False) == "_gluon_seesaw_kernel"
    assert kernel(131072, heads=64, ring=False, stagger=False) == "_gluon_seesaw_kernel"
    assert (
        kernel(32768, ring_padded=True) == "_gluon_ring_kernel"
        and not spec(32768, ring_padded=True).constexprs["TAIL_ROWS"]
    )  # asked for: the ring for padded blocks, its third warpgroup only loading
    ragged = VerifyWorkload(ctx_len=9000, batch=3, ctx_lens=(9000, 70, 20_000), heads=16, q_len=2, page_size=64)
    assert fast_specs(ragged, arch="sm_90")[0].constexprs["STAGGER"]  # batches at page 64: the stagger
    paged16 = dataclasses.replace(ragged, page_size=16)
    assert fast_specs(paged16, arch="sm_90")[0].name == "_gluon_ring_kernel"  # ... below it: ring_padded
    assert fast_specs(ragged, arch="sm_90", stagger=False)[0].name == "_gluon_ring_kernel"
    assert fast_specs(paged16, arch="sm_90", schedule="uniform")[0].name == "_gluon_seesaw_kernel"
    assert kernel(131072, heads=64, ring_whole=False, stagger=False) == "_gluon_seesaw_kernel"
    assert not plan_fast(VerifyWorkload(ctx_len=131072, heads=64), ring=False).config.ring_whole
    with pytest.raises(ValueError, match="stagger needs the rows in 64-row blocks"):
        spec(131072, stagger=True)
    cut = spec(131072, heads=64, no_mma=True)  # a removal experiment of the default: stagger has the switches
    assert cut.constexprs["STAGGER"] and cut.constexprs["NO_MMA"] and not cut.constexprs["NO_SOFTMAX"]
    assert kernel(131072, heads=64, no_mma=True) == "_gluon_seesaw_kernel stagger"


def test_combine_tiles_hold_every_split_of_their_rows():
    """A program's tile holds all of its rows' splits (a power of two, at most 256) within 8,192 values: at 128k,
    8 heads, 129 splits a row a program and 32 columns; at 64 heads, 14 splits 4 rows and 128 columns."""
    from kernels.launch import combine_spec, pdl_arch

    s = combine_spec(129, 72, 512)
    assert (s.constexprs["SPLITS"], s.constexprs["BLOCK_D"], s.constexprs["ROWS"], s.grid) == (256, 32, 1, (72, 16))
    s = combine_spec(14, 576, 512)
    assert (s.constexprs["SPLITS"], s.constexprs["ROWS"], s.grid, s.constexprs["PDL"]) == (16, 4, (144, 4), False)
    assert s.constexprs["SHORT"] == s.constexprs["SPLITS"] and s.num_warps == 4
    s = combine_spec(300, 8, 512)  # more splits than a tile: 256 at a time
    assert (s.constexprs["SPLITS"], s.grid) == (256, (8, 16))
    assert [pdl_arch(a) for a in ("sm_90", "sm_120", "sm_80", "interpreter")] == [True, True, False, False]


def test_combine_jobs_take_the_short_tile_beside_a_long_request():
    """skew16's merges: the long request's 98 slots in a tile of 128 (a row a program, 64 columns), the short
    ones' 2 in a tile of 2 (16 rows a program); merge_table lists the long rows first."""
    from kernels.launch_spec import combine_jobs_spec, merge_table

    jobs = [(0, 0, 98)] + [(b, 98 + 2 * (b - 1), 2) for b in range(1, 16)]
    s = combine_jobs_spec(jobs, 64, 512)
    c = s.constexprs
    assert (c["SPLITS"], c["ROWS"], c["SHORT"], c["SHORT_ROWS"], c["BLOCK_D"]) == (128, 1, 2, 16, 64)
    table = merge_table(jobs, s)
    assert s.grid == (len(table), 8) == (64 + 15 * 4, 8)
    assert table[0] == (0, 0, 98, 0, 1) and table[64] == (1, 98, 2, 0, 16)


def test_combine_shape_names_its_knobs():
    from kernels.launch_spec import CombineShape, combine_spec, reshaped_combine, with_out_dtype

    assert CombineShape.parse("default") == CombineShape() == CombineShape.parse(CombineShape().name)
    shape = CombineShape.parse("bd64w8")
    assert (shape.block_d, shape.warps, shape.rows) == (64, 8, CombineShape().rows)
    for bad in ("bd48", "x4", "bd64 w8"):
        with pytest.raises(ValueError):
            CombineShape.parse(bad)
    spec = with_out_dtype(combine_spec(14, 576, 512, part_o="*bf16", pdl=True), "fp16")
    other = reshaped_combine(spec, shape)
    assert other.num_warps == 8 and other.constexprs["BLOCK_D"] == 64 and other.constexprs["PDL"]
    assert (other.signature["Out"], other.signature["PartO"]) == ("*fp16", "*bf16")
    assert reshaped_combine(spec, CombineShape()) == spec


def test_fast_paths_name_their_kernels_and_the_registry_lists_them():
    """Each split path's kernel is in its own module with a `launch`; the registry's device kernels
    are the paths' (no list of names kept by hand); the config is frozen and knows every default."""
    pytest.importorskip("triton.experimental.gluon")
    for path in SPLIT_PATHS:
        module = importlib.import_module(path.module)
        assert module.__name__.startswith("kernels.fast.") and hasattr(module, path.kernel)
        assert callable(module.launch) and path.target == f"{path.module}:{path.kernel}"
    assert KERNELS["triton_mla_fast"].device_kernels == DEVICE_KERNELS
    assert KERNELS["triton_mla_fast_graph"].device_kernels == DEVICE_KERNELS
    assert DEVICE_KERNELS[-1] == "_combine_kernel" and len(set(DEVICE_KERNELS)) == 5
    assert set(FAST_DEFAULTS) <= set(CONFIG_KEYS)
    cfg = FastConfig(**FAST_DEFAULTS)
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.block_n = 32  # type: ignore[misc]


def test_ring_cuts_are_off_by_default():
    w = VerifyWorkload(ctx_len=131072, heads=8, page_size=1)
    ring, _ = fast_specs(w, arch="sm_90")
    assert [ring.constexprs[k] for k in ("NO_MMA", "NO_SOFTMAX", "NO_GATHER")] == [False, False, False]
    cut, _ = fast_specs(w, arch="sm_90", no_mma=True, no_gather=True)
    assert cut.name == "_gluon_ring_kernel" and (cut.constexprs["NO_MMA"], cut.constexprs["NO_GATHER"]) == (True, True)


@pytest.mark.parametrize(
    "heads, kw, kernel, cuts",
    [
        (64, dict(stagger=False), "_gluon_ring_kernel", CUTS),
        (64, dict(ring=False, stagger=False), "_gluon_seesaw_kernel", CUTS),
        (8, dict(ring=False), "_gluon_seesaw_kernel", CUTS),
        (8, dict(path="hopper"), "_hopper_split_kernel", CUTS),
        (8, dict(path="portable"), "_fast_split_kernel", ("no_mma", "no_softmax")),
    ],
)
def test_each_split_path_has_its_cuts_off_by_default(heads, kw, kernel, cuts):
    """Every split path but the gluon split kernel has removal experiments: off by default, each one
    reaches its kernel's constexpr; one it lacks is a clear error (the portable kernel's loads are its gathers)."""
    w = VerifyWorkload(ctx_len=131072, heads=heads, page_size=64)
    spec, _ = fast_specs(w, arch="sm_90", **kw)
    assert spec.name == kernel and {k: spec.constexprs[k.upper()] for k in cuts} == dict.fromkeys(cuts, False)
    for cut in cuts:
        spec, _ = fast_specs(w, arch="sm_90", **kw, **{cut: True})
        assert [k for k in CUTS if spec.constexprs.get(k.upper())] == [cut]
    for cut in set(CUTS) - set(cuts):
        with pytest.raises(ValueError, match=f"{kernel} .* has no removal experiment {cut}: .*gather"):
            fast_specs(w, arch="sm_90", **kw, **{cut: True})


@pytest.mark.parametrize("path", ["portable", "hopper"])
def test_the_triton_kernels_no_mma_needs_the_stages_it_pipelines_over(path):
    """Without tl.dot Triton pipelines the tile loads only in a loop that names its stages (NO_MMA_STAGES):
    a launch with other num_stages would time a different pipeline, so it is refused."""
    w = VerifyWorkload(ctx_len=131072, page_size=64)
    assert fast_specs(w, arch="sm_90", path=path, no_mma=True)[0].num_stages == NO_MMA_STAGES
    with pytest.raises(ValueError, match=f"no_mma in .* pipelines the tile loads over {NO_MMA_STAGES} stages"):
        fast_specs(w, arch="sm_90", path=path, no_mma=True, num_stages=3)
