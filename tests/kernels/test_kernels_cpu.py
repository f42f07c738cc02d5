"""Kernels against torch_ref through Triton's interpreter (fp16: its bf16 dots are wrong)."""

import dataclasses

import pytest
import torch

from kernels.check import check_kernel, finite_rel_err, rel_err
from kernels.inputs import ancestor_mask, build_inputs, draft_tree_parents
from kernels.reference import lse_merge, torch_ref
from kernels.spec import VerifyWorkload

CASES = [
    dict(ctx_len=70, page_size=1),  # not a multiple of BLOCK_N (64)
    dict(ctx_len=128, page_size=16, tree_mask="chain"),
    dict(ctx_len=100, page_size=16, batch=2),
    dict(ctx_len=1, page_size=1, q_len=3),
    dict(ctx_len=50, batch=3, ctx_lens=(33, 150, 64), page_size=16, q_len=5, heads=2),
    dict(ctx_len=200, page_size=64, q_len=9, heads=4, seed=3),
]


KERNELS = ["triton_mla", "triton_mla_decode", "triton_mla_fast"]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_kernel_matches_reference(kernel, case):
    result = check_kernel(kernel, VerifyWorkload(**case), device="cpu", dtype="fp16")
    assert result.unwritten == 0
    assert result.ok, result


@pytest.mark.parametrize(
    "kw",
    [
        dict(split_len=16, block_n=16, block_m=16),  # draft tokens straddle splits
        dict(split_len=32, block_n=16, block_m=32, num_warps=4),
    ],
)
def test_fast_kernel_many_splits(kw):
    # q_len 20, ctx 64, splits of 16: the last split holds only draft tokens 16..19, which
    # most rows cannot see (an empty split: lse = -inf must not poison the merge)
    w = VerifyWorkload(ctx_len=64, q_len=20, heads=2, page_size=16, seed=5)
    result = check_kernel("triton_mla_fast", w, device="cpu", dtype="fp16", **kw)
    assert result.ok, result


# Each path of the fast kernel on its own options and cases: (seed, options, {id: case}).
FAST_PATHS = {
    # a tail row tile (no padded M block), bf16 partials, evict-first
    "portable": (
        4,
        [
            dict(block_m=16, tail_m=16),  # 18 rows = 16 + a 16-row tail tile in the same program
            dict(block_m=16, tail_m=16, partials="input", evict_first=True, split_len=32, block_n=16),
            dict(block_m=32, tail_m=0, partials="input"),
        ],
        {
            "p1": dict(ctx_len=70, page_size=1),
            "p16-chain-b2": dict(ctx_len=100, page_size=16, batch=2, tree_mask="chain"),
            "p64-ragged": dict(ctx_len=50, batch=3, ctx_lens=(33, 150, 64), page_size=64),
        },
    ),
    # the Hopper path's kernel (TMA tensor descriptors) runs in the interpreter too
    "hopper": (
        2,
        [dict(block_m=16, block_n=32), dict(block_m=16, block_n=16, tail_m=16, split_len=32)],
        {
            "p64": dict(ctx_len=200, page_size=64),
            "p64-chain-b2": dict(ctx_len=70, page_size=64, batch=2, tree_mask="chain"),
            "p32-ragged": dict(ctx_len=50, batch=3, ctx_lens=(33, 150, 64), page_size=32),
        },
    ),
}


@pytest.mark.parametrize(
    "path, seed, kw, case",
    [
        pytest.param(path, seed, kw, case, id=f"{path}-{name}-kw{i}")
        for path, (seed, kws, cases) in FAST_PATHS.items()
        for name, case in cases.items()
        for i, kw in enumerate(kws)
    ],
)
def test_fast_kernel_paths(path, seed, kw, case):
    """The portable and Hopper paths, each with its own options (FAST_PATHS), against the reference."""
    w = VerifyWorkload(q_len=9, heads=2, seed=seed, **case)
    result = check_kernel("triton_mla_fast", w, device="cpu", dtype="fp16", path=path, **kw)
    assert result.ok, result


