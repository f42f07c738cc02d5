import dataclasses
import json

import pytest

from kernels.errors import BadInput
from kernels.spec import VerifyWorkload
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from roofline.analysis.floor import Floor, Step
from roofline.analysis.summary import summarize
from roofline.analysis.verdict import agrees_with_ncu, classify
from tests.paths import FULL_SET, SAMPLE_V1, TORCH_DEFAULT


@pytest.mark.parametrize(
    "sm,mem,dram,waves,bound,cause",
    [
        (20, 30, 25, 0.5, "latency", "small grid"),
        (20, 30, 25, 4.0, "latency", "low throughput: too little work in flight"),
        (20, 30, 25, None, "latency", "low throughput: too little work in flight"),
        (90, 40, 30, 4.0, "compute", "compute pipes lead memory by 10+ points"),
        (30, 92, 91, 4.0, "bandwidth", "memory leads compute by 10+ points"),
        (70, 75, 74, 4.0, "bandwidth", "balanced: compute and memory within 10 points"),
        (
            93,
            94,
            19,
            1.0,
            "compute",
            "balanced, with memory traffic on-chip: SM pipes near the roof, DRAM lightly used",
        ),
        (59.9, 59.9, None, None, "latency", "low throughput: too little work in flight"),
        (60, 45, None, None, "compute", "compute pipes lead memory by 10+ points"),
    ],
)
def test_rule_thresholds(sm, mem, dram, waves, bound, cause):
    v = classify(dict(sm_throughput_pct=sm, memory_throughput_pct=mem, dram_throughput_pct=dram, waves_per_sm=waves))
    assert (v.bound, v.cause) == (bound, cause)
    assert v.evidence and f"{sm:.1f}%" in v.evidence[0]


@pytest.mark.parametrize("sm,mem", [(None, 50), (50, float("nan")), (None, None)])
def test_missing_metrics_are_unknown(sm, mem):
    v = classify(dict(sm_throughput_pct=sm, memory_throughput_pct=mem))
    assert v.bound == "unknown" and "missing metric" in v.evidence[0]


def test_sample_capture_triton_mla_is_a_small_grid():
    launches = tidy_launches(read_ncu_report(SAMPLE_V1 / "profile.ncu-rep"))
    a = summarize(launches, VerifyWorkload(ctx_len=131072), iterations=3)
    (k,) = a.kernels
    assert k.launches == 3 and k.bound == "latency" and k.cause == "small grid"
    assert any("grid of 8 blocks on 132 SMs" in e for e in k.evidence)
    assert k.top_stalls[0]["reason"] == "long_scoreboard"
    assert k.ncu_rule.startswith("Small Grid")  # ncu's own rule agrees
    assert a.floor.bound == "bandwidth" and a.floor.kv_bytes == (131072 + 9) * 1152
    assert k.gap_to_floor > 100  # far from the floor: the point of the sample
    assert a.step.gap == pytest.approx(k.gap_to_floor, rel=0.01)


def test_floor_and_step_round_trip_through_to_dict():  # as analysis.json and sweep rows hold them
    a = summarize(tidy_launches(read_ncu_report(SAMPLE_V1 / "profile.ncu-rep")), VerifyWorkload(), iterations=3)
    d = json.loads(json.dumps(a.to_dict()))  # as analysis.json holds it
    assert d["floor"] == a.floor.to_dict() and d["step"] == a.step.to_dict()
    assert Floor.from_dict(d["floor"]) == a.floor and Step.from_dict(d["step"]) == a.step
    assert a.step == Step.of(a.step.kernel_ms_per_step, a.floor) and a.step.gap_at_size < a.step.gap
    no_fit = Step.of(1.0, dataclasses.replace(a.floor, at_size_ms=None))  # a GPU without a measured read fit
    assert list(no_fit.to_dict()) == ["kernel_ms_per_step", "floor_ms", "gap"] and no_fit.gap_at_size is None
    assert Step.from_dict(no_fit.to_dict()) == no_fit
    with pytest.raises(BadInput, match="^step: unknown fields bogus$"):
        Step.from_dict({**d["step"], "bogus": 1})
    with pytest.raises(BadInput, match="^floor: missing fields flops, kv_bytes$"):
        Floor.from_dict({k: v for k, v in d["floor"].items() if k not in ("kv_bytes", "flops")})


