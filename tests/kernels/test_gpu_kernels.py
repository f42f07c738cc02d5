"""Full-size kernel checks on the GPU (bf16). Skipped without one; run on the H200:
ROOFLINE_GPU_TESTS=1 python -m pytest -m gpu tests/kernels/test_gpu_kernels.py
"""

import pytest

from kernels.spec import VerifyWorkload

pytestmark = pytest.mark.gpu

CASES = [
    dict(ctx_len=128 * 1024, page_size=1, tree_mask="tree"),
    dict(ctx_len=128 * 1024, page_size=64, tree_mask="tree"),
    dict(ctx_len=128 * 1024, page_size=64, tree_mask="chain"),
    dict(ctx_len=1000, ctx_lens=(4093, 70001, 128 * 1024), batch=3, page_size=16, tree_mask="tree"),
]


@pytest.mark.parametrize("kernel", ["triton_mla", "triton_mla_decode", "triton_mla_fast", "triton_mla_fast_graph"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"p{c['page_size']}-{c['tree_mask']}-b{c.get('batch', 1)}")
def test_kernel_matches_reference_on_gpu(kernel, case):
    from kernels.check import check_kernel

    result = check_kernel(kernel, VerifyWorkload(seed=7, **case), device="cuda")
    print(result)
    assert result.ok, result


FAST_PATH_CASES = [  # (path, workload fields, launch overrides); on sm_90 the default is the Gluon path
    ("default", dict(ctx_len=128 * 1024, page_size=1, tree_mask="tree"), {}),
    ("default", dict(ctx_len=100_003, page_size=16, tree_mask="chain"), {}),
    ("gluon", dict(ctx_len=128 * 1024, page_size=64, tree_mask="tree"), {}),
    ("gluon", dict(ctx_len=128 * 1024, page_size=1, tree_mask="chain", heads=64), {}),
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="chain", heads=64), {}),  # ctx not a tile multiple
    ("gluon", dict(ctx_len=1000, ctx_lens=(4093, 70001, 128 * 1024), batch=3, page_size=64, tree_mask="tree"), {}),
    ("gluon", dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=16, tree_mask="chain", heads=64), {}),
    ("gluon", dict(ctx_len=40, page_size=1, tree_mask="tree"), {}),  # splits with no whole tile
    ("gluon", dict(ctx_len=20_000, page_size=32, heads=16, tree_mask="tree"), {}),
    # the tail warpgroup (72 = 64 + 8 rows) asked for, also where the default plan pads (ctx 40,
    # 136 rows at 30k), and the padded blocks asked for where the default takes the tail (128k). With
    # the tail, every page size takes the ring schedule (kernels/fast/ring.py) by default,
    # its gathers completing their own barriers; ring=False keeps the seesaw's pairs of tiles,
    # async_gather=False the ring's earlier gathers (the tail waits for them and announces them).
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="tree"), dict(tail_m=8)),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="chain"), dict(tail_m=8)),
    ("gluon", dict(ctx_len=1000, ctx_lens=(4093, 70001, 517), batch=3, page_size=16, tree_mask="tree"), dict(tail_m=8)),
    ("gluon", dict(ctx_len=30_011, q_len=17, page_size=64, tree_mask="tree"), dict(tail_m=8)),  # 136 = 2 x 64 + 8
    ("gluon", dict(ctx_len=40, page_size=64, tree_mask="tree"), dict(tail_m=8)),
    ("gluon", dict(ctx_len=128 * 1024, page_size=64, tree_mask="chain"), dict(tail_m=0)),
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="tree"), dict(tail_m=8, ring=False)),
    (
        "gluon",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 517), batch=3, page_size=16, tree_mask="chain"),
        dict(tail_m=8, ring=False),
    ),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="tree"), dict(tail_m=8, ring=True)),
    ("gluon", dict(ctx_len=40, page_size=1, tree_mask="chain"), dict(tail_m=8, ring=True)),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="tree"), dict(tail_m=8, ring=False)),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="chain"), dict(tail_m=8, async_gather=False)),
    (
        "gluon",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 517), batch=3, page_size=16, tree_mask="tree"),
        dict(tail_m=8, async_gather=False),
    ),
    # ring_whole (the default at 64 heads below page 64; stagger=False: at every page): the ring at whole
    # 64-row blocks, its third warpgroup only loading; ring=False, stagger=False: the seesaw's pairs of tiles
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="tree", heads=64), dict(ring_whole=True, stagger=False)),
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="tree", heads=64), dict(ring=False, stagger=False)),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="chain", heads=64), dict(ring=False, stagger=False)),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="chain", heads=64), dict(ring_whole=True, stagger=False)),
    (
        "gluon",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=16, tree_mask="chain", heads=64),
        dict(ring_whole=True, stagger=False),
    ),
    ("gluon", dict(ctx_len=40, page_size=64, tree_mask="tree", heads=64), dict(ring_whole=True, stagger=False)),
    # stagger (the default at 64 heads, page >= 64): the seesaw kernel in FlashMLA's order of work
    ("gluon", dict(ctx_len=100_003, page_size=64, tree_mask="tree", heads=64), dict(stagger=True)),
    ("gluon", dict(ctx_len=128 * 1024, page_size=64, tree_mask="chain", heads=64), {}),  # (the default)
    ("gluon", dict(ctx_len=150, page_size=64, tree_mask="chain", heads=64), dict(stagger=True)),
    (
        "gluon",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=128, tree_mask="tree", heads=64),
        dict(stagger=True),
    ),
    ("gluon", dict(ctx_len=100_003, page_size=1, tree_mask="chain", heads=64), dict(stagger=True)),
    (
        "gluon",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=16, tree_mask="tree", heads=64),
        dict(stagger=True),
    ),
    ("gluon", dict(ctx_len=40, page_size=64, tree_mask="chain", heads=64), dict(stagger=True)),
    ("gluon", dict(ctx_len=150, page_size=64, tree_mask="tree", heads=64), dict(stagger=True)),
    ("portable", dict(ctx_len=128 * 1024, page_size=64, tree_mask="tree"), {}),
    ("hopper", dict(ctx_len=128 * 1024, page_size=64, tree_mask="tree"), {}),
    ("hopper", dict(ctx_len=128 * 1024, page_size=64, tree_mask="chain", heads=64), {}),
    (
        "hopper",
        dict(ctx_len=100_003, page_size=16, tree_mask="tree"),
        dict(block_n=16),
    ),  # ctx not a tile multiple (forced: p16)
    ("hopper", dict(ctx_len=1000, ctx_lens=(4093, 70001, 128 * 1024), batch=3, page_size=64, tree_mask="tree"), {}),
    (
        "hopper",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=128, tree_mask="chain", heads=64),
        {},
    ),
    (
        "portable",
        dict(ctx_len=1000, ctx_lens=(4093, 70001, 9000), batch=3, page_size=64, tree_mask="chain"),
        dict(block_m=64, block_n=32, num_warps=8, num_stages=3, tail_m=16, partials="input", evict_first=True),
    ),
]


