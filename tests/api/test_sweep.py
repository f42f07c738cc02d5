"""`roofline sweep` on a CPU machine: an ncu stand-in replays a real H200 capture (the bundled
sample's own ncu log and report); for a point with page size 48 it prints the real log of a
profiled program that failed (tests/fixtures/h200/ncu_app_failed.log) and exits 1."""

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from roofline.cli import main
from roofline.pipelines.sweep_dir import FORMAT, SWEEP_FILE, SweepDir, SweepError
from roofline.pipelines.sweeps import plan, summarize
from tests.paths import ROOT, RUNS, SAMPLE_V1
from tests.stubs import (
    calls,
    stand_in,
)


def sweep(*args):
    return CliRunner().invoke(main, ["sweep", *map(str, args)], catch_exceptions=False)


GRID = ["--kernel", "triton_mla,triton_mla_fast", "--ctx", "8k,32k", "--page-size", "1,48"]


def state(out: Path) -> dict:
    return json.loads((out / SWEEP_FILE).read_text())["points"]


def test_point_names_are_deterministic_and_each_point_is_one_command(tmp_path):
    points = plan(["triton_mla", "triton_mla_fast"], [8192, 32768, 131072], [1, 64])
    assert len(points) == 12 and points[0].name == "triton_mla-8k-h8-q9-p1"
    assert [p.name for p in points] == [
        p.name for p in plan(["triton_mla", "triton_mla_fast"], [8192, 32768, 131072], [1, 64])
    ]
    r = sweep(
        "--kernel",
        "triton_mla,triton_mla_fast",
        "--ctx",
        "8k,32k,128k",
        "--page-size",
        "1,64",
        "--out",
        tmp_path / "S",
        "--print-commands",
    )
    lines = r.output.splitlines()
    assert r.exit_code == 0 and len(lines) == 12
    assert lines[0].startswith("roofline profile --kernel triton_mla --ctx 8k ")
    assert f" --out {tmp_path / 'S' / 'triton_mla-8k-h8-q9-p1'} " in lines[0]
    assert not (tmp_path / "S").exists()


def test_a_failed_point_is_recorded_and_the_sweep_goes_on_then_a_rerun_resumes(tmp_path):
    out = tmp_path / "S"
    ncu = stand_in(tmp_path)
    r = sweep(*GRID, "--out", out, "--ncu", ncu)
    assert r.exit_code == 1
    s = state(out)
    assert len(s) == 8
    failed = {n for n, e in s.items() if e["status"] == "failed"}
    assert failed == {
        "triton_mla-8k-h8-q9-p48",
        "triton_mla-32k-h8-q9-p48",
        "triton_mla_fast-8k-h8-q9-p48",
        "triton_mla_fast-32k-h8-q9-p48",
    }
    e = s["triton_mla_fast-8k-h8-q9-p48"]
    # the program's own exception line from the tool's log, and where the attempt was kept
    assert e["error"] == (
        "the profiled program failed with exit code 1: FileNotFoundError: [Errno 2] "
        "No such file or directory: '/nonexistent.json'"
    )
    assert Path(e["kept_at"]).is_dir() and ".failed-" in e["kept_at"]
    assert all(s[n]["status"] == "done" for n in s if n not in failed)
    assert "FAILED" in r.stdout and "triton_mla_fast  32k  1" in r.stdout
    assert "rerun the same command" in r.stderr
    assert len(calls(tmp_path)) == 8

    # rerun with the failure fixed: the 4 finished points are kept (ncu not run for them)
    ncu = stand_in(tmp_path, fail=None)
    r = sweep(*GRID, "--out", out, "--ncu", ncu)
    assert r.exit_code == 0, r.output
    assert all(e["status"] == "done" for e in state(out).values())
    rerun = calls(tmp_path)[8:]
    assert len(rerun) == 4 and all("-p48.tmp-" in c for c in rerun)
    assert "4 profiled, 4 kept from before, 0 failed" in r.stderr

    # everything done: a third run profiles nothing and still prints the table and the chart
    r = sweep(*GRID, "--out", out, "--ncu", ncu)
    assert r.exit_code == 0 and len(calls(tmp_path)) == 12 and "0 profiled, 8 kept" in r.stderr
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_folder_in_a_points_place_is_never_overwritten(tmp_path):
    out = tmp_path / "S"
    squatter = out / "triton_mla-8k-h8-q9-p1"
    squatter.mkdir(parents=True)
    (squatter / "notes.txt").write_text("mine")
    r = sweep(
        "--kernel", "triton_mla", "--ctx", "8k,32k", "--page-size", "1", "--out", out, "--ncu", stand_in(tmp_path)
    )
    assert r.exit_code == 1 and (squatter / "notes.txt").read_text() == "mine"
    e = state(out)["triton_mla-8k-h8-q9-p1"]
    assert e["status"] == "failed" and "is not a run directory" in e["error"]
    assert state(out)["triton_mla-32k-h8-q9-p1"]["status"] == "done"


