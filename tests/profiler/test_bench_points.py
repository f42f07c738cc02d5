"""What `roofline bench` records for each point (profiler/bench.py bench_points), with the timing replaced: the
serving rows keep each batch's exact lengths, launch parameters reach the kernel's call, and a
kernel that cannot run a point is listed as skipped (the GPU's timings themselves need the H200)."""

import pytest

from kernels.batches import BenchPoint, make_workload
from profiler import bench
from roofline.pipelines.benching import serving_points


@pytest.fixture
def timed(monkeypatch):
    calls = []
    monkeypatch.setattr(
        bench, "time_read", lambda w, method, clocks: calls.append(("read", w, {})) or bench.Timed(0.05)
    )
    monkeypatch.setattr(
        bench, "time_kernel", lambda name, w, method, clocks, **kw: calls.append((name, w, kw)) or bench.Timed(0.07)
    )
    return calls


def test_serving_rows_keep_their_lengths_and_names(timed):
    points = serving_points()
    frame = bench.bench_points(["read", "triton_mla_fast_graph"], points)
    assert list(frame["row"].unique()) == [p.row for p in points]
    skew = frame[(frame.row == "skew16") & (frame.kernel == "read")].iloc[0]
    assert (
        skew.ctx_lens == ",".join(["131072"] + ["2048"] * 15) and skew.batch == 16 and skew.lens == "mix:1x128k,15x2k"
    )
    even = frame[frame.row == "even16"].iloc[0]
    assert even.ctx_lens == "" and (even.ctx_len, even.batch) == (10112, 16)
    assert [w for _, w, _ in timed][:2] == [points[0].workload] * 2  # each kernel on the row's own workload


def test_launch_parameters_reach_the_kernels_call(timed):
    w = make_workload(lens="mix:1x128k,15x2k", heads=16, q_len=4, page_size=64, tree_mask="chain")
    frame = bench.bench_points(["triton_mla_fast_graph:schedule=uniform,item_cost=0"], [BenchPoint(w, "skew16")])
    assert timed == [("triton_mla_fast_graph", w, {"schedule": "uniform", "item_cost": 0})]
    assert frame.kernel[0] == "triton_mla_fast_graph:schedule=uniform,item_cost=0" and frame.median_ms[0] == 0.07


def test_a_kernel_that_cannot_run_a_point_is_listed_not_timed(timed, monkeypatch):
    monkeypatch.setenv("ROOFLINE_FLASHMLA", "/nonexistent")
    w = make_workload(ctx="8k", page_size=64, tree_mask="chain")
    frame = bench.bench_points(["flashmla"], [BenchPoint(w)])
    assert frame.error[0].startswith("skipped: ") and timed == []


@pytest.mark.parametrize("bad", ["triton_mla_fast:schedule", "triton_mla_fast:=uniform"])
def test_a_bad_launch_parameter_is_a_clear_error(bad):
    with pytest.raises(ValueError, match="KEY=VALUE"):
        bench.launch_params(bad)


def test_a_layered_row_carries_the_gemm_between_steps(monkeypatch):
    monkeypatch.setattr(bench, "time_read", lambda w, method, clocks: bench.Timed(0.05, None, 0.063))
    monkeypatch.setattr(bench, "time_kernel", lambda name, w, method, clocks, **kw: bench.Timed(0.07))
    w = make_workload(ctx="8k", page_size=64, tree_mask="chain")
    frame = bench.bench_points(["read", "triton_mla_fast_graph"], [BenchPoint(w)], method="layered")
    assert frame.layer_ms[0] == 0.063 and frame.layer_ms.isna()[1]


def test_layered_samples_are_the_steps_less_the_gemms_alone(monkeypatch):
    """Each sample of a step with a GEMM after it, less the median of the same graph of GEMMs alone."""
    ran = []

    def samples(call, input_sets, samples=30, clocks=None):
        ran.clear()
        call(input_sets[0])
        with_step = "step" in ran
        return bench.RotatedTiming([0.130, 0.128, 0.140] if with_step else [0.060, 0.064, 0.061], 4, 2)

    monkeypatch.setattr(bench, "rotated_samples_ms", samples)
    t = bench.layered_samples_ms(lambda inp: ran.append("step"), [object()], lambda: ran.append("gemm"))
    assert t.layer_ms == pytest.approx(0.061)
    assert t.samples_ms == pytest.approx([0.069, 0.067, 0.079]) and (t.input_sets, t.replays_per_sample) == (4, 2)


def test_an_unknown_method_is_refused():
    with pytest.raises(ValueError, match="layered"):
        bench.bench_points(["read"], serving_points()[:1], method="between")
