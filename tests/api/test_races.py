"""Two commands writing one place, and a signal mid-way, never leave a silently wrong or
mixed output. Every writer goes through profiler/staging.py (a hidden temporary beside the output, moved
into place in one step; what appeared meanwhile refused unless forced); a sweep folder is held by one
command; SIGTERM ends a sweep as it ends a profile. Each test fails without its fix (the old behaviour in
its comment); none depends on the machine's speed: a race is made to happen, not waited for."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from profiler.staging import OutputExists, Staged, identity
from roofline.cli import main
from tests.paths import ROOT, SAMPLE_RUN
from tests.stubs import alive, hanging_tool, ncu_stub

DECODE = ROOT / "tests" / "fixtures" / "h200" / "runs" / "h200-triton_mla_decode-128k-p64"
ERR_NVGPUCTRPERM = (  # ncu's words as NVIDIA documents them (tests/api/test_failures.py)
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
    "Counters on the target device 0. For instructions on enabling permissions and to get more "
    "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# -- the mechanism ---------------------------------------------------------------------------------------


def test_of_two_outputs_to_one_place_the_first_is_whole_and_the_second_leaves_nothing(tmp_path):
    finals = [tmp_path / "report.md", tmp_path / "report_roofline.png"]
    a, b = Staged(finals), Staged(finals)  # both began before either finished: neither saw the other
    for staged, who in ((a, "a"), (b, "b")):
        for f in finals:
            staged.path(f).write_text(who)
    assert a.commit() == finals
    with pytest.raises(OutputExists, match="report.md: appeared while this was written"):
        b.commit()
    assert [f.read_text() for f in finals] == ["a", "a"]  # nothing of b's mixed in
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md", "report_roofline.png"]  # no temporaries


def test_an_owned_file_changed_meanwhile_is_refused_and_a_kept_output_says_where(tmp_path):
    mine = tmp_path / "h200.json"
    mine.write_text("old calibration\n")
    seen = identity(mine)  # when calibrate began measuring
    mine.write_text("another calibrate's numbers\n")  # finished first
    from roofline.catalogue.gpus import save_measured

    with pytest.raises(OutputExists, match="changed while this was written .*; this one is kept at") as info:
        save_measured(mine, {"read_gbps": 4000.0}, seen=seen)
    assert mine.read_text() == "another calibrate's numbers\n"  # was replaced by whichever wrote last
    kept = str(info.value).split("kept at ")[1].split(" (")[0]
    assert json.loads((tmp_path / os.path.basename(kept) / "h200.json").read_text()) == {"read_gbps": 4000.0}
    save_measured(mine, {"read_gbps": 4000.0}, seen=identity(mine))  # unchanged since: replaced
    assert json.loads(mine.read_text()) == {"read_gbps": 4000.0}


def test_two_default_named_runs_in_one_second_are_both_kept(tmp_path):
    from profiler.run_writer import RunWriter

    a, b = RunWriter(tmp_path / "run", unique=True), RunWriter(tmp_path / "run", unique=True)
    assert a.commit() == tmp_path / "run"
    assert b.commit() == tmp_path / "run-2"  # was: "appeared while this run was being written", left hidden


def test_run_files_are_strict_json(tmp_path):
    from profiler.run_writer import RunWriter

    w = RunWriter(tmp_path / "run")
    w.write_json("analysis", {"gap": float("nan"), "step": [1.0, float("inf")]})
    assert json.loads((w.path / "analysis.json").read_text()) == {"gap": None, "step": [1.0, None]}  # was NaN


# -- report: a second report to the same place ----------------------------------------------------------------


def test_a_report_that_appears_while_one_is_written_wins_and_nothing_is_mixed(tmp_path, monkeypatch):
    import reports.markdown as md

    out = tmp_path / "same" / "report.md"
    render = md.render_markdown

    def another_report_lands_first(*args, **kwargs):  # the other command finishes while this one draws
        out.parent.mkdir(exist_ok=True)
        out.write_text("the other report\n")
        return render(*args, **kwargs)

    monkeypatch.setattr(md, "render_markdown", another_report_lands_first)
    r = cli("report", SAMPLE_RUN, "-o", out)
    assert r.exit_code == 2 and "report.md: appeared while this was written" in r.output  # was exit 0, overwritten
    assert out.read_text() == "the other report\n" and sorted(p.name for p in out.parent.iterdir()) == ["report.md"]


@pytest.mark.subprocess
def test_two_report_commands_at_once_write_one_whole_report(tmp_path):
    out = tmp_path / "same" / "report.md"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "roofline", "report", str(src), "-o", str(out)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for src in (SAMPLE_RUN, DECODE)
    ]
    codes = sorted(p.wait(timeout=300) for p in procs)
    assert codes == [0, 2]  # one written, the other refused (it began after the first, or lost the race)
    md = out.read_text()
    source = "h200-triton_mla-128k" if "h200-triton_mla-128k" in md.split("\n", 3)[2] else "h200-triton_mla_decode"
    for svg in out.parent.glob("*.svg"):  # every chart is the report's own
        assert source in svg.read_text()


# -- bench: an earlier bench is refused before the GPU is timed ---------------------------------------------


def test_bench_refuses_an_earlier_bench_before_timing_anything(tmp_path):
    out = tmp_path / "bench"
    out.mkdir()
    (out / "bench.json").write_text("{}")
    r = cli("bench", "-o", out, "--kernel", "read", "--ctx", "8k")
    assert r.exit_code == 2 and "bench.json: already exists; pass --force" in r.output  # was overwritten after
    assert (out / "bench.json").read_text() == "{}"


# -- sweep: one command a folder, a signal, no ncu, a failure every point repeats ----------------------------


def test_a_second_sweep_into_a_folder_being_swept_is_refused(tmp_path):
    from roofline.pipelines.sweep_dir import SweepDir

    sweep = tmp_path / "S"
    ncu = ncu_stub(tmp_path, text="unused")
    with SweepDir(sweep).lock():  # another roofline command holds the folder
        r = cli("sweep", "--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "-o", sweep, "--ncu", ncu)
        assert r.exit_code == 2 and "another roofline command is writing this sweep folder (pid " in r.output
        r = cli("sweep", "--summarize", sweep, "--write")
        assert r.exit_code == 2 and "another roofline command is writing this sweep folder" in r.output
    assert not (sweep / "sweep.json").exists()  # was: both ran every point and rewrote sweep.json in turn


def test_a_sweep_without_ncu_is_one_error_and_leaves_no_folder(tmp_path):
    sweep = tmp_path / "runs" / "S"
    r = cli("sweep", "--kernel", "triton_mla,triton_mla_fast", "--ctx", "8k,32k", "-o", sweep, "--ncu", tmp_path / "no")
    assert r.exit_code == 1 and r.output.count("ncu not found") == 1, r.output  # was once a point, 8 times
    assert not (tmp_path / "runs").exists()


def test_no_counter_permission_stops_the_sweep_at_the_first_point(tmp_path):
    sweep = tmp_path / "S"
    ncu = ncu_stub(tmp_path, text=ERR_NVGPUCTRPERM, code=1)
    r = cli("sweep", "--kernel", "triton_mla,triton_mla_fast", "--ctx", "8k,32k", "-o", sweep, "--ncu", ncu)
    assert r.exit_code == 1 and "stopped at triton_mla-8k-h8-q9-p1" in r.output, r.output
    assert "every point would fail the same way, so the other 7 were not tried" in r.output  # was tried: 8 failures
    state = json.loads((sweep / "sweep.json").read_text())["points"]
    assert sorted(e["status"] for e in state.values()) == ["failed"] + ["pending"] * 7


def test_the_sweep_passes_timing_samples_and_timeout_to_each_point(tmp_path, monkeypatch):
    import roofline.cli.sweep  # noqa: F401 - its find_ncu is replaced below
    import roofline.pipelines.sweeps as sweeps

    seen = {}

    def profile(request, **kw):
        seen.update(request.settings())
        raise RuntimeError("stop here")

    monkeypatch.setattr(sweeps, "profile", profile)
    for module in (sweeps, sys.modules["roofline.cli.sweep"]):  # no ncu here: the check is not this test's
        monkeypatch.setattr(module, "find_ncu", lambda path: "ncu")
    args = ("--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "-o", tmp_path / "S")
    r = cli("sweep", *args, "--timing-samples", "5", "--timeout", "60")  # was: no such option
    assert r.exit_code == 1 and seen["timing_samples"] == 5 and seen["timeout"] == 60
    assert "to see it alone: roofline profile --kernel triton_mla" in r.output and "--timing-samples 5" in r.output
    command = cli("sweep", *args, "--timing-samples", "5", "--print-commands").output
    assert command.rstrip().endswith("--timeout 900 --timing-samples 5 --timing-rounds 4")


@pytest.mark.subprocess
def test_sigterm_ends_a_sweep_like_a_profile_with_143(tmp_path):
    ncu = hanging_tool(tmp_path)
    proc = subprocess.Popen(
        [sys.executable, "-m", "roofline", "sweep", "--kernel", "triton_mla", "--ctx", "1k,2k", "--page-size", "1"]
        + ["-o", str(tmp_path / "S"), "--ncu", ncu],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120  # the tool's start, not the test's pace: generous
    while not (tmp_path / "child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err  # was 130 (the point interrupted, the sweep said Ctrl-C) or killed
    assert "interrupted: finished points are kept" in err and "Traceback" not in err
    assert not alive(int((tmp_path / "child.pid").read_text()))
    state = json.loads((tmp_path / "S" / "sweep.json").read_text())["points"]
    assert state["triton_mla-1k-h8-q9-p1"]["error"] == "interrupted (SIGTERM)"
    assert state["triton_mla-2k-h8-q9-p1"]["status"] == "pending"


# -- numbers that cannot be measured are never written as NaN -------------------------------------------------


def test_json_out_is_strict():
    from profiler.checks import strict_json

    np = pytest.importorskip("numpy")
    text = strict_json({"a": float("nan"), "b": [np.float64("inf"), np.int64(3)], "c": (1.5,)})
    assert json.loads(text) == {"a": None, "b": [None, 3], "c": [1.5]} and "NaN" not in text


def test_bench_json_written_is_strict(tmp_path):
    from roofline.pipelines.benching import read_bench

    b = read_bench(ROOT / "docs" / "results" / "h200-peers" / "bench.json")
    b.table.loc[0, "pct_of_read_bw"] = float("nan")
    files = b.save(tmp_path / "bench")
    assert "NaN" not in (tmp_path / "bench" / "bench.json").read_text() and len(files) == 2
    shutil.rmtree(tmp_path / "bench")
