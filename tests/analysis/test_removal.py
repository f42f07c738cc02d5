"""A removal experiment as evidence (roofline/analysis/removal.py): the ring kernel's captures at 128k, 8 heads, pages 64
and 1, judged by what removing each part of its work saved on the same H200 (docs/results/h200-ring-cuts.json,
benchmarks/ring_cuts.py; its code is roofline/pipelines/removal_experiment.py now)."""

import json

import pytest
from click.testing import CliRunner

import roofline
from roofline.analysis.removal import RemovalError, matching, read_removal, removal_verdict
from roofline.cli import main
from tests.paths import FIXTURES, ROOT, RUNS

RING_CUTS = ROOT / "docs" / "results" / "h200-ring-cuts.json"


def ring(run: str):
    r = roofline.load(RUNS / run)
    return r, next(k for k in r.analysis.kernels if k.kernel == "_gluon_ring_kernel")


@pytest.mark.parametrize(
    "run,cause,numbers",
    [
        (
            "h200-triton_mla_fast-ring-128k-p64",
            "pipelined: the loads set the pace, by a removal experiment",
            ["the step takes 0.0707 ms", "without the MMAs 0.0653 ms (-7.6%)", "the loads alone 0.0641 ms (91% of it)"],
        ),
        (
            "h200-triton_mla_fast-ring-128k-p1",
            "pipelined: the loads set the pace, the page gathers most, by a removal experiment",
            ["the step takes 0.0737 ms", "without the gathers 0.0637 ms (-13.6%)", "the loads alone 0.0643 ms"],
        ),
    ],
)
def test_the_ring_kernels_cause_is_what_its_removal_experiment_shows(run, cause, numbers):
    r, k = ring(run)
    assert k.cause == "pipelined: the warps wait at the handoffs between roles"  # the capture alone
    v = removal_verdict(matching(read_removal(RING_CUTS), r.analysis.gpu.name, r.analysis.workload), k.cause)
    assert v.cause == cause
    assert all(n in v.evidence[0] for n in numbers)
    assert "the capture alone said: the warps wait at the handoffs between roles" in v.evidence[1]
    assert "occupancy" not in v.advice and "registers" not in v.advice


def test_an_experiment_of_another_workload_or_gpu_is_refused(tmp_path):
    r, _ = ring("h200-triton_mla_fast-ring-128k-p64")
    removals = read_removal(RING_CUTS)
    with pytest.raises(
        RemovalError,
        match=r"no rows for this capture's batch=1 q_len=9 tree_mask=tree ctx_len=131072 heads=64 page_size=64 \(it holds",
    ):
        matching(removals, "NVIDIA H200", {**r.analysis.workload.to_dict(), "heads": 64})
    with pytest.raises(RemovalError, match="the capture names no GPU"):
        matching(removals, None, r.analysis.workload)
    for other in ("NVIDIA B200", "NVIDIA H20", "NVIDIA"):  # the whole name: an H20 is no H200
        with pytest.raises(RemovalError, match=f"measured on NVIDIA H200, the capture on {other}$"):
            matching(removals, other, r.analysis.workload)
    other_q_len = {**r.analysis.workload.to_dict(), "q_len": 4}  # the file's common fields count too
    with pytest.raises(RemovalError, match="no rows for this capture"):
        matching(removals, "NVIDIA H200", other_q_len)


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda d: d.pop("format"), "not a removal experiment"),
        (lambda d: d["rows"][0].update(graph_ms=-1), "rows[0]: graph_ms must be a positive number"),
        (lambda d: d["rows"][1].update(graph_ms=float("nan")), "rows[1]: graph_ms must be a positive number"),
        (lambda d: d["rows"][2].pop("page_size"), "rows[2]: needs integer ctx_len, heads, page_size"),
        (lambda d: d.pop("kernel"), "missing 'kernel'"),
        (lambda d: d.update(device=123), "'device' must be a str, got 123"),
        (lambda d: d.update(workload=[1]), "'workload' must be an object of workload fields"),
    ],
)
def test_a_bad_experiment_file_is_named_with_what_is_wrong(tmp_path, edit, message):
    data = json.loads(RING_CUTS.read_text())
    edit(data)
    bad = tmp_path / "cuts.json"
    bad.write_text(json.dumps(data))
    with pytest.raises(RemovalError) as info:
        read_removal(bad)
    assert str(info.value).startswith(f"{bad}: ") and message in str(info.value)


