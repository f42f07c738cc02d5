"""The labelled validation corpus: real `--set full` H200 captures of kernels whose character is
known from measured throughput against measured ceilings (labels justified in
tests/fixtures/README.md, "Labelled corpus"). Bound, cause/roof and busiest unit must match."""

import pytest

import roofline
from tests.paths import FIXTURES

# file, bound, roof (or latency cause), busiest unit starts with
CORPUS = [
    ("corpus/gemm.ncu-rep.gz", "compute", "tensor pipe", "tensor pipe"),
    ("corpus/sdpa.ncu-rep.gz", "compute", "tensor pipe", "tensor pipe"),
    ("corpus/add.ncu-rep.gz", "bandwidth", "DRAM", "DRAM"),
    ("corpus/rowsum.ncu-rep.gz", "bandwidth", "DRAM", "DRAM"),
    ("corpus/softmax.ncu-rep.gz", "compute", "issue slots", "issue-bound"),
    ("corpus/embedding_bag.ncu-rep.gz", "compute", "ALU pipe (integer, logic, compare)", "ALU pipe"),
    ("full/probe_small_grid_full.ncu-rep.gz", "latency", "small grid", "DRAM"),
    ("full/probe_l2_reread_full.ncu-rep.gz", "bandwidth", "L2", "L2"),
    ("full/probe_stream_copy_full.ncu-rep.gz", "bandwidth", "DRAM", "DRAM"),
    ("full/probe_pointer_chase_full.ncu-rep.gz", "latency", "waiting on global memory loads (long_scoreboard)", "DRAM"),
    ("full/triton_mla_128k_full.ncu-rep.gz", "latency", "small grid", "L1/shared"),
]


@pytest.mark.parametrize("name,bound,roof_or_cause,unit", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus_verdict(name, bound, roof_or_cause, unit):
    (k,) = roofline.load(FIXTURES / name).analysis.kernels
    assert k.bound == bound
    assert (k.roof if bound != "latency" else k.cause) == roof_or_cause
    assert k.unit.startswith(unit)


def test_library_kernels_get_general_advice():
    """Attention advice (split-KV, KV bytes) is for the project's kernels only."""
    for name, *_ in CORPUS[:6]:
        (k,) = roofline.load(FIXTURES / name).analysis.kernels
        assert "KV" not in (k.advice or "") and "split-KV" not in (k.advice or "")
