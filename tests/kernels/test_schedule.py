"""The fast kernel's batch schedule (kernels.fast.common.plan_batch), in plain Python: the work items cover
every request's tokens once, on tile boundaries; a request with one item writes its output (no combine job);
the items are near-equal over the SMs on ragged and skewed batches; at batch 1 the cut is the uniform plan's."""

import random

import pytest

from kernels.fast.common import BatchSchedule, FastConfig, plan_batch, plan_splits
from kernels.fast.paths import plan_fast
from kernels.plan import cdiv
from kernels.spec import VerifyWorkload


def _uniform(seed: int, n: int, lo: int, hi: int) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(n)]


SERVING = {  # (ctx_lens, q_len, heads, M blocks as the sm_90 default runs them): serving rows
    "b32-h16-1k-32k": (_uniform(1, 32, 1024, 32768), 2, 16, 1),  # 32 rows, one padded block
    "b8-h8-4k-128k": (_uniform(2, 8, 4096, 131072), 9, 8, 1),  # 72 rows: one block and the tail warpgroup
    "skewed-h16": ([131072] + [2048] * 15, 4, 16, 1),
    "b4-h64-ragged": ([100_000, 3000, 50_000, 7], 9, 64, 9),
}


def _check_cover(s: BatchSchedule, kv_lens, block_n: int) -> None:
    """Every request's tokens exactly once, each item on tile boundaries; slots: one per item of a cut
    request, request by request; the items longest first."""
    by_req: dict[int, list] = {}
    for b, lo, hi, ctx, slot in s.items:
        assert 0 <= lo < hi <= kv_lens[b] and lo % block_n == 0 and ctx == kv_lens[b] - (kv_lens[b] - ctx)
        assert hi == kv_lens[b] or hi % block_n == 0
        by_req.setdefault(b, []).append((lo, hi, slot))
    assert sorted(by_req) == list(range(len(kv_lens)))
    jobs = {b: (first, n) for b, first, n in s.jobs}
    next_slot = 0
    for b in range(len(kv_lens)):
        pieces = sorted(by_req[b])
        assert pieces[0][0] == 0 and pieces[-1][1] == kv_lens[b]
        assert all(p[1] == q[0] for p, q in zip(pieces, pieces[1:]))  # contiguous, no overlap
        if len(pieces) == 1:
            assert pieces[0][2] == -1 and b not in jobs  # its own output, no combine
        else:
            first, n = jobs[b]
            assert (first, n) == (next_slot, len(pieces)) and [p[2] for p in pieces] == list(range(first, first + n))
            next_slot += n
    lens = [hi - lo for _, lo, hi, _, _ in s.items]
    assert lens == sorted(lens, reverse=True)


@pytest.mark.parametrize(
    "ctx, m_blocks, ppsm",
    [(131072, 1, 1.0), (131072, 9, 1.0), (8192, 1, 1.0), (100, 2, 1.0), (100_003, 3, 2.0), (40, 1, 1.0)],
)
def test_batch_one_is_cut_as_the_uniform_plan(ctx, m_blocks, ppsm):
    """At batch 1 the batch schedule is the uniform one: the same split length and the same splits, in order."""
    kv = ctx + 9
    split_len, splits = plan_splits(kv, 1, m_blocks, 132, 64, ppsm, 256)
    s = plan_batch((kv,), 9, m_blocks, 132, 256, FastConfig(programs_per_sm=ppsm))
    assert s.split_len == split_len and len(s.items) == splits
    assert [(lo, hi) for _, lo, hi, _, _ in s.items] == [
        (i * split_len, min(kv, (i + 1) * split_len)) for i in range(splits)
    ]
    assert s.jobs == (((0, 0, splits),) if splits > 1 else ())


def test_equal_requests_launch_as_before():
    """Batch 1 and batches of equal requests: the default launches what the uniform schedule launches (no item
    table: at batch 1 the code compiled before the batch schedule), the same for ctx_lens all equal."""
    for heads, page, batch in ((8, 64, 1), (64, 64, 1), (8, 1, 1), (16, 64, 3)):
        w = VerifyWorkload(ctx_len=131072, heads=heads, page_size=page, batch=batch)
        new, old = plan_fast(w, "sm_90", 132), plan_fast(w, "sm_90", 132, schedule="uniform")
        assert new.launches == old.launches and new.schedule is None
        assert not new.split.constexprs["ITEMS"] and new.split.constexprs["Items"] is None
        same = VerifyWorkload(ctx_len=5, heads=heads, page_size=page, batch=2, ctx_lens=(131072, 131072))
        assert (
            plan_fast(same, "sm_90", 132).launches
            == plan_fast(w.__class__(**{**w.to_dict(), "batch": 2}), "sm_90", 132).launches
        )