@pytest.mark.parametrize(
    "path,case,launch",
    FAST_PATH_CASES,
    ids=lambda v: v if isinstance(v, str) else "-".join(f"{k}{x}" for k, x in v.items())[:60],
)
def test_fast_kernel_paths_on_gpu(path, case, launch):
    """Every code path of triton_mla_fast (Gluon and the Triton TMA kernel forced where the GPU is sm_90)."""
    import torch

    from kernels.check import check_kernel

    if path in ("hopper", "gluon") and torch.cuda.get_device_capability()[0] != 9:
        pytest.skip(f"the {path} path needs sm_90")
    kw = dict(launch) if path == "default" else dict(launch, path=path)
    result = check_kernel("triton_mla_fast", VerifyWorkload(seed=11, **case), device="cuda", **kw)
    print(result)
    assert result.ok, result


def _lens(seed: int, n: int, lo: int, hi: int) -> tuple[int, ...]:
    import random

    rng = random.Random(seed)
    return tuple(rng.randint(lo, hi) for _ in range(n))


# Serving batches (benchmarks/serving_bench.py's rows and more), full size, through the default path (on sm_90
# the Gluon kernels: the ring with the tail, the staggered schedule at 64-row blocks, whole or padded, at page 64,
# the ring or the seesaw on padded blocks below it),
# the batch schedule (the default) and the uniform one; tree and chain masks, pages 1 and 64, prefixes of 1 token
# and of one page.
SERVING_CASES = [
    (dict(ctx_lens=_lens(1, 32, 1024, 32768), heads=16, q_len=2, page_size=64, tree_mask="chain"), {}),
    (dict(ctx_lens=_lens(1, 32, 1024, 32768), heads=16, q_len=2, page_size=1, tree_mask="tree"), {}),
    (dict(ctx_lens=_lens(2, 8, 4096, 131072), heads=8, q_len=9, page_size=64, tree_mask="tree"), {}),
    (dict(ctx_lens=_lens(2, 8, 4096, 131072), heads=8, q_len=9, page_size=1, tree_mask="chain"), {}),
    (dict(ctx_lens=(131072,) + (2048,) * 15, heads=16, q_len=4, page_size=64, tree_mask="chain"), {}),
    (dict(ctx_lens=(131072,) + (2048,) * 15, heads=16, q_len=4, page_size=1, tree_mask="tree"), {}),
    # one staggered block with its partials in bf16 (partials="input")
    (
        dict(ctx_lens=(131072,) + (2048,) * 15, heads=16, q_len=4, page_size=64, tree_mask="tree"),
        dict(partials="input"),
    ),
    (dict(ctx_lens=(10112,) * 16, heads=16, q_len=4, page_size=64, tree_mask="tree"), {}),  # the uniform schedule
    (dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=8, q_len=9, page_size=64, tree_mask="tree"), {}),
    (dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=64, q_len=9, page_size=64, tree_mask="chain"), {}),
    (dict(ctx_lens=(1, 1, 77_777, 3), heads=64, q_len=9, page_size=1, tree_mask="tree"), {}),
    (dict(ctx_lens=(131072,) + (2048,) * 15, heads=16, q_len=4, page_size=64, tree_mask="chain"), dict(ring=False)),
    (dict(ctx_lens=_lens(3, 16, 1024, 32768), heads=16, q_len=3, page_size=64, tree_mask="tree"), {}),
    (dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=16, q_len=9, page_size=64, tree_mask="tree"), {}),
    (dict(ctx_lens=_lens(1, 32, 1024, 32768), heads=16, q_len=2, page_size=64, tree_mask="tree"), dict(stagger=False)),
    (dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=8, q_len=9, page_size=64, tree_mask="tree"), dict(ring=False)),
    (
        dict(ctx_lens=_lens(2, 8, 4096, 131072), heads=8, q_len=9, page_size=64, tree_mask="tree"),
        dict(schedule="uniform"),
    ),
    (dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=8, q_len=9, page_size=64, tree_mask="tree"), dict(path="hopper")),
    (
        dict(ctx_lens=(1, 64, 65, 100_003, 4000), heads=8, q_len=9, page_size=16, tree_mask="chain"),
        dict(path="portable"),
    ),
]


