"""Load imbalance (roofline/analysis/imbalance.py) on the H200's skewed serving batch, one 128k request among
fifteen of 2k (tests/fixtures/README.md): the fast kernel's old grid is named load imbalance with its numbers and
the request behind its tail; FlashMLA's split kernel on the same batch (max/avg 1.03) is not; its combine, a small
grid of uneven blocks, stays a small grid; the old 64-head grid's partial last wave is not uneven work."""

import json

import pytest
from click.testing import CliRunner

import roofline
from kernels.batches import make_workload
from roofline.analysis.imbalance import IMBALANCE_EXCESS, expected_ratio, measure, plan_tail
from roofline.cli import main
from tests.paths import RUNS

FAST_SKEW = RUNS / "h200-triton_mla_fast-skew16-p64"
FLASHMLA_SKEW = RUNS / "h200-flashmla-skew16-p64"


def kernels(path):
    return {k.kernel: k for k in roofline.load(path).analysis.kernels}


def test_the_fast_kernels_old_grid_on_a_skewed_batch_is_load_imbalance():
    k = kernels(FAST_SKEW)["_gluon_seesaw_kernel"]
    assert (k.bound, k.cause) == ("latency", "load imbalance")
    line = next(e for e in k.evidence if e.startswith("load imbalance:"))
    assert "784,880 cycles, 9.9x the average SM's 79,317" in line and "90% of the SMs' time" in line
    assert any("128 blocks on 132 SMs (0.97 waves)" in e and "9.6x" in e for e in k.evidence)
    assert k.imbalance["ratio"] == pytest.approx(9.90, abs=0.01)


def test_the_tail_names_the_long_request_from_the_launch_plan():
    """The capture's grid (1, 8, 16) is the uniform schedule's (z = the batch); its plan puts request 0's 131,076
    tokens in 8 programs of 16,448 while 105 of the 128 programs carry nothing."""
    k = kernels(FAST_SKEW)["_gluon_seesaw_kernel"]
    tail = k.imbalance["tail"]
    assert tail["schedule"] == "uniform" and list(tail["grid"]) == [1, 8, 16]
    assert [r["request"] for r in tail["tail"]] == [0] and tail["longest"] == 16448 and tail["empty"] == 105
    line = next(e for e in k.evidence if e.startswith("the tail"))
    assert "request 0 (131,076 tokens, 8 programs)" in line and "longest program carries 2,052" in line
    assert "schedule='batch'" in k.advice


def test_flashmlas_balanced_split_kernel_is_not_called_imbalanced():
    ks = kernels(FLASHMLA_SKEW)
    split = ks["flash_fwd_splitkv_mla_kernel"]
    assert split.imbalance["ratio"] == pytest.approx(1.03, abs=0.01) and split.cause != "load imbalance"
    assert (split.bound, split.roof) == ("bandwidth", "DRAM")


def test_a_small_grid_of_uneven_blocks_stays_a_small_grid_with_the_imbalance_beside_it():
    """FlashMLA's combine on the skewed batch: 128 blocks at 0.19 waves, the busiest SM 8.5x the average. Under
    half a wave every SM with a block could take another: the small grid is named, the uneven blocks shown."""
    combine = kernels(FLASHMLA_SKEW)["flash_fwd_mla_combine_kernel"]
    assert combine.imbalance["ratio"] == pytest.approx(8.53, abs=0.01)
    assert (combine.bound, combine.cause) == ("latency", "small grid")
    assert any(e.startswith("its blocks' work differs too: the busiest SM was busy 8.5x") for e in combine.evidence)


def test_a_partial_last_wave_of_equal_blocks_is_the_grids_shape_not_uneven_work():
    """The old 64-head fast kernel: 135 blocks on 132 SMs, one per SM, so 3 SMs run two (max/avg 1.89). Equal
    blocks on that grid give 2/1.02 = 1.96: the kernel keeps its pipeline cause."""
    k = kernels(RUNS / "h200-triton_mla_fast-128k-h64")["_fast_split_kernel"]
    assert k.imbalance["ratio"] == pytest.approx(1.89, abs=0.01) and k.imbalance["excess"] < 1.0
    assert k.cause == "pipelined: the warps wait at the handoffs between roles"


@pytest.mark.parametrize(
    "grid,sms,waves,expected",
    [(128, 132, 0.97, 132 / 128), (8, 132, 0.06, 16.5), (135, 132, 1.0227, 2 / 1.0227), (264, 132, 2.0, 1.0)],
)
def test_what_equal_blocks_give_on_a_grid(grid, sms, waves, expected):
    assert expected_ratio(grid, sms, waves) == pytest.approx(expected)


def _latency(**busy):
    """A latency-bound launch's metrics (SM% and memory% low, no pipelined traits) with these busy cycles."""
    base = dict(sm_throughput_pct=5.0, memory_throughput_pct=10.0, duration_ms=0.2, theoretical_occupancy_pct=50.0)
    return {**base, "grid_size": 128.0, "sm_count": 132.0, "waves_per_sm": 0.97, **busy}


