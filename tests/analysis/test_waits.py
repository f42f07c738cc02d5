"""On real H200 captures: where the warps wait (PC samples by instruction class and source
line), causes that fit pipelined kernels (never occupancy advice for them), and the at-size floor."""

import pytest
from click.testing import CliRunner

import roofline
from kernels.spec import VerifyWorkload
from profiler.metrics import get_preset, with_source
from profiler.ncu_source import WAIT_CLASSES, read_pc_samples
from profiler.readers import read_launches
from roofline.analysis.floor import at_size_line, workload_floor
from roofline.analysis.summary import summarize
from roofline.analysis.verdict import classify
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from tests.paths import FIXTURES, ROOT, RUNS

RING = {p: RUNS / f"h200-triton_mla_fast-ring-128k-p{p}" for p in (1, 64)}
SEESAW = RUNS / "h200-triton_mla_fast-gluon-128k-p64"
TRITON_TMA = FIXTURES / "presets" / "triton_mla_fast-verdict"  # _hopper_split_kernel: TMA + wgmma, Triton
DECODE = RUNS / "h200-triton_mla_decode-128k-p64"  # its old metric list has no PC samples


@pytest.fixture(scope="module")
def ring():
    return {p: roofline.load(path) for p, path in RING.items()}


def _kernel(run, name):
    return next(k for k in run.analysis.kernels if k.kernel == name)


def test_pc_samples_of_the_ring_kernel_by_class_and_line():
    samples = read_pc_samples(RING[64] / "profile.ncu-rep")
    pc = samples.frame
    assert set(pc["wait_class"]) <= set(WAIT_CLASSES)
    ring = pc[pc["kernel"] == "_gluon_ring_kernel"]
    assert ring["launch"].nunique() == 3 and (ring["pc"] >= 0).all() and ring["line"].gt(0).all()
    # the try-wait loop: samples land on the branch after SYNCS.PHASECHK; the barrier it waits on is
    # arrived at by threads (a handoff), not armed with a TMA byte count
    top = ring.loc[ring["samples"].idxmax()]
    assert top["sass"].split()[1] == "BRA" and top["wait_class"] == "role barrier"
    assert top["file"].endswith("kernels/triton_mla_fast_ring.py") and top["line"] == 158
    traits = samples.functions["_gluon_ring_kernel"]
    assert {k: traits[k] for k in ("mma", "async_copies", "mbarrier_waits")} == dict.fromkeys(
        ("mma", "async_copies", "mbarrier_waits"), True
    )
    assert traits["mma_warpgroup"] and not traits["mma_sync"] and traits["mma_opcode"].startswith("HGMMA")
    assert samples.functions["_combine_kernel"]["mma"] is False


def test_api_returns_where_the_warps_wait_as_dataframes(ring):
    run = ring[64]
    by_class = run.stalls_by_class
    ours = by_class[by_class["kernel"] == "_gluon_ring_kernel"].set_index("wait_class")["share"]
    assert ours.sum() == pytest.approx(1.0)
    assert ours.idxmax() == "role barrier" and ours["role barrier"] > ours["MMA wait"] > ours["load barrier"] > 0
    lines = run.stalls_by_line
    assert list(lines.columns[:8]) == ["kernel", "file", "line", "line_text", "samples", "share", "wait_class", "sass"]
    first = lines[lines["kernel"] == "_gluon_ring_kernel"].iloc[0]
    assert (first["line"], first["wait_class"]) == (158, "role barrier") and 0.2 < first["share"] < 0.25


@pytest.mark.parametrize("page", [1, 64])
def test_ring_kernel_gets_a_pipeline_cause_and_no_occupancy_advice(ring, page):
    k = _kernel(ring[page], "_gluon_ring_kernel")
    assert k.bound == "latency" and k.cause == "pipelined: the warps wait at the handoffs between roles"
    assert "occupancy" not in k.advice and "registers" not in k.advice and "deeper ring" in k.advice
    text = " ".join(k.evidence)
    assert "one block per SM by design" in text and "asynchronous copies" in text
    assert "x 351 ns / 132 SMs = 11.7 KB in flight per SM" in text and "measured: pointer-chase probe" in text
    assert "math side: tensor pipe 3" in text and "at role barriers" in text
    assert not any(e.startswith(("occupancy limited", "small grid")) for e in k.evidence)
    # the classic kernel beside it keeps its cause
    assert _kernel(ring[page], "_combine_kernel").cause == "low occupancy (registers)"