def test_without_a_full_row_nothing_is_guessed(tmp_path):
    data = json.loads(RING_CUTS.read_text())
    data["rows"] = [row for row in data["rows"] if row["variant"] != "ring"]
    path = tmp_path / "cuts.json"
    path.write_text(json.dumps(data))
    r, _ = ring("h200-triton_mla_fast-ring-128k-p64")
    with pytest.raises(RemovalError, match="no 'full' row"):
        matching(read_removal(path), "NVIDIA H200", r.analysis.workload)


def test_analyze_takes_a_removal_experiment():
    run = str(RUNS / "h200-triton_mla_fast-ring-128k-p64")
    r = CliRunner().invoke(main, ["analyze", run, "--removal", str(RING_CUTS), "--format", "json"])
    assert r.exit_code == 0, r.output
    (k,) = [k for k in json.loads(r.stdout)["kernels"] if k["kernel"] == "_gluon_ring_kernel"]
    assert k["cause"] == "pipelined: the loads set the pace, by a removal experiment"
    assert not any(e.startswith("whether the loads or the math") for e in k["evidence"])  # the hint was taken
    other = str(RUNS / "h200-triton_mla_fast-128k-h64")  # 64 heads: the file has no such rows
    r = CliRunner().invoke(main, ["analyze", other, "--removal", str(RING_CUTS)])
    assert (
        r.exit_code == 2
        and "no rows for this capture's batch=1 q_len=9 tree_mask=tree ctx_len=131072 heads=64" in r.output
    )


def test_the_report_names_the_experiment_and_reproduces_with_it(tmp_path):
    run = roofline.load(RUNS / "h200-triton_mla_fast-ring-128k-p1", removal=RING_CUTS)
    (k,) = [k for k in run.analysis.kernels if k.kernel == "_gluon_ring_kernel"]
    assert k.cause == "pipelined: the loads set the pace, the page gathers most, by a removal experiment"
    assert run.removal == RING_CUTS and any(str(RING_CUTS) in n for n in run.analysis.notes)
    (md, *_) = roofline.report(run, tmp_path / "report.md")
    text = md.read_text()
    assert f"--removal {RING_CUTS}" in text and "without the gathers 0.0637 ms (-13.6%)" in text


def test_a_workload_that_differs_only_in_its_mask_says_so():
    chain = roofline.load(RUNS / "h200-flashmla-chain-128k-p64")  # tree_mask chain; the experiment's is tree
    with pytest.raises(RemovalError) as info:
        matching(read_removal(RING_CUTS), chain.analysis.gpu.name, chain.analysis.workload)
    assert "no rows for this capture's batch=1 q_len=9 tree_mask=chain ctx_len=131072 heads=8 page_size=64" in str(
        info.value
    )


def test_full_and_read_rows_are_read_and_the_read_is_evidence(tmp_path):
    """The format as roofline/pipelines/removal_experiment.py writes it: the shipped variant named "full", and a bare
    read of the same bytes beside it (here the read is set at 0.0461 ms, the bare read the same H200
    measured at 128k in docs/results/h200-bench-after-restructure/bench.json)."""
    data = json.loads(RING_CUTS.read_text())
    rows = [dict(row, variant="full") if row["variant"] == "ring" else row for row in data["rows"]]
    rows.append(dict(ctx_len=131072, heads=8, page_size=64, variant="read", graph_ms=0.0461))
    path = tmp_path / "cuts.json"
    path.write_text(json.dumps(dict(data, rows=rows)))
    r, k = ring("h200-triton_mla_fast-ring-128k-p64")
    v = removal_verdict(matching(read_removal(path), "NVIDIA H200", r.analysis.workload), k.cause)
    assert v.cause == "pipelined: the loads set the pace, by a removal experiment"
    assert "a bare read of the same bytes 0.0461 ms (65% of it)" in v.evidence[0]