@pytest.mark.parametrize("ratio,uneven", [(1.16, False), (1.30, False), (1.40, True), (1.59, True)])
def test_the_threshold_sits_between_the_balanced_and_the_uneven_captures(ratio, uneven):
    """1.16 is the most a balanced capture reached (a combine kernel); 1.59 the ragged 32-request batch under the
    uniform grid (docs/results/h200-serving-g1). The grid's own 132/128 is taken out first."""
    from roofline.analysis.verdict import classify

    v = classify(_latency(sm_busy_cycles_max=ratio * 1000.0, sm_busy_cycles_avg=1000.0))
    assert (v.cause == "load imbalance") is uneven
    assert (measure(_latency(sm_busy_cycles_max=ratio, sm_busy_cycles_avg=1.0)).excess >= IMBALANCE_EXCESS) is uneven


def test_short_launches_and_a_grid_under_half_the_sms_come_first():
    from roofline.analysis.verdict import classify

    uneven = dict(sm_busy_cycles_max=9000.0, sm_busy_cycles_avg=1000.0)
    assert classify(_latency(**uneven, duration_ms=0.002)).cause == "short launches"
    assert classify(_latency(**uneven, grid_size=8.0, waves_per_sm=0.06)).cause == "small grid"
    assert classify(_latency(**uneven)).cause == "load imbalance"
    assert classify(_latency()).cause != "load imbalance"  # no busy cycles in the capture: no verdict on it


def test_the_tail_under_the_batch_schedule_and_a_grid_no_plan_gives():
    """A capture whose grid is the batch schedule's (m_blocks, items, 1) is planned as that; a grid no plan of
    today gives is said, not guessed."""
    w = make_workload(lens="mix:1x128k,15x2k", heads=16, q_len=4, page_size=64, tree_mask="chain")
    m = {"sm_count": 132.0, "grid_x": 1.0, "grid_y": 128.0, "grid_z": 1.0}
    tail = plan_tail("_gluon_seesaw_kernel", w, m, "sm_90", "NVIDIA H200")
    assert tail.schedule == "batch" and tail.longest == 1344 and tail.empty == 0
    other = plan_tail("_gluon_seesaw_kernel", w, {**m, "grid_y": 77.0}, "sm_90", "NVIDIA H200")
    assert isinstance(other, str) and "(1, 77, 1)" in other and "not named" in other
    assert plan_tail("_combine_kernel", w, m, "sm_90", None) is None


def test_text_json_and_markdown_show_it(tmp_path):
    r = CliRunner().invoke(main, ["analyze", str(FAST_SKEW)])
    assert "_gluon_seesaw_kernel: latency (load imbalance)" in r.output and "request 0 (131,076 tokens" in r.output
    assert "batch: 16 requests, prefixes 2k / 2k / 128k" in r.output
    d = json.loads(CliRunner().invoke(main, ["analyze", str(FAST_SKEW), "--format", "json"]).output)
    assert d["kernels"][0]["cause"] == "load imbalance" and d["kernels"][0]["imbalance"]["tail"]["empty"] == 105
    out = tmp_path / "report.md"
    assert CliRunner().invoke(main, ["report", str(FAST_SKEW), "-o", str(out)]).exit_code == 0
    md = out.read_text()
    assert "**latency**: load imbalance" in md and "9.9x the average" in md and "## Batch" in md
    assert "roofline profile --kernel triton_mla_fast --lens mix:1x128k,15x2k --heads 16 --q-len 4" in md
    assert (tmp_path / "report_batch.png").exists() and "report_batch.png" in md


def test_without_grid_dimensions_two_schedules_of_one_size_are_not_guessed():
    """On the skewed batch both schedules launch 128 blocks ((1, 8, 16) and (1, 128, 1)): a capture with only
    ncu's grid size (a CSV export without launch__grid_dim_*) cannot tell which ran, and says so."""
    w = make_workload(lens="mix:1x128k,15x2k", heads=16, q_len=4, page_size=64, tree_mask="chain")
    said = plan_tail("_gluon_seesaw_kernel", w, {"sm_count": 132.0, "grid_size": 128.0}, "sm_90", "NVIDIA H200")
    assert isinstance(said, str) and "both schedules launch 128 blocks" in said


SERVING_CAPTURE = RUNS.parent / "serving"  # from tests/fixtures/capture/serving_bench_h200.sh, once the lead runs it


@pytest.mark.skipif(
    not (SERVING_CAPTURE / "skew16-batch.raw.csv.gz").exists(),
    reason="the batch schedule's capture of the skewed batch is not committed yet (serving_bench_h200.sh makes it)",
)
def test_the_batch_schedules_split_kernel_on_the_skewed_batch_is_not_called_imbalanced():
    """The fast kernel's batch schedule on the skewed batch (grid (1, items, 1)): ncu measured its split kernel at
    max/avg 1.11 with four SMs idle (docs/results/h200-serving): balanced work, so no load imbalance."""
    from kernels.spec import VerifyWorkload
    from roofline.analysis.summary import summarize
    from roofline.catalogue.gpus import get_gpu

    spec = json.loads((SERVING_CAPTURE / "skew16-batch.spec.json").read_text())
    w = VerifyWorkload.from_dict(spec["workload"])
    assert w.ctx_lens == (131072,) + (2048,) * 15
    table = roofline.load(SERVING_CAPTURE / "skew16-batch.raw.csv.gz").launch_table
    split = next(k for k in summarize(table, w, gpu=get_gpu("h200")).kernels if k.kernel.startswith("_gluon"))
    assert split.cause != "load imbalance" and split.imbalance["excess"] < IMBALANCE_EXCESS