# The batch schedule (the default; kernels.fast.common.plan_batch) on ragged batches: requests cut into several
# work items (merged by the combine's jobs) beside requests that are one item (written straight to the output),
# draft tokens straddling items. (workload fields, launch options); heads 2.
SCHEDULE_CASES = {
    # prefixes of 1 token, of exactly one page, not a multiple of the page, a long one
    "p64-tree": (dict(ctx_lens=(1, 64, 150, 700), page_size=64, q_len=5), dict(block_m=16, block_n=16, split_len=64)),
    # page 1 (one page: 1 token), the schedule's own cut (min_split_len 16: pieces of one tile)
    "p1-chain": (
        dict(ctx_lens=(1, 2, 300), page_size=1, q_len=4, tree_mask="chain"),
        dict(block_m=16, block_n=16, min_split_len=16),
    ),
    # a skewed mix: one long request among short ones; 18 rows = a 16-row block and a 16-row tail tile
    "p16-skewed": (
        dict(ctx_lens=(600, 3, 3, 17, 3), page_size=16, q_len=9),
        dict(block_m=16, block_n=16, tail_m=16, min_split_len=32),
    ),
    # the Triton TMA kernel, whole-page tiles
    "hopper-p32-chain": (
        dict(ctx_lens=(32, 5, 130), page_size=32, q_len=9, tree_mask="chain"),
        dict(path="hopper", block_m=16, block_n=32, split_len=32),
    ),
    # the schedule before it, kept selectable: grid (m_blocks, splits, batch) from the longest request
    "uniform-p16": (
        dict(ctx_lens=(33, 150, 64), page_size=16, q_len=5),
        dict(schedule="uniform", block_m=16, block_n=16, split_len=32),
    ),
}


@pytest.mark.parametrize("name", SCHEDULE_CASES)
def test_fast_kernel_batch_schedule(name):
    from kernels.fast.paths import plan_fast

    case, kw = SCHEDULE_CASES[name]
    w = VerifyWorkload(ctx_len=case["ctx_lens"][0], batch=len(case["ctx_lens"]), heads=2, seed=9, **case)
    plan = plan_fast(w, "sm_90", 132, **{"path": "portable", **kw})
    if plan.schedule is not None:  # some requests cut (merged), some not (written directly)
        assert plan.schedule.jobs and any(it[4] < 0 for it in plan.schedule.items)
    result = check_kernel("triton_mla_fast", w, device="cpu", dtype="fp16", **kw)
    assert result.unwritten == 0 and result.ok, result


def test_fast_kernel_no_combine_leaves_only_the_merged_rows_out():
    """no_combine (a removal experiment of the step): no merge launch; under the batch schedule the requests with
    one item are still written (as the reference), those that were cut are not; the uniform schedule writes none."""
    from kernels.fast.paths import plan_fast
    from kernels.fast.run import triton_mla_fast
    from kernels.inputs import build_inputs
    from kernels.reference import torch_ref

    case, kw = SCHEDULE_CASES["p64-tree"]
    w = VerifyWorkload(ctx_len=case["ctx_lens"][0], batch=len(case["ctx_lens"]), heads=2, seed=9, **case)
    kw = {"path": "portable", **kw}
    plan = plan_fast(w, "sm_90", 132, no_combine=True, **kw)
    assert plan.combine is None and plan_fast(w, "sm_90", 132, **kw).combine is not None
    inp = build_inputs(w, device="cpu", dtype="fp16")
    out = triton_mla_fast(inp, no_combine=True, **kw).float().view(w.batch, -1)
    ref = torch_ref(inp).float().view(w.batch, -1)
    cut = {b for b, _, _ in plan.schedule.jobs}
    assert cut and len(cut) < w.batch
    for b in range(w.batch):
        if b not in cut:
            assert torch.allclose(out[b], ref[b], atol=2e-2, rtol=2e-2)
    assert plan_fast(w, "sm_90", 132, no_combine=True, schedule="uniform", **kw).combine is None


