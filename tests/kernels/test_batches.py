"""Serving batches as text (kernels/batches.py): every form parses to its lengths, a batch's lengths are written
back as a text that gives exactly them, and the serving rows are the batches the H200 serving run timed."""

import json

import pytest

from kernels.batches import (
    SERVING,
    BatchShape,
    lens_tag,
    lens_text,
    make_workload,
    parse_lens,
    workload_args,
)
from kernels.spec import WorkloadError
from tests.paths import ROOT

G1 = (
    ROOT / "docs" / "results" / "h200-serving-g1" / "serving.jsonl"
)  # the rows as the H200 serving run drew and timed them


def test_each_form_gives_its_lengths():
    assert parse_lens("4k,128k,2k") == (4096, 131072, 2048)
    assert parse_lens("mix:1x128k,2x2k") == (131072, 2048, 2048)
    drawn = parse_lens("uniform:1k-32k", batch=32, seed=0)
    assert len(drawn) == 32 and all(1024 <= c <= 32768 for c in drawn)
    assert parse_lens("uniform:1k-32k", batch=32, seed=0) == drawn != parse_lens("uniform:1k-32k", batch=32, seed=1)


def test_a_file_of_lengths_with_comments(tmp_path):
    f = tmp_path / "trace.txt"
    f.write_text("# from a trace\n4k\n\n300  # a short one\n")
    assert parse_lens(f"file:{f}") == (4096, 300)
    f.write_text("4k\n12q\n")
    with pytest.raises(WorkloadError, match=r"trace.txt:2"):
        parse_lens(f"file:{f}")


@pytest.mark.parametrize(
    "text,batch,why",
    [
        ("uniform:1k-32k", None, "needs its size"),
        ("uniform:32k-1k", 4, "above its high end"),
        ("mix:1y128k", None, "COUNTxLENGTH"),
        ("poisson:4k", None, "unknown kind 'poisson'"),
        ("4k,8k", 3, "2 lengths for --batch 3"),
        ("", None, "no lengths"),
        ("uniform:1k-2k", 5000, "1 to 4096"),
    ],
)
def test_a_bad_batch_is_one_line_naming_it(text, batch, why):
    with pytest.raises(WorkloadError, match=why) as err:
        parse_lens(text, batch)
    assert "\n" not in str(err.value) and repr(text) in str(err.value)


@pytest.mark.parametrize(
    "lens", [(131072,) + (2048,) * 15, (4096, 300, 131072), (2048, 2048, 4096, 2048), tuple(range(1000, 1033))]
)
def test_lens_text_reads_back_as_exactly_the_lengths_in_order(lens):
    text = lens_text(lens)
    assert parse_lens(text) == lens
    assert len(text) <= len(",".join(map(str, lens)))


def test_runs_of_equal_lengths_are_written_as_a_mix():
    assert lens_text((131072,) + (2048,) * 15) == "mix:1x128k,15x2k"
    assert lens_text((4096, 300)) == "4k,300"


def test_two_batches_of_one_size_get_different_tags():
    a, b = parse_lens("uniform:1k-32k", 8, 0), parse_lens("uniform:1k-32k", 8, 1)
    assert lens_tag(a) != lens_tag(b)
    assert lens_tag((131072,) + (2048,) * 15).startswith("2k-128k-")


def test_equal_lengths_make_the_batch_of_equal_requests():
    assert make_workload(lens="mix:16x10112", heads=16) == make_workload(ctx=10112, batch=16, heads=16)
    ragged = make_workload(lens="4k,2k")
    assert ragged.ctx_lens == (4096, 2048) and ragged.batch == 2 and ragged.ctx_len == 4096


def test_workload_args_reproduce_the_workload_exactly():
    """What a report's Reproduce section prints: the options give the same workload, draw or file aside."""
    for w in (
        make_workload(lens="uniform:1k-32k", batch=32, seed=3, heads=16, q_len=2, page_size=64, tree_mask="chain"),
        make_workload(ctx="8k", batch=4),
        make_workload(ctx=131072, heads=64),
    ):
        args = workload_args(w)
        opts = dict(zip(args[::2], args[1::2]))
        again = make_workload(
            ctx=opts.get("--ctx"),
            lens=opts.get("--lens"),
            batch=int(opts["--batch"]) if "--batch" in opts else None,
            seed=int(opts.get("--seed", 0)),
            heads=int(opts["--heads"]),
            q_len=int(opts["--q-len"]),
            page_size=int(opts["--page-size"]),
            tree_mask=opts["--mask"],
        )
        assert again == w


def test_the_serving_rows_are_the_batches_the_h200_measured():
    """kernels.batches.SERVING draws exactly the prefixes and bytes the H200 serving run timed (serving.jsonl)."""
    measured = {r["row"]: r for r in map(json.loads, G1.read_text().splitlines())}
    assert [r.name for r in SERVING] == list(measured)
    for row in SERVING:
        w, m = row.workload(), measured[row.name]
        assert list(w.request_ctx_lens) == m["ctx_lens"], row.name
        assert (w.heads, w.q_len, w.kv_tokens * w.token_bytes) == (m["heads"], m["q_len"], m["kv_bytes"])
        assert (w.page_size, w.tree_mask) == (64, "chain")


def test_batch_shape_says_count_min_median_max():
    shape = BatchShape.of((131072,) + (2048,) * 15)
    assert (shape.count, shape.min, shape.median, shape.max) == (16, 2048, 2048, 131072)
    assert shape.describe() == "16 requests, prefixes 2k / 2k / 128k (min / median / max)"


def test_a_context_length_given_twice_must_agree():
    assert make_workload(ctx_len=4096).ctx_len == make_workload(ctx="4k").ctx_len == 4096
    with pytest.raises(WorkloadError, match="two context lengths"):
        make_workload(ctx="8k", ctx_len=4096)
