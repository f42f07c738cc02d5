"""The validation suite: probe kernels with a bound known by construction, captured on the H200."""

import pytest
from click.testing import CliRunner

import roofline
from kernels.errors import CaptureFailed
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from profiler.rundir import RunDir
from roofline.analysis.probe_checks import EXPECTED, check_probe
from roofline.analysis.summary import summarize
from roofline.cli import main
from roofline.pipelines.probes import validate
from tests.paths import PROBES, SAMPLE_RUN


@pytest.mark.parametrize("name", list(EXPECTED))
def test_probe_verdict_and_cause(name):
    (k,) = summarize(tidy_launches(read_ncu_report(PROBES / f"{name}.ncu-rep"))).kernels
    check = check_probe(name, k.bound, k.roof, k.cause)
    assert check.ok, check.message
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
    check = check_probe("small_grid", "bandwidth", "DRAM", None)
    assert not check.ok and "expected latency (small grid)" in check.message


def probe_ncu(tmp_path, probe: str, code: int = 0) -> str:
    """An ncu that prints a real ncu log's lines for one launch and writes the probe's real H200 report."""
    path = tmp_path / "ncu"
    path.write_text(
        f"#!/bin/sh\nsed -n 2,4p '{SAMPLE_RUN / 'profile.ncu.log'}'\n"
        f'while [ "$1" != "--export" ]; do shift; done\ncp \'{PROBES / probe}.ncu-rep\' "$2.ncu-rep"\nexit {code}\n'
    )
    path.chmod(0o755)
    return str(path)


def test_validate_writes_each_probe_as_a_run(tmp_path):
    """validate goes through the run writer: each probe is a run directory that `load` re-reads."""
    result = validate(["stream_copy"], out=tmp_path / "v", ncu=probe_ncu(tmp_path, "stream_copy"))
    (check,) = result.checks
    assert result.ok and check.ok and check.run == tmp_path / "v" / "stream_copy"
    assert RunDir(check.run).manifest().status == "complete"
    run = roofline.load(check.run)
    assert run.analysis.kernels[0].bound == "bandwidth"


def test_validate_keeps_a_failed_capture(tmp_path):
    ncu = probe_ncu(tmp_path, "stream_copy", code=1)
    with pytest.raises(CaptureFailed) as info:
        validate(["stream_copy"], out=tmp_path / "v", ncu=ncu)
    (kept,) = (tmp_path / "v").glob("stream_copy.failed-*")
    assert info.value.kept_at == kept and (kept / "profile.ncu.log").exists()
    assert f"(full log: {kept / 'profile.ncu.log'})" in str(info.value) and ".tmp-" not in str(info.value)


def test_validate_refuses_an_unknown_probe(tmp_path):
    r = CliRunner().invoke(main, ["validate", "--probe", "nope", "--out", str(tmp_path / "v")])
    assert r.exit_code == 2 and "nope" in r.output and "stream_copy" in r.output
    assert not (tmp_path / "v").exists()