@pytest.mark.parametrize("path,name", [(SEESAW, "_gluon_seesaw_kernel"), (TRITON_TMA, "_hopper_split_kernel")])
def test_other_pipelined_kernels_get_no_occupancy_advice(path, name):
    k = _kernel(roofline.load(path), name)
    assert k.cause.startswith("pipelined: ") and "occupancy" not in k.advice
    if name == "_gluon_seesaw_kernel":  # 19.9% at load barriers, 19.3% at MMA waits: said, not hidden
        assert any("no single critical path" in e for e in k.evidence)


def test_without_sass_the_launch_limits_and_tensor_pipe_decide():
    """A capture read without its PC table (as a default-preset or CSV capture): still no occupancy advice."""
    a = summarize(read_launches(RING[64] / "profile.ncu-rep"), VerifyWorkload(ctx_len=131072, page_size=64))
    k = next(k for k in a.kernels if k.kernel == "_gluon_ring_kernel")
    assert k.cause.startswith("pipelined: ") and "occupancy" not in k.advice
    assert any("no SASS in this capture" in e for e in k.evidence)
    assert any("stall reasons only" in e for e in k.evidence)


def test_classic_and_library_kernels_keep_their_causes():
    assert _kernel(roofline.load(RUNS / "h200-triton_mla-128k"), "_verify_extend_kernel").cause == "small grid"
    gemm = roofline.load(FIXTURES / "corpus" / "gemm.ncu-rep.gz")
    (k,) = gemm.analysis.kernels
    assert (k.bound, k.roof) == ("compute", "tensor pipe")
    assert max(k.waits.by_class, key=k.waits.by_class.get) == "MMA wait"  # cuBLAS waits on its wgmma


def test_analyze_prints_where_the_warps_wait_and_says_when_a_capture_has_none():
    out = CliRunner().invoke(main, ["analyze", str(RING[64])]).output
    assert "where the warps wait (PC samples by instruction" in out
    assert "_gluon_ring_kernel (19547 samples): role barrier 33.9%, MMA wait 18.7%" in out
    assert "kernels/triton_mla_fast_ring.py:158  role barrier" in out
    old = CliRunner().invoke(main, ["analyze", str(DECODE)]).output
    assert "where the warps wait" not in old and old.count("no PC samples in this capture") == 1


def test_source_option_adds_the_source_counters():
    p = with_source(get_preset("verdict"))
    args = p.ncu_args()
    assert args[:2] == ["--import-source", "yes"] and "inst_executed" in args[-1] and p.passes_h200 is None
    assert get_preset("verdict").passes_h200 == 5  # the preset itself is unchanged


def test_at_size_floor_at_128k_and_8k():
    h200 = get_gpu("h200")
    f = workload_floor(VerifyWorkload(ctx_len=131072), h200)
    assert f.floor_ms * 1e3 == pytest.approx(33.7, abs=0.05) and f.at_size_ms * 1e3 == pytest.approx(44.4, abs=0.05)
    assert f.fixed_us == pytest.approx(12.0, abs=0.01) and f.fixed_share < 0.5
    small = workload_floor(VerifyWorkload(ctx_len=8192), h200)
    assert small.fixed_share > 0.8 and "the fixed part is most of the time" in at_size_line(small)
    assert "outside the 75 MB to 1.2 GB it was fitted over" in small.at_size_note


def test_at_size_floor_in_analyze_model_and_bench():
    out = CliRunner().invoke(main, ["analyze", str(RING[64])]).output
    assert "at-size floor: 44.44 µs per layer" in out and "1.59x from the at-size floor 0.04444 ms" in out
    model = CliRunner().invoke(main, ["model", "--ctx", "8k"]).output
    assert "at size      14.06 µs per layer" in model and "the fixed part is most of the time" in model
    saved = ROOT / "docs" / "results" / "h200-bench-scaling.json"
    bench = CliRunner().invoke(main, ["bench", "--from", str(saved)]).output
    assert "at-size ms  gap at size" in bench and "0.0444      1.66x" in bench