@pytest.mark.parametrize(
    "case,launch",
    SERVING_CASES,
    ids=[
        f"b{len(c['ctx_lens'])}-h{c['heads']}-p{c['page_size']}-{c['tree_mask']}-{'-'.join(map(str, k.values()))}"
        for c, k in SERVING_CASES
    ],
)
def test_fast_kernel_serving_batches_on_gpu(case, launch):
    """Ragged and skewed batches at full size against the reference (the batch schedule unless asked)."""
    from kernels.check import check_kernel

    w = VerifyWorkload(ctx_len=case["ctx_lens"][0], batch=len(case["ctx_lens"]), seed=13, **case)
    result = check_kernel("triton_mla_fast", w, device="cuda", **launch)
    print(result)
    assert result.ok, result


def test_fast_graph_replays_a_ragged_batch():
    """The graph holds the batch schedule's launches (its item table made before the capture)."""
    import torch

    from kernels.fast.run import triton_mla_fast_graph
    from kernels.inputs import build_inputs
    from kernels.reference import torch_ref

    w = VerifyWorkload(ctx_len=5, batch=4, ctx_lens=(5, 70_000, 64, 9000), page_size=64, heads=16, q_len=4, seed=14)
    inp = build_inputs(w, device="cuda")
    first = triton_mla_fast_graph(inp).clone()
    inp.q.mul_(0.5)
    second = triton_mla_fast_graph(inp)
    ref = torch_ref(inp).float()
    assert not torch.equal(first, second)
    assert float((second.float() - ref).norm() / ref.norm()) < 1e-2


