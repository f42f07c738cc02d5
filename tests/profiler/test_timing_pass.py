"""The timing pass of `roofline profile` (a child with no profiler attached writes timing.json) and
the timing method `roofline bench` names, without a GPU: the wiring, the skip, the failure."""

import json
import sys

import pytest
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
    assert not (out / "timing.log").exists()  # the round server started ahead, ended unused, leaves nothing


def test_the_timing_pass_runs_the_harness_without_a_profiler_and_its_failure_is_kept(tmp_path):
    """On this CPU machine the timing child finds no CUDA device (exit 3): the run fails in its first
    round, is kept with the child's log, and its command line is the harness's with --timing-samples
    (12 samples over the default 4 rounds: 3 a round)."""
    out = tmp_path / "run"
    r = cli("profile", "--ctx", "128k", "--out", out, "--ncu", device_ncu(tmp_path), "--timing-samples", "12")
    assert r.exit_code == 1
    assert "the timing pass failed in round 1 of 4 (exit code 3); --timing-samples 0 skips it" in r.output
    (failed,) = tmp_path.glob("run.failed-*")
    log = (failed / "timing.log").read_text()
    assert "harness: no CUDA device visible to torch" in log
    # the round server was started before the capture and waited, imported, for its rounds
    assert log.index("imported; waiting for the rounds") < log.index("# round 1 of 4")
    m = json.loads((failed / MANIFEST).read_text())
    timing_cmd = m["commands"][-1]
    assert "-m profiler.harness" in timing_cmd and "--kernel triton_mla" in timing_cmd
    assert "--timing-samples 3 --timing-out" in timing_cmd and "ncu" not in timing_cmd.split()[0]
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
    assert "--method [rotated|flush|layered]" in help_text and "[default: rotated]" in help_text


def stand_in_harness(tmp_path, fail_round=None):
    """A harness stand-in: writes one round's timing.json (samples from a counter file) and, in round
    `fail_round`, exits 3 as the harness does without a GPU."""
    count = tmp_path / "count"
    script = tmp_path / "harness.py"
    script.write_text(
        "import json, sys, pathlib\n"
        f"c = pathlib.Path({str(count)!r})\n"
        "i = int(c.read_text()) if c.exists() else 0\n"
        "c.write_text(str(i + 1))\n"
        f"if i == {fail_round!r}:\n"
        "    print('harness: no CUDA device visible to torch'); sys.exit(3)\n"
        "a = sys.argv\n"
        "n = int(a[a.index('--timing-samples') + 1])\n"
        "d = {'format': 'roofline-timing/2', 'method': 'rotated', 'input_sets': 4, 'replays_per_sample': 8,\n"
        "     'samples_ms': [0.07 + i * 0.001] * n, 'rounds_ms': [[0.07 + i * 0.001] * n], 'round_kind': 'one',\n"
        "     'kernel': 'k', 'workload': {'ctx_len': 1}}\n"
        "pathlib.Path(a[a.index('--timing-out') + 1]).write_text(json.dumps(d))\n"
        "print(f'harness: timing pass of k: {n} samples')\n"
    )
    return [sys.executable, str(script), "--kernel", "k", "--iters", "1"]


def test_timed_rounds_runs_one_process_a_round_and_merges_them(tmp_path):
    from roofline.pipelines.capture import timed_rounds

    seen = []
    t = timed_rounds(stand_in_harness(tmp_path), 3, 5, tmp_path / "timing.log", say=seen.append)
    assert len(t.rounds) == 3 and t.round_kind == "process" and t.n == 15
    assert t.round_medians() == pytest.approx([0.070, 0.071, 0.072])  # each round its own process
    assert [s.split(":")[0] for s in seen] == ["[timing] round 1/3", "[timing] round 2/3", "[timing] round 3/3"]
    log = (tmp_path / "timing.log").read_text()
    assert log.count("# round ") == 3 and "--timing-samples 5" in log and "--iters" not in log


def test_a_failed_round_names_its_round_and_keeps_the_log(tmp_path):
    from profiler.errors import ApplicationFailed
    from roofline.pipelines.capture import timed_rounds

    with pytest.raises(ApplicationFailed, match=r"failed in round 2 of 3 \(exit code 3\)"):
        timed_rounds(stand_in_harness(tmp_path, fail_round=1), 3, 5, tmp_path / "timing.log", say=lambda m: None)
    assert "harness: no CUDA device visible to torch" in (tmp_path / "timing.log").read_text()


def test_a_round_that_writes_no_json_is_a_one_line_error(tmp_path):
    from profiler.rundir import RunDirError
    from roofline.pipelines.capture import timed_rounds

    script = tmp_path / "harness.py"
    script.write_text(
        "import sys, pathlib\npathlib.Path(sys.argv[sys.argv.index('--timing-out') + 1]).write_text('{\"format\": ')\n"
    )
    with pytest.raises(RunDirError, match=r"round0\.json \(round 1 of the timing pass\): not valid JSON"):
        timed_rounds([sys.executable, str(script), "--iters", "1"], 3, 4, tmp_path / "t.log", say=lambda m: None)