# The default shape, and knobs that take the other code: a tile too small for the longest request (its splits
# merged a tile at a time), one column block per row (bd512), narrow columns and 2 warps, 8 warps and a short
# tile for the one-slot request only (k1).
COMBINE_SHAPES = ("default", "s8r2t512bd32", "bd512", "bd32w2", "k1w8")


@pytest.mark.parametrize("shape", COMBINE_SHAPES)
def test_combine_merges_the_batch_schedules_jobs(shape):
    """The combine over jobs: request b's rows merged from its own slots only (rows slot x M + r), written to
    rows b x M + r; the rows of a request with no job (written by its item) left alone. Requests of 40, 3 and 1
    slots: the short ones take the short tile, more rows a program (merge_table, the longest first)."""
    from kernels.combine import combine_splits
    from kernels.launch_spec import MERGE_FIELDS, CombineShape, combine_jobs_spec, merge_table

    g = torch.Generator().manual_seed(3)
    m, d, slots = 18, 64, 44
    part_o = torch.randn(slots * m, d, generator=g)
    part_lse = torch.randn(slots * m, generator=g) * 4
    part_lse[4 * m + 1] = float("-inf")  # a slot that saw nothing of row 1
    part_lse[torch.arange(8) * m + 2] = float("-inf")  # the first 8 slots saw nothing of row 2
    jobs = ((2, 0, 40), (0, 40, 3), (3, 43, 1))  # request 2: slots 0-39; request 0: 40-42; request 3: 43
    spec = combine_jobs_spec(jobs, m, d, pdl=True, shape=CombineShape.parse(shape))
    table = merge_table(jobs, spec)
    assert len(table) == spec.grid[0] and [t[2] for t in table] == sorted((t[2] for t in table), reverse=True)
    assert all(sum(t[4] for t in table if t[0] == b) == m for b, _, _ in jobs)  # every row of a job, once
    if shape == "default":
        assert spec.constexprs["SHORT"] == 4 and table[-1][3:] == (16, 2)  # 16 rows a program, the last 2
    out = torch.full((4 * m, d), 7.0, dtype=torch.float16)  # request 1 has no job: its rows stay
    merges = torch.tensor(table, dtype=torch.int32).reshape(-1, len(MERGE_FIELDS))
    combine_splits(part_o, part_lse, out, spec=spec, jobs=merges)
    for b, first, n in jobs:
        lse = part_lse.view(slots, m)[first : first + n]
        want = lse_merge(part_o.view(slots, m, d)[first : first + n], lse)
        assert torch.allclose(out[b * m : (b + 1) * m].float(), want, atol=2e-3, rtol=2e-3)
    assert torch.all(out[m : 2 * m] == 7.0)


def test_fast_kernel_hopper_path_needs_whole_pages_per_tile():
    with pytest.raises(ValueError, match="multiple of block_n"):
        check_kernel(
            "triton_mla_fast",
            VerifyWorkload(ctx_len=40, page_size=16),
            device="cpu",
            dtype="fp16",
            path="hopper",
            block_n=32,
        )


def test_decode_kernel_more_splits_than_tokens():
    w = VerifyWorkload(ctx_len=5, q_len=4, heads=3, page_size=1, seed=6)
    result = check_kernel("triton_mla_decode", w, device="cpu", dtype="fp16", kv_splits=16)
    assert result.ok, result


@pytest.mark.parametrize(
    "kernel,kw,match",
    [
        ("triton_mla_fast", dict(page_size=3), "power-of-two page_size"),
        ("triton_mla_decode", dict(), "kv_splits must be >= 1"),
    ],
)
def test_bad_arguments_are_clear_errors(kernel, kw, match):
    extra = {"kv_splits": 0} if kernel == "triton_mla_decode" else {}
    with pytest.raises(ValueError, match=match):
        check_kernel(kernel, VerifyWorkload(ctx_len=40, **kw), device="cpu", dtype="fp16", **extra)


