"""The validation suite: probe kernels with a bound known by construction, captured on the H200."""

import pytest

from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from roofline.analysis import summarize
from roofline.validation import EXPECTED, check_probe
from tests.paths import PROBES


@pytest.mark.parametrize("name", list(EXPECTED))
def test_probe_verdict_and_cause(name):
    (k,) = summarize(tidy_launches(read_ncu_report(PROBES / f"{name}.ncu-rep"))).kernels
    ok, msg = check_probe(name, k.bound, k.roof, k.cause)
    assert ok, msg
    assert k.evidence and k.advice
    if k.ncu_rule:  # where ncu's own rule ran, the verdict must not contradict it
        assert k.agrees_with_ncu is not False, (k.bound, k.ncu_rule)


def test_probe_evidence_numbers():
    copy = summarize(tidy_launches(read_ncu_report(PROBES / "stream_copy.ncu-rep"))).kernels[0]
    assert copy.dram_throughput_pct > 80 and copy.hierarchy["levels"][-1]["level"] == "DRAM"
    l2 = summarize(tidy_launches(read_ncu_report(PROBES / "l2_reread.ncu-rep"))).kernels[0]
    assert l2.dram_throughput_pct < 20 and any("L2" in e for e in l2.evidence)
    mm = summarize(tidy_launches(read_ncu_report(PROBES / "matmul.ncu-rep"))).kernels[0]
    assert mm.hierarchy["compute_kind"] == "tensor" and mm.hierarchy["tflops"] > 400
    chase = summarize(tidy_launches(read_ncu_report(PROBES / "pointer_chase.ncu-rep"))).kernels[0]
    assert chase.waves_per_sm >= 1 and chase.top_stalls[0]["reason"] == "long_scoreboard"


def test_check_probe_rejects_a_wrong_verdict():
    ok, msg = check_probe("small_grid", "bandwidth", "DRAM", None)
    assert not ok and "expected latency (small grid)" in msg