def test_unreadable_pc_samples_become_a_note_not_a_failure(tmp_path):
    from roofline.api import pc_samples_of

    bad = tmp_path / "bad.ncu-rep"
    bad.write_text("not a report")  # ncu_report reads no launches from it: an empty table, no crash
    table, note = pc_samples_of(bad)
    assert table is not None and table.frame.empty and note is None
    table, note = pc_samples_of(tmp_path / "gone.ncu-rep")
    assert table is None and note.startswith("PC samples not read") and "gone.ncu-rep: no such report" in note


def test_report_has_the_at_size_floor_and_the_waits_section(tmp_path):
    out = tmp_path / "report.md"
    assert CliRunner().invoke(main, ["report", str(RING[64]), "-o", str(out)]).exit_code == 0
    md = out.read_text()
    assert "at-size floor: 44.44 µs per layer" in md and "2.10x the floor, 1.59x the at-size floor." in md
    assert "## Where the warps wait" in md and "| role barrier | 33.9% |" in md
    assert (tmp_path / "report_waits.png").is_file() and (tmp_path / "report_waits.svg").is_file()


def test_a_source_capture_names_each_line_with_its_text():
    """`roofline profile --source` on the H200 (5 replay passes: the verdict preset's 4 + 1): the ring
    kernel's top lines carry their source text, and the handoff wait leads."""
    run = roofline.load(FIXTURES / "runs" / "h200-triton_mla_fast-ring-128k-p64-source")
    lines = run.stalls_by_line
    ring = lines[lines["kernel"] == "_gluon_ring_kernel"]
    assert "mbarrier.wait(p_bar, t & 1)" in " ".join(ring["line_text"].astype(str).head(3))
    ring_kernel = next(k for k in run.analysis.kernels if k.kernel == "_gluon_ring_kernel")
    assert "pipelined" in ring_kernel.cause and "occupancy" not in (ring_kernel.advice or "")


H64 = {k: RUNS / f"h200-{k}-h64-128k-p64-source" for k in ("triton_mla_fast", "flashmla")}


def test_at_64_heads_the_seesaw_waits_on_its_mmas_and_flashmla_is_tensor_bound():
    """128k, 64 heads, page 64, chain mask, with source counters (tests/fixtures/README.md): the seesaw
    (0.3294 ms a step timed) gets the pipelined "math is late" cause with its waits; FlashMLA's split
    kernel (0.2613 ms) is tensor-pipe-bound, and is not told to use the wgmma it already issues."""
    ours = _kernel(roofline.load(H64["triton_mla_fast"]), "_gluon_seesaw_kernel")
    assert (ours.bound, ours.cause) == ("latency", "pipelined: the math is late")
    assert "occupancy" not in ours.advice and "registers" not in ours.advice
    share = ours.waits.by_class
    assert max(share, key=share.get) == "MMA wait" and share["load barrier"] > share["role barrier"] > 0
    theirs = _kernel(roofline.load(H64["flashmla"]), "flash_fwd_splitkv_mla_kernel")
    assert (theirs.bound, theirs.roof) == ("compute", "tensor pipe")
    assert "wgmma" not in theirs.advice and "on warpgroup MMAs already" in theirs.advice
    assert any(e.startswith("one block per SM by design") and "warpgroup MMAs" in e for e in theirs.evidence)


def test_a_tensor_bound_kernel_without_warpgroup_mmas_keeps_the_faster_mma_advice():
    """The advice changes only for a kernel that already issues warpgroup MMAs one block per SM: with
    no SASS and no launch limits holding the SM, the classic advice stays."""
    m = dict(sm_throughput_pct=80.0, memory_throughput_pct=30.0, tensor_pipe_pct=80.0, grid_size=1000, sm_count=132)
    assert "wgmma on Hopper" in classify(m, attention=True).advice
    held = dict(m, occupancy_limit_registers=1, occupancy_limit_shared_mem=1)
    assert "on warpgroup MMAs already" in classify(held, attention=True).advice