def test_fast_kernel_rejects_unknown_launch_parameters():
    with pytest.raises(TypeError, match="block_q"):
        check_kernel("triton_mla_fast", VerifyWorkload(ctx_len=40), device="cpu", dtype="fp16", block_q=4)


def test_inputs_are_random_paged_and_shuffled():
    inp = build_inputs(VerifyWorkload(ctx_len=300, page_size=16, batch=2), dtype="fp16")
    assert inp.kv_cache.abs().min() >= 0 and inp.kv_cache.std() > 0.5  # random, not zeros
    pages = inp.page_table[0, :20]
    assert not torch.equal(pages, torch.sort(pages).values)  # pages not in order
    assert len(set(inp.page_table[:, :19].flatten().tolist())) == 38  # no page shared


def test_tree_masks():
    gen = torch.Generator().manual_seed(0)
    chain = ancestor_mask(draft_tree_parents(5, "chain", gen))
    assert torch.equal(chain, torch.tril(torch.ones(5, 5, dtype=torch.bool)))
    parents = draft_tree_parents(9, "tree", gen)
    tree = ancestor_mask(parents)
    assert tree.diagonal().all() and tree[:, 0].all()  # itself, and the root
    assert not tree.triu(1).any()  # never a later token
    eye = torch.eye(9, dtype=torch.bool)
    for i, p in enumerate(parents[1:], start=1):
        assert torch.equal(tree[i], tree[p] | eye[i])  # a token sees what its parent sees, plus itself


def test_mask_changes_the_answer():
    """The reference honours the mask: tree and chain give different outputs on the same data."""
    tree = build_inputs(VerifyWorkload(ctx_len=20, q_len=6, tree_mask="tree", seed=1), dtype="fp32")
    chain = build_inputs(VerifyWorkload(ctx_len=20, q_len=6, tree_mask="chain", seed=1), dtype="fp32")
    assert not torch.equal(tree.tree_mask, chain.tree_mask)
    assert not torch.allclose(torch_ref(tree), torch_ref(chain))


def test_check_catches_a_wrong_kernel(monkeypatch):
    """A kernel that ignores the draft block must fail the check."""
    import kernels.reference as ref

    def prefix_only(inp):
        diagonal = torch.eye(inp.workload.q_len, dtype=torch.int8).expand_as(inp.tree_mask)
        return ref.torch_ref(dataclasses.replace(inp, tree_mask=diagonal.contiguous()))

    from kernels import registry

    monkeypatch.setitem(
        registry.KERNELS, "broken", registry.KernelInfo("broken", "x", "tests.test_kernels_cpu:_unused")
    )
    monkeypatch.setattr(registry.KernelInfo, "load", lambda self: prefix_only)
    result = check_kernel("broken", VerifyWorkload(ctx_len=10, q_len=6, seed=2), device="cpu", dtype="fp32")
    assert not result.ok


def test_gluon_path_is_refused_in_the_interpreter_and_the_default_falls_back():
    """The Gluon kernel has no interpreter: asking for it on the CPU says so; the default path on
    the CPU (sized as an sm_90 part) is the portable kernel, not a silent failure."""
    from kernels.fast.run import gluon_runs_on, triton_mla_fast

    inp = build_inputs(VerifyWorkload(ctx_len=40, page_size=16), device="cpu", dtype="fp16")
    assert not gluon_runs_on(torch.device("cpu"))
    with pytest.raises(ValueError, match="gluon path needs an sm_90 GPU"):
        triton_mla_fast(inp, path="gluon")


def test_relative_error_and_its_finite_form():
    """The searches' check: ||out - ref|| / ||ref||, and inf (never close) for a NaN or inf output."""
    ref = torch.tensor([3.0, 4.0], dtype=torch.bfloat16)
    assert rel_err(torch.tensor([3.0, 3.0]), ref) == pytest.approx(0.2)
    assert finite_rel_err(torch.tensor([3.0, 3.0]), ref) == pytest.approx(0.2)
    assert finite_rel_err(torch.tensor([3.0, float("nan")]), ref) == float("inf")
    assert finite_rel_err(torch.tensor([float("inf"), 4.0]), ref) == float("inf")


