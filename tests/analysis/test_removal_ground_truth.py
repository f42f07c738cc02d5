"""The removal experiment as ground truth: every kernel's capture judged beside what removing each part of its work saved on
the same H200 (docs/results/h200-removal/, `roofline/pipelines/removal_experiment.py`; its README holds the table and the
commands). A pipelined kernel's cause is the experiment's, with its numbers and never occupancy advice; a
classic kernel (triton_mla: a small grid) and the cuBLAS GEMM (tensor-bound) keep theirs; a kernel with nothing
to compile out (FlashMLA) gets its bare read as evidence only."""

import pytest

import roofline
from tests.paths import FIXTURES, ROOT, RUNS

REMOVAL = ROOT / "docs" / "results" / "h200-removal"
LOADS = "pipelined: the loads set the pace, by a removal experiment"
CHAIN = "pipelined: the math as one chain sets the pace (no one part of it), by a removal experiment"
MMAS = "pipelined: the MMAs set the pace, by a removal experiment"


def judged(capture, kernel: str):
    run = roofline.load(capture, removal=REMOVAL)
    return next(k for k in run.analysis.kernels if k.kernel == kernel)


@pytest.mark.parametrize(
    "capture, kernel, cause, numbers",
    [
        # the ring (8 heads: the tail warpgroup), pages 64 and 1
        (RUNS / "h200-triton_mla_fast-ring-128k-p64", "_gluon_ring_kernel", LOADS, ["0.0706 ms", "(90% of it)"]),
        (
            RUNS / "h200-triton_mla_fast-ring-128k-p1",
            "_gluon_ring_kernel",
            "pipelined: the loads set the pace, the page gathers most, by a removal experiment",
            ["without the gathers 0.0636 ms (-13.4%)", "the loads alone 0.0644 ms (88% of it)"],
        ),
        # the ring at whole blocks (64 heads, the default since ring_whole), chain mask
        (
            RUNS / "h200-triton_mla_fast-h64-ring-128k-p64-source",
            "_gluon_ring_kernel",
            MMAS,
            ["0.3210 ms", "without the MMAs 0.1598 ms (-50.2%)", "the loads alone 0.1262 ms (39% of it)"],
        ),
        # the seesaw's pairs of tiles: 8 heads (loads), 64 heads (MMAs)
        (RUNS / "h200-triton_mla_fast-gluon-128k-p64", "_gluon_seesaw_kernel", LOADS, ["0.0815 ms", "(82% of it)"]),
        (
            RUNS / "h200-triton_mla_fast-h64-tree-128k-p64-source",
            "_gluon_seesaw_kernel",
            MMAS,
            ["0.3293 ms", "without the MMAs 0.1881 ms (-42.9%)"],
        ),
        # the Triton paths (older builds of these kernels captured; the experiment times today's): no one
        # part saves half of the math, and removing the MMAs slows the step (the schedule changed)
        (
            FIXTURES / "presets" / "triton_mla_fast-verdict",
            "_hopper_split_kernel",
            CHAIN,
            ["without the softmax 0.1327 ms (-7.1%)", "the loads alone 0.0866 ms (61% of it)"],
        ),
        (
            RUNS / "h200-triton_mla_fast-128k-p64",
            "_fast_split_kernel",
            CHAIN,
            ["without the MMAs 0.4073 ms (+158.9%)", "the loads alone 0.0910 ms (58% of it)"],
        ),
    ],
)
def test_a_pipelined_kernels_cause_is_what_removing_its_parts_shows(capture, kernel, cause, numbers):
    k = judged(capture, kernel)
    assert k.cause == cause
    assert all(n in k.evidence[0] for n in numbers), k.evidence[0]
    advice = " ".join(k.advice if isinstance(k.advice, list) else [k.advice or ""])
    assert "occupancy" not in advice and "fewer registers" not in advice


def test_a_cut_that_slows_the_step_is_left_out_and_said_so():
    k = judged(FIXTURES / "presets" / "triton_mla_fast-verdict", "_hopper_split_kernel")
    assert any(
        e.startswith("without the MMAs the step is slower: the cut changed how the compiler") for e in k.evidence
    )
    assert "the capture alone said: the math is late" in " ".join(k.evidence)


def test_classic_kernels_keep_their_causes_with_the_experiment_beside_them():
    """triton_mla: a small grid stays its cause (8 blocks on 132 SMs), the experiment's reading beside it;
    the corpus's cuBLAS GEMM stays tensor-bound, its bare read 5% of its time."""
    k = judged(RUNS / "h200-triton_mla-128k", "_verify_extend_kernel")
    assert k.cause == "small grid" and "the experiment's reading: the MMAs set the pace" in k.evidence
    assert "the step takes 15.5678 ms" in k.evidence[0]
    name = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"
    gemm = judged(FIXTURES / "corpus" / "gemm.ncu-rep.gz", name)
    alone = next(k for k in roofline.load(FIXTURES / "corpus" / "gemm.ncu-rep.gz").analysis.kernels if k.kernel == name)
    assert (gemm.bound, gemm.cause, gemm.advice) == ("compute", alone.cause, alone.advice)
    assert "a bare read of these bytes takes 5% of the step: the loads alone do not set its pace" in gemm.evidence


@pytest.mark.parametrize(
    "run, cause, read",
    [
        ("h200-flashmla-chain-128k-p64", "pipelined: the loads are late", "0.0572 ms (71% of it)"),
        ("h200-flashmla-h64-128k-p64-source", "compute pipes lead memory by 10+ points", "(23% of it)"),
    ],
)
def test_flashmla_has_nothing_to_remove_and_keeps_its_own_cause(run, cause, read):
    k = judged(RUNS / run, "flash_fwd_splitkv_mla_kernel")
    assert k.cause == cause and k.evidence[0].startswith("timed beside a bare read") and read in k.evidence[0]


def test_a_folder_whose_files_of_a_kernel_all_time_other_workloads_is_an_error():
    """The folder holds two files of the ring (tree mask: 8 and 64 heads; chain mask: 64 heads); a ring capture
    at 8 heads with the chain mask matches neither, and the error names what each holds."""
    with pytest.raises(roofline.RooflineError) as info:
        roofline.load(RUNS / "h200-triton_mla_fast-chain-128k-p64", removal=REMOVAL)
    message = str(info.value)
    assert message.startswith(f"{REMOVAL}: no experiment of _gluon_ring_kernel matches this capture: ")
    assert "_gluon_ring_kernel.chain.json: no rows for this capture's" in message and "tree_mask=chain" in message


def test_a_folder_with_two_experiments_of_one_point_is_an_error(tmp_path):
    """Two files timing the same kernel at the capture's workload: which is the evidence is not guessed."""
    for name in ("_gluon_ring_kernel.json", "again.json"):
        (tmp_path / name).write_text((REMOVAL / "_gluon_ring_kernel.json").read_text())
    with pytest.raises(
        roofline.RooflineError,
        match=r"2 experiments of _gluon_ring_kernel match this capture "
        r"\(_gluon_ring_kernel.json, again.json\): keep one",
    ):
        roofline.load(RUNS / "h200-triton_mla_fast-ring-128k-p64", removal=tmp_path)