def sweep_process(tmp_path, args: list[str], ncu: str, **kw) -> subprocess.CompletedProcess:
    """`python -m roofline sweep ARGS --ncu NCU` in its own process (so that a real signal can reach it)."""
    return subprocess.run(
        [sys.executable, "-m", "roofline", "sweep", *args, "--ncu", ncu],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=tmp_path,
        timeout=120,
        **kw,
    )


def sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_keeps_finished_points_and_says_how_to_resume(tmp_path):
    """A real SIGINT to the sweep process while its third point is being profiled."""
    out = tmp_path / "S"
    args = ["--kernel", "triton_mla", "--ctx", "8k,32k,128k,256k", "--page-size", "1", "--out", str(out)]
    ncu = stand_in(tmp_path, fail=None, interrupt="-128k-h8-q9-p1.tmp-")
    # a shell's background job inherits SIGINT ignored: Ctrl-C as a terminal sends it
    p = sweep_process(tmp_path, args, ncu, preexec_fn=sigint_default)
    assert p.returncode == 130, p.stderr
    assert "Traceback" not in p.stderr
    assert "resume with:\n  roofline sweep --kernel triton_mla --ctx 8k,32k,128k,256k" in p.stderr
    s = state(out)
    assert [s[n]["status"] for n in s] == ["done", "done", "interrupted", "pending"]
    assert ".failed-" in s["triton_mla-128k-h8-q9-p1"]["kept_at"]
    assert len(calls(tmp_path)) == 3  # 256k never started
    assert (out / "summary.csv").exists() and "PENDING" in p.stdout

    ncu = stand_in(tmp_path, fail=None)
    p = sweep_process(tmp_path, args, ncu)
    assert p.returncode == 0, p.stderr
    assert [c.split("--spec ")[1].split("/")[-2].split(".tmp-")[0] for c in calls(tmp_path)[3:]] == [
        ".triton_mla-128k-h8-q9-p1",
        ".triton_mla-256k-h8-q9-p1",
    ]
    assert all(e["status"] == "done" for e in state(out).values())


def test_gpus_spread_points_over_one_worker_per_gpu(tmp_path):
    out = tmp_path / "S"
    r = sweep(*GRID, "--out", out, "--ncu", stand_in(tmp_path), "--gpus", "0,1")
    assert r.exit_code == 1  # the four page-48 points fail, as without --gpus
    s = state(out)
    assert len(s) == 8 and sum(e["status"] == "done" for e in s.values()) == 4
    seen = {}
    for c in calls(tmp_path):
        gpu, rest = c.split(" ", 1)
        point = rest.split("--spec ")[1].split("/")[-2].split(".tmp-")[0].lstrip(".")
        seen[point] = gpu.removeprefix("gpu=")
    assert len(seen) == 8  # each point profiled exactly once
    for name, e in s.items():
        assert e["gpu"] in ("0", "1") and seen[name] == e["gpu"]  # the child saw the worker's GPU only


def test_summarize_a_job_array_folder_without_sweep_json(tmp_path):
    """Each point run as its own `roofline profile ... --out SWEEP/POINT` (a job array's tasks)."""
    out = tmp_path / "S"
    ncu = stand_in(tmp_path, fail=None)
    r = sweep(
        "--kernel", "triton_mla", "--ctx", "8k,128k", "--page-size", "1", "--out", out, "--ncu", ncu, "--print-commands"
    )
    runner = CliRunner()
    for line in r.output.splitlines():
        argv = line.split()[1:]
        assert runner.invoke(main, argv, catch_exceptions=False).exit_code == 0
    assert not (out / SWEEP_FILE).exists()
    r = sweep("--summarize", out, "--write")
    assert r.exit_code == 0
    rows = [ln.split() for ln in r.stdout.splitlines()[2:]]
    # the replayed capture is the bundled sample's (15.513 ms per step); the floor is each point's own
    assert rows == [
        ["triton_mla", "8k", "1", "8", "9", "15.5127", "0.0021", "7250.1x", "latency", "(small", "grid)"],
        ["triton_mla", "128k", "1", "8", "9", "15.5127", "0.0337", "460.6x", "latency", "(small", "grid)"],
    ]
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = (out / "sweep.svg").read_text()
    assert svg.lstrip().startswith("<?xml") and "</svg>" in svg and "floor (heads 8, q_len 9)" in svg
    table = summarize(out)
    assert list(table["status"]) == ["done", "done"] and table["gap"].iloc[1] == pytest.approx(460.6, abs=0.1)


