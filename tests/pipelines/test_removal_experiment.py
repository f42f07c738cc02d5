"""roofline/pipelines/removal_experiment.py's parts that need no GPU: its variants and skips per kernel
(FlashMLA where it is not built), the files it writes (read back by roofline/analysis/removal.py; FlashMLA's
and the corpus GEMM's matched to their real captures), and its one-line error where there is no GPU."""

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch
from click.testing import CliRunner

import roofline
from kernels.flashmla import BUILD_HINT
from roofline.analysis.removal import matching, read_removal
from roofline.cli import main
from roofline.pipelines import removal_experiment as cuts
from tests.paths import FIXTURES, ROOT, RUNS


def test_each_kernel_gets_the_variants_it_has_switches_for():
    every = ["full", "no-mma", "no-softmax", "no-gather", "loads-only"]
    assert {name: list(cuts.variants(s)) for name, s in cuts.SUBJECTS.items()} == {
        "ring": every,
        "seesaw": every,
        "stagger": every,
        "hopper": every,
        "portable": ["full", "no-mma", "no-softmax", "loads-only"],  # its every tile load is a gather
        "triton_mla": ["full", "no-mma", "no-softmax", "loads-only"],
        "flashmla": ["full"],  # nothing of FlashMLA's code can be compiled out: full and read only
    }
    assert cuts.SUBJECTS["seesaw"].kernel == "_gluon_seesaw_kernel"
    assert cuts.SUBJECTS["triton_mla"].kernel == "_verify_extend_kernel"


@pytest.mark.parametrize(
    "name, heads, page_size, skipped",
    [
        ("ring", 8, 64, None),
        ("ring", 64, 64, None),  # whole M blocks: the ring too (ring_whole)
        ("ring", 16, 64, "the plan launches _gluon_seesaw_kernel"),  # 144 rows: padded blocks, no ring
        ("seesaw", 8, 1, None),  # ring=False at 8 heads
        ("seesaw", 64, 64, None),
        ("stagger", 64, 64, None),
        ("stagger", 8, 64, "stagger needs the rows in 64-row blocks"),
        ("hopper", 8, 1, "multiple of block_n"),
        ("portable", 64, 1, None),
        ("triton_mla", 8, 1, None),
        ("flashmla", 64, 64, None),
        ("flashmla", 8, 1, "flashmla needs page_size 64 (FlashMLA's block size), got 1"),
    ],
)
def test_a_kernel_is_timed_where_its_plan_launches_it(name, heads, page_size, skipped):
    mask = cuts.SUBJECTS[name].tree_mask  # the chain mask for flashmla, the tree for the others
    w = cuts.VerifyWorkload(ctx_len=131072, heads=heads, page_size=page_size, tree_mask=mask)
    reason = cuts.SUBJECTS[name].skip_reason(w, "NVIDIA H200", 132, "sm_90")
    assert reason == skipped if skipped is None else skipped in reason