def test_a_classic_kernel_keeps_its_cause_with_the_experiment_beside_it(tmp_path):
    """triton_mla's extend kernel (128k, page 1: the ring file's p1 rows' workload) is classic: a small
    grid. An experiment on it (the ring's numbers under its name, to exercise the rule) is evidence; it
    never turns a classic kernel's cause into a pipelined one."""
    data = json.loads(RING_CUTS.read_text())
    path = tmp_path / "cuts.json"
    path.write_text(json.dumps(dict(data, kernel="_verify_extend_kernel")))
    run = roofline.load(RUNS / "h200-triton_mla-128k", removal=path)
    k = next(k for k in run.analysis.kernels if k.kernel == "_verify_extend_kernel")
    assert k.cause == "small grid" and "split the sequence" in k.advice
    assert any(
        e.startswith("the experiment's reading: the loads set the pace, the page gathers most") for e in k.evidence
    )


FLASHMLA_READ = ROOT / "docs" / "results" / "h200-flashmla-read.json"


def test_a_closed_kernel_beside_a_bare_read_keeps_its_cause():
    """FlashMLA's step and the bare read of the same bytes, from one bench run (nothing of its code can
    be removed): evidence only. At 64 heads the read takes 18% of the step, so the loads alone cannot
    set its pace, and the capture's tensor-pipe verdict stands; at 8 heads (61%) nothing is claimed."""
    h64 = roofline.load(RUNS / "h200-flashmla-h64-128k-p64-source", removal=FLASHMLA_READ)
    k = next(k for k in h64.analysis.kernels if k.kernel == "flash_fwd_splitkv_mla_kernel")
    assert (k.bound, k.roof, k.cause) == ("compute", "tensor pipe", "compute pipes lead memory by 10+ points")
    assert k.evidence[0].startswith("timed beside a bare read") and "0.2628 ms; a bare read" in k.evidence[0]
    assert k.evidence[1] == "a bare read of these bytes takes 18% of the step: the loads alone do not set its pace"
    assert any(n.startswith("flash_fwd_splitkv_mla_kernel: evidence from ") for n in h64.analysis.notes)
    h8 = roofline.load(RUNS / "h200-flashmla-chain-128k-p64", removal=FLASHMLA_READ)
    k = next(k for k in h8.analysis.kernels if k.kernel == "flash_fwd_splitkv_mla_kernel")
    assert k.cause == "pipelined: the loads are late" and "(61% of it)" in k.evidence[0]
    assert not any("do not set its pace" in e for e in k.evidence)


GEMM = FIXTURES / "corpus" / "gemm.ncu-rep.gz"  # cuBLAS bf16 8192^3: no verify workload
NVJET = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"


def gemm_file(tmp_path, **edit):
    """A GEMM's file as roofline removal --kernel gemm writes it. Its numbers are MADE UP for
    this test (not measured): a 1.6 ms step beside a 0.06 ms read of the operands."""
    doc = {
        "format": "roofline-removal/1",
        "kernel": NVJET,
        "registered": "torch.matmul",
        "device": "NVIDIA H200",
        "method": "made up for a test",
        "workload": {"op": "gemm", "m": 8192, "n": 8192, "k": 8192, "dtype": "bf16"},
        "rows": [{"variant": "full", "graph_ms": 1.6}, {"variant": "read", "graph_ms": 0.06}],
        **edit,
    }
    path = tmp_path / f"{NVJET}.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_gemm_is_matched_by_its_kernel_name_and_its_tensor_verdict_stands(tmp_path):
    plain = roofline.load(GEMM)
    assert plain.analysis.workload is None  # a bare ncu report of a library kernel
    (before,) = plain.analysis.kernels
    run = roofline.load(GEMM, removal=gemm_file(tmp_path))
    (k,) = run.analysis.kernels
    assert (k.bound, k.roof, k.cause, k.advice) == ("compute", "tensor pipe", before.cause, before.advice)
    assert k.evidence[0].startswith("timed beside a bare read") and "(4% of it)" in k.evidence[0]
    assert k.evidence[1] == "a bare read of these bytes takes 4% of the step: the loads alone do not set its pace"
    assert any("(op=gemm m=8192 n=8192 k=8192 dtype=bf16)" in n for n in run.analysis.notes)