@pytest.mark.parametrize("name", SERVING)
def test_serving_batches_are_balanced(name):
    """Ragged and skewed batches: the longest-first list schedule of the items finishes within 12% of a perfect
    split of the batch's tiles (plus one item's fixed cost), where the uniform schedule's longest program is 1.6x
    to 11x that."""
    ctx_lens, q_len, heads, m_blocks = SERVING[name]
    kv = tuple(c + q_len for c in ctx_lens)
    s = plan_batch(kv, q_len, m_blocks, 132, 256)
    _check_cover(s, kv, 64)
    ideal = sum(cdiv(n, 64) for n in kv) / (132 // m_blocks) + 2.0
    assert s.makespan <= 1.12 * ideal, (s.makespan, ideal)
    assert len(s.items) <= 4 * 132
    uniform_len, _ = plan_splits(max(kv), len(kv), m_blocks, 132, 64, 1.0, 256)
    assert uniform_len / 64 > 1.6 * ideal


def test_small_requests_write_their_rows_and_long_ones_are_cut():
    kv = (1 + 9, 64 + 9, 70 + 9, 300_000 + 9)
    s = plan_batch(kv, 9, 1, 132, 256)
    _check_cover(s, kv, 64)
    assert [b for b, *_ in s.jobs] == [3]  # only the long request is cut and merged
    assert s.max_slots == sum(1 for it in s.items if it[0] == 3) > 100


def test_min_split_len_and_explicit_split_len():
    kv = (1000, 5000, 20)
    s = plan_batch(kv, 4, 1, 132, 64, FastConfig(block_n=16))
    assert min(hi - lo for b, lo, hi, _, _ in s.items if kv[b] >= 64) >= 64
    _check_cover(s, kv, 16)
    s = plan_batch(kv, 4, 1, 132, 64, FastConfig(block_n=16), split_len=100)  # whole tiles: 112 tokens a piece
    _check_cover(s, kv, 16)
    assert {hi - lo for b, lo, hi, _, _ in s.items if hi != kv[b]} == {112}


def test_plan_fast_batch_schedule_and_the_uniform_one():
    """The batch schedule launches (m_blocks, items) programs and merges only the cut requests (rows of M);
    schedule="uniform" keeps the grid (m_blocks, splits, batch) from the longest request."""
    ctx_lens, q_len, heads, _ = SERVING["skewed-h16"]
    w = VerifyWorkload(ctx_len=2048, batch=16, ctx_lens=tuple(ctx_lens), q_len=q_len, heads=heads, page_size=64)
    new = plan_fast(w, "sm_90", 132)
    assert new.split.grid == (1, len(new.schedule.items), 1) and new.split.grid[1] <= 132
    assert new.split.int_args["total_rows"] == 64 and new.split.signature["Out"] == "*bf16"
    # the combine: a program per row (and 64 columns) of the request with 98 slots, one per 16 rows of the 15 with 2
    assert [j[2] for j in new.schedule.jobs] == [98] + [2] * 15
    assert new.combine.grid == (64 + 15 * 4, 8) and new.combine.constexprs["JOB_ROWS"] == 64
    old = plan_fast(w, "sm_90", 132, schedule="uniform")
    assert old.schedule is None and old.split.grid == (1, 8, 16) and old.combine.constexprs["JOB_ROWS"] == 0
    one_each = VerifyWorkload(ctx_len=100, batch=3, ctx_lens=(100, 90, 5), heads=8, page_size=64)  # none cut
    plan = plan_fast(one_each, "sm_90", 132)
    assert (
        plan.combine is None and plan.launches == [plan.split] and plan.split.grid == (2, 3, 1)
    )  # 72 rows: two padded blocks (no tail on short splits)


def test_schedule_flag_is_checked():
    with pytest.raises(ValueError, match="schedule must be one of"):
        plan_fast(VerifyWorkload(ctx_len=100), "sm_90", 132, schedule="greedy")


def test_scores_ahead_where_several_m_blocks_read_each_tile():
    """The stagger reads the next pair's pages ahead and issues warpgroup 0's next scores under its second P V by
    default where 9 or more M blocks read each tile (64 heads x 9 tokens), not on one block (16 heads); asked for,
    either way; a flag of the stagger only."""
    h64 = VerifyWorkload(ctx_len=131072, heads=64, q_len=9, page_size=64)
    h16 = VerifyWorkload(ctx_len=10112, batch=16, heads=16, q_len=4, page_size=64)
    assert plan_fast(h64, "sm_90", 132).split.constexprs["SCORES_AHEAD"]
    assert "SCORES_AHEAD" not in plan_fast(h64, "sm_90", 132, scores_ahead=False).split.constexprs
    assert "SCORES_AHEAD" not in plan_fast(h16, "sm_90", 132).split.constexprs
    assert plan_fast(h16, "sm_90", 132, scores_ahead=True).split.constexprs["SCORES_AHEAD"]
    with pytest.raises(ValueError, match="scores_ahead is an option of the gluon path's staggered schedule"):
        plan_fast(h64, "sm_90", 132, stagger=False, scores_ahead=True)


def test_the_in_kernel_timeline_records_which_stagger_ran():
    """A stamped launch names its schedule for the timeline's stage names: scores_ahead's own at 64 heads."""
    torch = pytest.importorskip("torch")
    from kernels.fast.run import stamp_buffers

    h64 = VerifyWorkload(ctx_len=8192, heads=64, q_len=9, page_size=64)
    for launch, schedule in ((dict(), "stagger-ahead"), (dict(scores_ahead=False), "stagger")):
        stamps: dict = {}
        stamp_buffers(stamps, plan_fast(h64, "sm_90", 132, **launch), torch.device("cpu"))
        assert stamps["schedule"] == schedule