def test_the_file_it_writes_is_a_removal_experiment(tmp_path):
    rows = [
        dict(ctx_len=131072, heads=64, page_size=64, variant=v, graph_ms=ms)
        for v, ms in (("full", 0.2), ("no-mma", 0.15), ("read", 0.05))
    ]
    doc = cuts.removal_doc(cuts.SUBJECTS["seesaw"], rows, "NVIDIA H200", "test")
    path = tmp_path / "_gluon_seesaw_kernel.json"
    path.write_text(cuts.json.dumps(doc))
    (removal,) = read_removal(path)
    assert removal.kernel == "_gluon_seesaw_kernel" and removal.ms == {"full": 0.2, "no-mma": 0.15, "read": 0.05}
    assert removal.workload == dict(batch=1, q_len=9, tree_mask="tree", ctx_len=131072, heads=64, page_size=64)
    assert doc["registered"] == "triton_mla_fast"
    line = cuts.table([doc]).splitlines()[1].split()
    assert line == ["_gluon_seesaw_kernel", "131072", "64", "64", "0.2000", "0.1500", "-", "-", "-", "0.0500"]


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["--kernel", "ring,flash"],
            "'ring,flash': known: ring, seesaw, stagger, hopper, portable, triton_mla, flashmla, gemm",
        ),
        (["--ctx", "12q"], "'12q': context length '12q' is not a positive token count"),
        (["--heads", "0"], "'0': a comma list of positive integers expected"),
    ],
)
def test_bad_options_are_one_line_errors(argv, message):
    r = CliRunner().invoke(main, ["removal", *argv])
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    env = {**os.environ, "CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "roofline", "removal", "--kernel", "seesaw,triton_mla", "--out", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    assert proc.returncode == 1 and proc.stdout == ""
    assert (
        proc.stderr.strip()
        == "Error: roofline removal needs a CUDA GPU (sm_90 for ring, seesaw and hopper); torch sees none"
    )
    assert not (tmp_path / "out").exists()


def test_flashmla_is_skipped_in_one_line_where_it_is_not_built(tmp_path, monkeypatch):
    monkeypatch.setenv("ROOFLINE_FLASHMLA", str(tmp_path))  # no extension there
    kept, skipped = cuts.runnable(["ring", "flashmla", "gemm"])
    assert kept == ["ring", "gemm"]
    assert skipped == [
        f"flashmla skipped: not built: no flashmla_dense*.so in $ROOFLINE_FLASHMLA={tmp_path} "
        f"(build it on an sm_90 GPU machine: {BUILD_HINT})"
    ]
    (tmp_path / "flashmla_dense.cpython-312-x86_64-linux-gnu.so").write_bytes(b"")
    assert cuts.runnable(["flashmla"]) == (["flashmla"], [])


def test_flashmlas_file_is_chain_masked_full_and_read_and_matches_its_capture(tmp_path):
    """Numbers MADE UP for the test (the file's shape is what is checked): FlashMLA's step and the read."""
    rows = [
        dict(ctx_len=131072, heads=8, page_size=64, variant=v, graph_ms=ms)
        for v, ms in (("full", 0.08), ("read", 0.05))
    ]
    doc = cuts.removal_doc(cuts.SUBJECTS["flashmla"], rows, "NVIDIA H200", "test")
    assert doc["workload"]["tree_mask"] == "chain" and "nothing of its code can be compiled out" in doc["method"]
    path = tmp_path / "flash_fwd_splitkv_mla_kernel.json"
    path.write_text(cuts.json.dumps(doc))
    capture = roofline.load(RUNS / "h200-flashmla-chain-128k-p64").analysis
    r = matching(read_removal(path), "NVIDIA H200", capture.workload)
    assert r.kernel == "flash_fwd_splitkv_mla_kernel" and r.ms == {"full": 0.08, "read": 0.05}


def test_the_gemms_file_matches_the_corpus_capture(tmp_path):
    """The GEMM's file as main writes it, with made-up timings (1.6 ms, 0.06 ms), read back and applied to the
    real corpus capture (tests/fixtures/h200/corpus/gemm.ncu-rep.gz): its kernel and its op, no verify workload."""
    rows = [dict(variant="full", graph_ms=1.6), dict(variant="read", graph_ms=0.06)]
    doc = cuts.gemm_doc(cuts.GEMM, cuts.GEMM.kernel, cuts.GEMM.method, rows, "NVIDIA H200", "test")
    assert "the output's write is not in it" in doc["method"]
    path = tmp_path / f"{doc['kernel']}.json"
    path.write_text(cuts.json.dumps(doc))
    (removal,) = read_removal(path)
    assert removal.workload == dict(op="gemm", m=8192, n=8192, k=8192, dtype="bf16")
    run = roofline.load(FIXTURES / "corpus" / "gemm.ncu-rep.gz", removal=path)
    (k,) = run.analysis.kernels
    assert k.kernel == cuts.GEMM.kernel and (k.bound, k.roof) == ("compute", "tensor pipe")
    assert "a bare read of these bytes takes 4% of the step" in k.evidence[1]
    line = cuts.table([doc]).splitlines()[1].split()
    assert line == [cuts.GEMM.kernel, "-", "-", "-", "1.6000", "-", "-", "-", "-", "0.0600"]


@pytest.mark.parametrize(
    "launched, name",
    [
        ("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"),
        ("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm>(Params)", "cutlass::Kernel2"),
    ],
)
def test_the_gemm_file_is_named_as_ncu_names_the_launched_kernel(launched, name):
    assert cuts.ncu_name(launched, cuts.GEMM.kernel) == name


def test_each_kernel_is_timed_at_its_own_mask_and_no_inputs_are_built_where_nothing_runs(monkeypatch, capsys):
    """measure's loop on the CPU: the GPU parts stubbed (no timing happens; every step 'takes' 0.5 ms)."""
    built = []
    monkeypatch.setattr(cuts, "device_facts", lambda device: ("NVIDIA H200", 132, "sm_90"))
    monkeypatch.setattr(
        cuts, "build_inputs", lambda w, device: built.append(w) or SimpleNamespace(kv_cache=torch.zeros(4))
    )
    monkeypatch.setattr(cuts, "graph_replay_ms", lambda fn: 0.5)
    rows = cuts.measure(cuts.subjects(["ring", "flashmla"], None), [131072], [8, 16], [64, 1])
    assert [(w.heads, w.page_size, w.tree_mask) for w in built] == [
        (8, 64, "tree"),
        (8, 64, "chain"),
        (16, 64, "chain"),
        (8, 1, "tree"),
    ]
    assert {(r["heads"], r["page_size"]) for r in rows["ring"]} == {(8, 64), (8, 1)} and len(rows["ring"]) == 12
    assert [(r["heads"], r["variant"]) for r in rows["flashmla"]] == [
        (8, "full"),
        (8, "read"),
        (16, "full"),
        (16, "read"),
    ]
    out = capsys.readouterr().out
    assert re.search(r"h16 +p64 +ring +skipped: the plan launches _gluon_seesaw_kernel", out)
    assert re.search(r"h8 +p1 +flashmla +skipped: flashmla needs page_size 64", out)
    built.clear()  # --mask chain: every kernel at the chain mask, and the file says so
    chained = cuts.subjects(["ring", "flashmla"], "chain")
    rows = cuts.measure(chained, [131072], [64], [64])
    assert [(w.heads, w.tree_mask) for w in built] == [(64, "chain")] and len(rows["ring"]) == 6
    doc = cuts.removal_doc(chained["ring"], rows["ring"], "NVIDIA H200", "test")
    assert doc["workload"]["tree_mask"] == "chain" and doc["kernel"] == "_gluon_ring_kernel"