def test_analyze_takes_a_gemm_file_for_the_corpus_capture(tmp_path):
    from click.testing import CliRunner

    from roofline.cli import main

    r = CliRunner().invoke(main, ["analyze", str(GEMM), "--removal", str(gemm_file(tmp_path))])
    assert r.exit_code == 0, r.output
    assert f"{NVJET}: compute (tensor pipe)" in r.output and "(4% of it)" in r.output


def test_a_gemm_file_and_a_verify_capture_never_match(tmp_path):
    verify = roofline.load(RUNS / "h200-triton_mla-128k").analysis
    with pytest.raises(RemovalError, match=r"times a gemm \(op=gemm m=8192 .*\), not this capture's verify step"):
        matching(read_removal(gemm_file(tmp_path)), "NVIDIA H200", verify.workload)
    with pytest.raises(RemovalError, match="the capture names no workload"):  # a verify file on the GEMM
        matching(read_removal(RING_CUTS), "NVIDIA H200", None)
    with pytest.raises(RemovalError, match="measured on NVIDIA H200, the capture on NVIDIA B200"):
        matching(read_removal(gemm_file(tmp_path)), "NVIDIA B200", None)
    no_full = gemm_file(tmp_path, rows=[{"variant": "read", "graph_ms": 0.06}])
    with pytest.raises(RemovalError, match="no 'full' row"):
        matching(read_removal(no_full), "NVIDIA H200", None)
    bad_op = gemm_file(tmp_path, workload={"op": 7})
    with pytest.raises(RemovalError, match="workload 'op' must name the op"):
        read_removal(bad_op)


def test_a_folder_of_experiments_applies_the_files_of_kernels_the_capture_holds(tmp_path):
    """`roofline removal --out DIR` writes a file per kernel: --removal DIR takes the folder."""
    folder = tmp_path / "cuts"
    folder.mkdir()
    (folder / "_gluon_ring_kernel.json").write_text(RING_CUTS.read_text())
    (folder / "flash_fwd_splitkv_mla_kernel.json").write_text(FLASHMLA_READ.read_text())
    (folder / "notes.json").write_text("[]")  # not an experiment: left alone
    run = roofline.load(RUNS / "h200-triton_mla_fast-ring-128k-p64", removal=folder)
    k = next(k for k in run.analysis.kernels if k.kernel == "_gluon_ring_kernel")
    assert k.cause == "pipelined: the loads set the pace, by a removal experiment"
    assert [n for n in run.analysis.notes if "removal experiment" in n or "evidence from" in n] == [
        f"_gluon_ring_kernel: cause from the removal experiment {folder / '_gluon_ring_kernel.json'} "
        "(ctx_len=131072 heads=8 page_size=64)"
    ]
    with pytest.raises(RemovalError, match=r"no experiment of a kernel this capture holds \(the folder times "):
        roofline.load(RUNS / "h200-triton_mla-128k", removal=folder)
    out = CliRunner().invoke(
        main, ["analyze", str(RUNS / "h200-triton_mla_fast-ring-128k-p64"), "--removal", str(folder)]
    )
    assert out.exit_code == 0 and "the loads set the pace, by a removal experiment" in out.output