def test_fast_graph_replays_on_new_values():
    import torch

    from kernels.fast.run import triton_mla_fast_graph
    from kernels.inputs import build_inputs
    from kernels.reference import torch_ref

    inp = build_inputs(VerifyWorkload(ctx_len=8192, page_size=64, seed=12), device="cuda")
    first = triton_mla_fast_graph(inp).clone()
    inp.q.mul_(0.5)  # same addresses, new values: the replay must read them
    second = triton_mla_fast_graph(inp)
    ref = torch_ref(inp).float()
    assert not torch.equal(first, second)
    assert float((second.float() - ref).norm() / ref.norm()) < 1e-2


CUT_WORKLOADS = {  # the staggered schedule under the batch schedule (skew16) and at batch 1 (16 and 64 heads)
    "skew16": dict(ctx_len=131072, batch=16, ctx_lens=(131072,) + (2048,) * 15, heads=16, q_len=4),
    "b1-32k-h16q4": dict(ctx_len=32768, heads=16, q_len=4),
    "b1-32k-h64q9": dict(ctx_len=32768, heads=64, q_len=9),  # with scores_ahead
}


@pytest.mark.parametrize(
    "cut",
    [
        dict(no_mma=True),
        dict(no_softmax=True),
        dict(no_gather=True),
        dict(no_mma=True, no_softmax=True),
        dict(no_combine=True),
    ],
    ids=str,
)
@pytest.mark.parametrize("name", CUT_WORKLOADS)
def test_fast_kernel_removal_switches_run_where_stagger_is_the_default(name, cut):
    """Each removal switch of the default plan at these shapes launches the staggered schedule and completes (the
    results are wrong on purpose: only that the step runs and ends, its barriers intact, is checked)."""
    import torch

    from kernels.fast.paths import plan_fast
    from kernels.fast.run import triton_mla_fast
    from kernels.inputs import build_inputs

    w = VerifyWorkload(page_size=64, tree_mask="chain", **CUT_WORKLOADS[name])
    assert plan_fast(w, "sm_90", torch.cuda.get_device_properties(0).multi_processor_count, **cut).split.constexprs[
        "STAGGER"
    ]
    out = triton_mla_fast(build_inputs(w, device="cuda"), **cut)
    torch.cuda.synchronize()
    assert out.shape == (w.batch * w.q_len, w.heads, w.v_dim)


@pytest.mark.parametrize(
    "fields",
    [
        dict(ctx_len=131072, heads=8, q_len=9, page_size=64),  # the ring with its tail warpgroup
        dict(ctx_len=4096, batch=3, ctx_lens=(4096, 20000, 32768), heads=16, q_len=4, page_size=64),  # stagger, items
        dict(ctx_len=32768, heads=64, q_len=9, page_size=64),  # the stagger with scores_ahead
    ],
    ids=["ring", "stagger-batch", "stagger-ahead"],
)
def test_in_kernel_stamps_leave_the_output_as_it_was(fields):
    """With the in-kernel timeline's stamps on (kernels/fast/timeline.py) the step writes the same bytes, and
    every program's roles stamp their start and end."""
    import torch

    from kernels.fast.run import triton_mla_fast
    from kernels.inputs import build_inputs

    inp = build_inputs(VerifyWorkload(tree_mask="chain", **fields), device="cuda")
    stamps: dict = {}
    plain, stamped = triton_mla_fast(inp), triton_mla_fast(inp, stamps=stamps)
    torch.cuda.synchronize()
    assert torch.equal(plain, stamped)
    split = stamps["split"].cpu()
    assert (split[:, 0, 2] != 0).all() and (split[:, 0, 5] != 0).all()
    assert (stamps["combine"].cpu()[:, 7] == 1).any()
