"""The timing pass of `roofline profile` (a child with no profiler attached writes timing.json) and
the timing method `roofline bench` names, without a GPU: the wiring, the skip, the failure."""

import json

from click.testing import CliRunner

from profiler.rundir import MANIFEST
from roofline.cli import main
from tests.paths import SAMPLE_RUN
from tests.stubs import (
    replaying_ncu,
)

BENCH_JSON = SAMPLE_RUN.parent.parent.parent.parent / "docs" / "results" / "h200-bench.json"


def cli(*args):
    return CliRunner().invoke(main, list(map(str, args)), catch_exceptions=False)


def device_ncu(tmp_path):
    """An ncu stand-in that replays the sample's real log and report and, as the profiled child
    does on a GPU, writes harness.json with the device (so the timing pass then runs)."""
    stub = tmp_path / "ncu-device"
    stub.write_text(
        "#!/bin/sh\n"
        f"cat '{SAMPLE_RUN / 'profile.ncu.log'}'\n"
        "while [ $# -gt 0 ]; do\n"
        '  case "$1" in\n'
        '    --export) rep="$2" ;;\n'
        '    --info) echo \'{"device": "NVIDIA H200", "torch": "2.11", "triton": "3.6"}\' > "$2" ;;\n'
        "  esac\n"
        "  shift\n"
        "done\n"
        f'[ -z "$rep" ] || cp \'{SAMPLE_RUN / "profile.ncu-rep"}\' "$rep.ncu-rep"\n'
    )  # not for --version
    stub.chmod(0o755)
    return str(stub)


def test_no_device_recorded_means_no_timing_pass_and_a_note(tmp_path):
    out = tmp_path / "run"
    r = cli("profile", "--ctx", "128k", "--out", out, "--ncu", replaying_ncu(tmp_path))
    assert r.exit_code == 0, r.output
    notes = json.loads((out / "analysis.json").read_text())["notes"]
    assert any(n.startswith("no timing pass: the profiled child recorded no device") for n in notes)
    assert not (out / "timing.json").exists()


def test_the_timing_pass_runs_the_harness_without_a_profiler_and_its_failure_is_kept(tmp_path):
    """On this CPU machine the timing child finds no CUDA device (exit 3): the run fails, is kept
    with the child's log, and its command line is the harness's with --timing-samples."""
    out = tmp_path / "run"
    r = cli("profile", "--ctx", "128k", "--out", out, "--ncu", device_ncu(tmp_path), "--timing-samples", "12")
    assert r.exit_code == 1
    assert "the timing pass failed (exit code 3); --timing-samples 0 skips it" in r.output
    (failed,) = tmp_path.glob("run.failed-*")
    assert "harness: no CUDA device visible to torch" in (failed / "timing.log").read_text()
    m = json.loads((failed / MANIFEST).read_text())
    timing_cmd = m["commands"][-1]
    assert "-m profiler.harness" in timing_cmd and "--kernel triton_mla" in timing_cmd
    assert "--timing-samples 12 --timing-out" in timing_cmd and "ncu" not in timing_cmd.split()[0]
    assert "timing.log" in m["logs"]


def test_timing_samples_zero_skips_the_pass(tmp_path):
    out = tmp_path / "run"
    r = cli("profile", "--ctx", "128k", "--out", out, "--ncu", device_ncu(tmp_path), "--timing-samples", "0")
    assert r.exit_code == 0, r.output
    assert [e["tool"] for e in json.loads((out / MANIFEST).read_text())["reports"]] == ["ncu"]
    assert cli("profile", "--timing-samples", "-1").exit_code == 2


def test_bench_says_how_it_timed():
    r = cli("bench", "--from", BENCH_JSON)  # saved before the option: do_bench's flush
    assert r.exit_code == 0, r.output
    assert "timed by: flush (triton.testing.do_bench: L2 flushed (256 MB zeroed) before each call)" in r.output
    help_text = cli("bench", "--help").output
    assert "--method [rotated|flush]" in help_text and "[default: rotated]" in help_text