@pytest.mark.parametrize(
    "splits,rows,shape",
    [(7, 37, "default"), (129, 6, "default"), (1, 5, "default"), (40, 9, "s8r2t512bd32"), (12, 20, "bd512")],
)
def test_combine_merges_splits_by_lse(splits, rows, shape):
    """The merge against torch on random partials, with whole splits and whole rows at -inf (a split that saw
    nothing; a row no split saw), a row whose first splits saw nothing, and the largest LSE in the last split:
    one tile of all the splits (a row a program at 129, a part-full last group of rows at 7), one split, and
    (s8) a tile of 8 splits at a time, each rescaled by the running max."""
    from kernels.combine import combine_splits
    from kernels.launch import combine_spec
    from kernels.launch_spec import CombineShape, combine_tiles

    g = torch.Generator().manual_seed(splits)
    d = 64
    part_o = torch.randn(splits, rows, d, generator=g)
    part_lse = torch.randn(splits, rows, generator=g) * 8
    if splits > 3:
        part_lse[3] = float("-inf")  # a split with no visible token
    part_lse[:, 2] = float("-inf")  # a row no split saw
    part_lse[: splits - 1, 4] = float("-inf")  # a row only its last split saw
    part_lse[splits - 1, 0] = 40.0  # the largest LSE in the last split: the earlier tiles are rescaled
    out = torch.empty(rows, d, dtype=torch.float16)
    spec = combine_spec(splits, rows, d, pdl=True, shape=CombineShape.parse(shape))  # PDL dropped off the GPU
    tiles = combine_tiles([splits], d, CombineShape.parse(shape))
    assert spec.grid == (-(-rows // tiles["ROWS"]), d // tiles["BLOCK_D"])
    combine_splits(part_o, part_lse, out, spec=spec)
    assert torch.allclose(out.float(), lse_merge(part_o, part_lse), atol=2e-3, rtol=2e-3)
    assert torch.all(out[2] == 0)


CUT_SETS = (dict(no_mma=True), dict(no_softmax=True), dict(no_mma=True, no_softmax=True))


@pytest.mark.parametrize(
    "kernel, kw, cuts",
    [
        ("triton_mla_fast", dict(path="portable", block_m=16, tail_m=16), CUT_SETS),  # a tail row tile too
        ("triton_mla", {}, CUT_SETS),
        ("triton_mla_fast", dict(path="hopper", block_n=16), (dict(no_gather=True),)),  # the draft tile's gathers
    ],
    ids=["portable", "triton_mla", "hopper-no-gather"],
)
def test_removal_experiments_run_and_cut(kernel, kw, cuts):
    """Switches off: the kernel's own answer. Each removal experiment on (roofline/pipelines/removal_experiment.py): the
    kernel runs, every output is finite, and the answer is wrong (the cut really leaves work out)."""
    w = VerifyWorkload(ctx_len=40, page_size=16, q_len=3, heads=6, seed=7)
    assert check_kernel(kernel, w, device="cpu", dtype="fp16", **kw).ok
    for cut in cuts:
        result = check_kernel(kernel, w, device="cpu", dtype="fp16", **kw, **cut)
        assert result.unwritten == 0 and not result.ok, (cut, result)


def test_check_command_takes_a_ragged_batch():
    """`roofline check --lens`: a ragged batch (lengths not a multiple of the page, one shorter than a page)
    against the reference, through the same options every command shares."""
    from click.testing import CliRunner

    from roofline.cli import main

    r = CliRunner().invoke(
        main,
        ["check", "--kernel", "triton_mla_fast", "--lens", "40,17,100", "--heads", "2", "--q-len", "2"]
        + ["--page-size", "16", "--device", "cpu"],
    )
    assert r.exit_code == 0, r.output
    assert "ctx_len=40,17,100 batch=3" in r.output and " ok" in r.output