def test_other_kernels_get_sensible_verdicts():
    a = summarize(tidy_launches(read_ncu_report(TORCH_DEFAULT)))
    bounds = {k.kernel.split("_")[0]: k.bound for k in a.kernels}
    assert bounds == {"distribution": "compute", "nvjet": "compute"}  # RNG fill and a bf16 GEMM
    assert a.floor is None and a.kernels[0].gap_to_floor is None
    assert any("absent from the report" in n for n in a.notes)
    full = summarize(tidy_launches(read_ncu_report(FULL_SET)))
    assert full.kernels[0].bound == "latency"


def test_launch_with_missing_values_is_unknown_not_a_crash():
    launches = tidy_launches(read_ncu_report(SAMPLE_V1 / "profile.ncu-rep"))
    frame = launches.frame
    frame["sm_throughput_pct"] = float("nan")
    for col in [c for c in frame if c.startswith("stall_")] + ["waves_per_sm", "duration_ms"]:
        frame[col] = float("nan")
    a = summarize(launches, VerifyWorkload(ctx_len=131072), iterations=3)
    assert a.kernels[0].bound == "unknown" and a.kernels[0].gap_to_floor is None
    d = a.to_dict()
    assert d["kernels"][0]["duration_ms"] is None and d["kernels"][0]["top_stalls"] == []


def test_latency_causes_in_order():
    base = dict(sm_throughput_pct=10, memory_throughput_pct=20, waves_per_sm=3.0, duration_ms=1.0)
    assert classify({**base, "duration_ms": 0.002}).cause == "short launches"
    v = classify(
        {
            **base,
            "achieved_occupancy_pct": 12.5,
            "theoretical_occupancy_pct": 12.5,
            "occupancy_limit_registers": 1,
            "occupancy_limit_shared_mem": 3,
            "registers_per_thread": 255,
        }
    )
    assert v.cause == "low occupancy (registers)" and any("255 registers" in e for e in v.evidence)
    v = classify({**base, "stall_long_scoreboard": 9.0, "stall_wait": 1.0})
    assert v.cause.startswith("waiting on global memory") and "num_stages" in v.advice


def test_roofs_for_bound_kernels():
    v = classify(
        dict(
            sm_throughput_pct=20,
            memory_throughput_pct=90,
            dram_throughput_pct=20,
            duration_ms=1.0,
            l2_bytes=4.5e9,
            l2_peak_gbps=5000,
            l1_bytes=1e9,
            l1_peak_gbps=30000,
        )
    )
    assert (v.bound, v.roof) == ("bandwidth", "L2")
    v = classify(dict(sm_throughput_pct=20, memory_throughput_pct=90, dram_throughput_pct=89, duration_ms=1.0))
    assert (v.bound, v.roof) == ("bandwidth", "DRAM") and "fewer bytes" in v.advice
    v = classify(dict(sm_throughput_pct=90, memory_throughput_pct=30, tensor_pipe_pct=85, fma_pipe_pct=10))
    assert (v.bound, v.roof) == ("compute", "tensor pipe")


@pytest.mark.parametrize(
    "bound,rule,agree",
    [
        ("latency", "Small Grid: x", True),
        ("compute", "Small Grid: x", False),
        ("bandwidth", "High Throughput: x", True),
        ("latency", None, None),
        ("compute", "Something New: x", None),
    ],
)
def test_agreement_with_ncu(bound, rule, agree):
    assert agrees_with_ncu(bound, rule) is agree