def test_summarize_the_bundled_run_as_a_point(tmp_path):
    shutil.copytree(SAMPLE_V1, tmp_path / "triton_mla-128k-h8-q9-p1")
    (tmp_path / "triton_mla-128k-h8-q9-p1.failed-20261130-000000").mkdir()  # a kept failed attempt
    r = sweep("--summarize", tmp_path, "--format", "json")
    (row,) = json.loads(r.stdout)
    assert row["step_ms"] == pytest.approx(15.239, abs=1e-3) and row["bound"] == "latency (small grid)"
    folder = SweepDir.open(tmp_path)
    assert folder.runs() == [tmp_path / "triton_mla-128k-h8-q9-p1"]  # the kept failed attempt is not a run


def test_a_folder_that_is_not_a_sweep_is_refused(tmp_path):
    """A run directory, or a folder of other files, is never written into as a sweep nor read as one."""
    run = tmp_path / "run"
    shutil.copytree(SAMPLE_V1, run)
    before = sorted(p.name for p in run.iterdir())
    ncu = stand_in(tmp_path, fail=None)
    r = sweep("--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--out", run, "--ncu", ncu)
    assert r.exit_code == 2 and f"{run}: is a run directory (it has a manifest), not a sweep folder" in r.output
    assert sorted(p.name for p in run.iterdir()) == before and calls(tmp_path) == []
    r = sweep("--summarize", run)
    assert r.exit_code == 2 and "is a run directory" in r.output and "Traceback" not in r.output
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    r = sweep("--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--out", mine, "--ncu", ncu)
    assert (
        r.exit_code == 2
        and f"{mine}: not a sweep folder (no sweep.json, and files no sweep writes: notes.txt)" in r.output
    )
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"] and calls(tmp_path) == []
    with pytest.raises(SweepError, match="no sweep.json and no run directories: not a sweep"):
        SweepDir.open(mine)


def test_sweep_json_is_replaced_in_one_step(tmp_path, monkeypatch):
    """A write that fails part-way (a bad value, a crash before the rename) leaves the old sweep.json
    whole and no temporary file beside it."""
    folder = SweepDir.create(tmp_path / "S")
    folder.write_state({"format": FORMAT, "points": {"a": {"status": "done"}}})
    old = (tmp_path / "S" / SWEEP_FILE).read_text()
    with pytest.raises(TypeError):
        folder.write_state({"format": FORMAT, "points": {"a": {"status": object()}}})

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("roofline.pipelines.sweep_dir.os.replace", crash)
    with pytest.raises(OSError, match="No space left"):
        folder.write_state({"format": FORMAT, "points": {"b": {"status": "done"}}})
    assert (tmp_path / "S" / SWEEP_FILE).read_text() == old and folder.state()["points"] == {"a": {"status": "done"}}
    assert sorted(p.name for p in (tmp_path / "S").iterdir()) == [SWEEP_FILE]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--summarize", "/nonexistent/sweep"], "no such sweep folder"),
        (["--kernel", "triton_mla", "--ctx", "8q"], "Invalid value for --ctx: '8q': context length '8q'"),
        (["--kernel", "triton_mla", "--ctx", "8k,,32k"], "an empty item between commas"),
        (["--kernel", "nope"], "unknown kernel 'nope'"),
        (["--kernel", "triton_mla", "--gpus", "0,x"], "'0,x': 'x' is not a GPU index"),
        (["--ctx", "8k"], "--kernel is required"),
    ],
)
def test_bad_input_exits_2(args, message):
    r = sweep(*args)
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


@pytest.mark.parametrize(
    "points,message",
    [
        ({"x": "bad"}, "points['x'] must be an object"),
        (None, "not a roofline sweep file"),
    ],
)
def test_a_damaged_sweep_json_is_one_line(tmp_path, points, message):
    (tmp_path / "S").mkdir()
    data = {"format": FORMAT, "points": points} if points is not None else {"format": FORMAT}
    (tmp_path / "S" / SWEEP_FILE).write_text(json.dumps(data))
    r = sweep("--summarize", tmp_path / "S")
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output


def test_a_run_whose_spec_cannot_be_read_is_one_line_in_a_summary(tmp_path):
    point = tmp_path / "S" / "triton_mla_fast-128k-h8-q9-p64"  # a point folder of a job array (no sweep.json)
    shutil.copytree(RUNS / "h200-triton_mla_fast-ring-128k-p64", point)
    (point / "spec.json").write_text("{")
    r = sweep("--summarize", tmp_path / "S")
    assert r.exit_code == 2 and f"{point / 'spec.json'}: not valid JSON" in r.output and "Traceback" not in r.output
