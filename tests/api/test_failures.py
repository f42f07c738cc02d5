"""The failure catalogue: each failure gives a one-line error, a non-zero exit and
keeps what was captured (the run under <out>.failed-<time>, its manifest saying why). Two writers at
once and a signal to a sweep: tests/api/test_races.py.

ncu and nsys cannot run on this CPU machine, so stand-ins print what the real tools printed on the
H200 (tests/fixtures/h200/logs/*.log and tests/fixtures/h200/*.log, tests/fixtures/capture/capture_h200_fixtures.sh)
and write the real reports captured with them. One message was not captured there:
ERR_NVGPUCTRPERM (the non-root capture, logs/ncu_non_root.log, failed earlier on a missing torch);
its text is ncu's as NVIDIA documents it (developer.nvidia.com/ERR_NVGPUCTRPERM).
"""

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

import roofline
from profiler.errors import ReportError, ToolNotFound, ToolTimeout
from profiler.ncu import check_collected, requested_metrics
from profiler.ncu_reader import read_ncu_report
from profiler.proc import group_alive, kill_group, run_tool
from roofline.cli import main
from tests.paths import FIXTURES, NO_KERNELS_LOG, ROOT, SAMPLE_RUN
from tests.stubs import (
    LOGS,
    NSYS_DIR,
    alive,
    hanging_tool,
    kept_run,
    ncu_stub,
    nsys_stub,
    stub,
)

ERR_NVGPUCTRPERM = (
    "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
    "Counters on the target device 0. For instructions on enabling permissions and to get more "
    "information see https://developer.nvidia.com/ERR_NVGPUCTRPERM"
)


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def first_line(output: str) -> str:
    """The error line (progress lines on stderr come before it)."""
    return next(line for line in output.splitlines() if line.startswith("Error: "))


# -- tools not found --------------------------------------------------------------------------


def test_neither_tool_found(tmp_path, no_tools):
    r = cli("profile", "--ctx", "1k", "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "Traceback" not in r.output
    assert (
        "no profiler found: ncu (Nsight Compute) not found" in r.output
        and "nsys (Nsight Systems) not found" in r.output
    )
    assert not list(tmp_path.glob("*run*")) and "nothing captured was lost" not in r.output  # nothing ran: no folder


def test_nsys_asked_for_but_not_found(tmp_path, no_tools, monkeypatch):
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.environ['PATH']}")
    ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    r = cli("profile", "--ctx", "128k", "--tool", "both", "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "nsys (Nsight Systems) not found: put it on PATH, set $NSYS, or pass --nsys" in r.output
    assert not list(tmp_path.glob("*run*"))  # refused before anything ran: no folder
    with pytest.raises(ToolNotFound, match="nsys not found at '/nope/nsys'"):
        roofline.profile("triton_mla", ctx="1k", tool="nsys", nsys="/nope/nsys", out=tmp_path / "b")


# -- ncu's failures ---------------------------------------------------------------------------


def test_no_counter_permission(tmp_path):
    ncu = ncu_stub(tmp_path, text=ERR_NVGPUCTRPERM, code=1)
    r = cli("profile", "--ctx", "128k", "--tool", "ncu", "--ncu", ncu, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1
    assert "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root" in first_line(r.output)
    kept, manifest = kept_run(tmp_path)
    assert "ERR_NVGPUCTRPERM" in (kept / "profile.ncu.log").read_text()


def test_no_kernel_matched_exit_zero(tmp_path):
    ncu = ncu_stub(tmp_path, log=NO_KERNELS_LOG, code=0)
    r = cli("profile", "--ctx", "128k", "--tool", "ncu", "--ncu", ncu, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and first_line(r.output).startswith("Error: ncu profiled no kernel")
    kept, manifest = kept_run(tmp_path)
    assert "No kernels were profiled" in (kept / "profile.ncu.log").read_text()


def test_unknown_metric_is_named(tmp_path):
    """ncu exits 0 and its log says nothing; the report lacks the metric (the real capture asked for
    gpu__time_duration.sum,no_such__metric.sum)."""
    plain = tmp_path / "unknown_metric.ncu-rep"
    plain.write_bytes(gzip.decompress((LOGS / "unknown_metric.ncu-rep.gz").read_bytes()))
    raw = read_ncu_report(plain)
    asked = requested_metrics(["ncu", "--metrics", "gpu__time_duration.sum,no_such__metric.sum", "python3"])
    with pytest.raises(ReportError, match=r"no value for 1 requested metric\(s\): no_such__metric.sum \(unknown"):
        check_collected(raw, asked, plain)
    # through `roofline profile`: that report lacks most of the metrics profile asks for
    ncu = ncu_stub(tmp_path, log=LOGS / "ncu_unknown_metric.log", report=plain, code=0)
    r = cli("profile", "--ctx", "128k", "--tool", "ncu", "--ncu", ncu, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "ncu exited 0 but has no value for" in first_line(r.output)
    assert "sm__issue_active.avg.pct_of_peak_sustained_elapsed" in first_line(r.output)
    kept, _ = kept_run(tmp_path)
    assert (kept / "profile.ncu-rep").exists()  # the report is kept with the failed run


SAMPLE_METRICS = requested_metrics((SAMPLE_RUN / "commands.txt").read_text().split())


def test_the_requested_metrics_are_all_in_the_bundled_capture():
    """No false alarm: the real capture has every metric its own ncu command asked for."""
    assert len(SAMPLE_METRICS) > 20
    assert check_collected(read_ncu_report(SAMPLE_RUN / "profile.ncu-rep"), SAMPLE_METRICS, "sample") == []


def test_a_launch_with_no_metric_values(tmp_path):
    """A launch whose every requested metric is n/a (ncu_report gives None) in a real 3-launch capture."""
    raw = read_ncu_report(SAMPLE_RUN / "profile.ncu-rep")
    asked = list(SAMPLE_METRICS)
    raw.frame.loc[raw.frame["launch"] == 1, [m for m in asked if m in raw.frame]] = None
    with pytest.raises(ReportError, match=r"launch 1 \(_verify_extend_kernel\) has no metric values"):
        check_collected(raw, asked, "profile.ncu-rep")
    with pytest.raises(ReportError, match="collected none of the 1 requested metrics"):
        check_collected(raw, ["no_such__metric.sum"], "profile.ncu-rep")


@pytest.mark.parametrize(
    "log, code, message",
    [
        (FIXTURES / "ncu_app_failed.log", 1, "the profiled program failed with exit code 1"),
        (LOGS / "ncu_app_killed.log", 9, "the profiled program failed with exit code 9 (likely killed by SIGKILL"),
    ],
)
def test_application_fails_or_is_killed_under_ncu(tmp_path, log, code, message):
    ncu = ncu_stub(tmp_path, log=log, code=code)
    r = cli("profile", "--ctx", "128k", "--tool", "ncu", "--ncu", ncu, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and message in first_line(r.output)
    kept, manifest = kept_run(tmp_path)
    assert manifest["logs"] == ["profile.ncu.log"]  # named, though ncu failed before the writer could add it
    assert f"(full log: {kept / 'profile.ncu.log'})" in r.output and ".tmp-" not in r.output


# -- nsys's failures --------------------------------------------------------------------------


def test_nsys_application_failed(tmp_path):
    nsys = nsys_stub(tmp_path, log=LOGS / "nsys_app_failed.log", code=3)
    r = cli("profile", "--ctx", "8k", "--tool", "nsys", "--nsys", nsys, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1
    assert "the profiled program (or nsys) exited with code 3; nsys still wrote profile.nsys-rep" in first_line(
        r.output
    )
    kept, _ = kept_run(tmp_path)
    assert (kept / "profile.nsys-rep").exists() and (kept / "profile.nsys.log").exists()


def test_nsys_importer_missing_libraries(tmp_path):
    nsys = nsys_stub(tmp_path, log=LOGS / "nsys_missing_libs.log", report=None, qdstrm=True)
    r = cli("profile", "--ctx", "8k", "--tool", "nsys", "--nsys", nsys, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1
    line = first_line(r.output)
    assert "left only the raw .qdstrm" in line and "libdw.so.1 and libelf.so.1" in line and "LD_LIBRARY_PATH" in line
    kept, _ = kept_run(tmp_path)
    assert (kept / "profile.qdstrm").exists()  # the raw stream is kept: it can be imported later


def test_nsys_export_without_kernel_table(tmp_path):
    nsys = nsys_stub(
        tmp_path,
        log=LOGS / "nsys_no_cuda.log",
        report=LOGS / "nsys_no_cuda.nsys-rep",
        sqlite=LOGS / "nsys_no_cuda.sqlite",
    )
    r = cli("profile", "--ctx", "8k", "--tool", "nsys", "--nsys", nsys, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "no CUPTI_ACTIVITY_KIND_KERNEL table: nsys recorded no CUDA kernel" in first_line(
        r.output
    )
    kept, _ = kept_run(tmp_path)
    assert (kept / "profile.sqlite").exists()


# -- the whole capture: time limit and Ctrl-C -------------------------------------------------


def test_timeout_ends_the_whole_process_group(tmp_path):
    ncu = hanging_tool(tmp_path)
    t0 = time.monotonic()
    with pytest.raises(roofline.CaptureFailed) as info:  # one error root: the tool's own error is the cause
        roofline.profile("triton_mla", ctx="1k", tool="ncu", ncu=ncu, timeout=1.5, out=tmp_path / "run")
    assert isinstance(info.value.__cause__, ToolTimeout) and isinstance(info.value, roofline.RooflineError)
    assert time.monotonic() - t0 < 290  # stopped, not waited out: the stub hangs for 300 s (no pace asserted)
    message = str(info.value).splitlines()[0]
    assert message.startswith("timed out: ncu was still running at the --timeout 1.5 s (the whole capture) limit")
    for pid_file in ("tool.pid", "child.pid"):
        assert not alive(int((tmp_path / pid_file).read_text()))
    kept, manifest = kept_run(tmp_path)
    assert manifest["error"] == message and info.value.kept_at == kept
    assert "ended ncu's process group" in (kept / "profile.ncu.log").read_text()


def test_kill_group_returns_once_no_member_runs(tmp_path):
    """A child that traps SIGTERM outlives the leader; kill_group returns only when it is gone too."""
    script = tmp_path / "tool.sh"
    script.write_text(f"(trap '' TERM; sleep 300) & echo $! > '{tmp_path}/child.pid'\nsleep 300\n")
    proc = subprocess.Popen(["bash", str(script)], start_new_session=True)
    deadline = time.monotonic() + 30
    pid_file = tmp_path / "child.pid"
    while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.05)  # the shell creates the file before it writes the pid: wait for the pid itself
    assert group_alive(proc.pid)
    kill_group(proc, grace_s=5)
    assert not group_alive(proc.pid) and not alive(int(pid_file.read_text()))


def test_run_tool_kills_the_group_on_ctrl_c(tmp_path):
    tool = hanging_tool(tmp_path, "tool")

    def interrupt(line):
        if (tmp_path / "tool.pid").exists():
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tool([tool], tmp_path / "tool.log", "tool", on_line=lambda line: (time.sleep(0.5), interrupt(line)))
    assert not alive(int((tmp_path / "tool.pid").read_text()))
    assert not alive(int((tmp_path / "child.pid").read_text()))


def test_ctrl_c_on_roofline_profile(tmp_path):
    """SIGINT to the roofline process (a terminal's Ctrl-C reaches only its group, not the tool's)."""
    ncu = hanging_tool(tmp_path)
    out = tmp_path / "run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "roofline", "profile", "--ctx", "1k", "--tool", "ncu", "--ncu", ncu, "--out", str(out)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # a background job inherits it ignored
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted (Ctrl-C) while ncu was running; its process group was ended" in err and "Traceback" not in err
    assert not alive(int((tmp_path / "child.pid").read_text())) and not alive(int((tmp_path / "tool.pid").read_text()))
    kept, manifest = kept_run(tmp_path)
    assert manifest["error"].startswith("interrupted (Ctrl-C)") and str(kept) in err


# -- files ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda p: p.write_bytes(b""), "the file is empty"),
        (lambda p: p.write_bytes((NSYS_DIR / "triton_mla_8k.sqlite").read_bytes()[:40_000]), "damaged or cut short"),
        (lambda p: p.write_text("hello\n"), "a text file starting 'hello'"),
        (lambda p: p.write_bytes((LOGS / "nsys_no_cuda.sqlite").read_bytes()), "no CUPTI_ACTIVITY_KIND_KERNEL table"),
    ],
)
def test_bad_files_are_one_line_errors(tmp_path, make, message):
    path = tmp_path / "capture.sqlite"
    make(path)
    r = cli("analyze", str(path))
    assert r.exit_code == 2 and message in r.output and len(r.output.strip().splitlines()) == 1
    assert r.output.startswith("Error: ")


# -- what works -------------------------------------------------------------------------------


def test_profile_both_tools_one_run(tmp_path, monkeypatch):
    """ncu replays the bundled 128k capture; nsys writes a real timeline (the 8k one: a stand-in)."""
    monkeypatch.setattr("roofline.pipelines.profiling.importer_missing", lambda nsys: [])
    ncu = ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    nsys = nsys_stub(tmp_path)
    out = tmp_path / "run"
    r = cli("profile", "--ctx", "128k", "--ncu", ncu, "--nsys", nsys, "--out", str(out))
    assert r.exit_code == 0, r.output
    m = json.loads((out / "manifest.json").read_text())
    assert [(e["tool"], e["path"]) for e in m["reports"]] == [
        ("ncu", "profile.ncu-rep"),
        ("nsys", "profile.nsys-rep"),
        ("nsys-sqlite", "profile.sqlite"),
    ]
    assert m["tools"]["nsys"]["version"].startswith("NVIDIA Nsight Systems version 2025.3.1")
    assert any(c.startswith(nsys + " profile -t cuda,nvtx -s none --cpuctxsw=none") for c in m["commands"])
    assert "profile.nsys.log" in m["logs"]
    assert "latency" in r.output and "timeline (nsys 2025.3.1" in r.output and "ncu ms (replayed)" in r.output
    run = roofline.load(out)
    assert run.timeline.summary["steps"] == 20 and len(run.launches) == 3  # counters from ncu's 3 launches
    assert json.loads((out / "analysis.json").read_text())["timeline"]["steps"] == 20
    r = cli("analyze", str(out), "--format", "json")
    assert json.loads(r.output)["timeline"]["summary"]["kernels_per_step"] == 1


def test_only_nsys_found_profiles_a_timeline(tmp_path, no_tools, monkeypatch):
    nsys_stub(tmp_path)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")  # the stand-in needs cat and cp
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["profile", "--ctx", "8k", "--iters", "20", "--out", str(out)])
    assert r.exit_code == 0, r.output + r.stderr
    assert "only nsys was found" in r.stderr
    run = roofline.load(out)
    assert len(run.launches) == 20 and run.launches["dram_gbps"].isna().all()
    assert "no hardware counters" in " ".join(run.analysis.notes)


@pytest.mark.parametrize("capture, preset", [("nosol4_v4", "verdict"), ("nosol4_r4", "roofline")])
def test_the_presets_metrics_are_all_in_real_preset_captures(capture, preset):
    """No false alarm for profile's own presets: real H200 captures made with them have every metric."""
    from profiler.metrics import PRESETS
    from profiler.readers import plain_file

    with plain_file(FIXTURES / "passes" / f"{capture}.ncu-rep.gz") as plain:
        raw = read_ncu_report(plain)
    assert check_collected(raw, list(PRESETS[preset].metrics), capture) == []


# -- nsys is optional unless asked for by name -----------------------------------------------------


def test_a_broken_nsys_not_asked_for_leaves_a_complete_ncu_run(tmp_path, monkeypatch):
    """The H200 case: nsys found, its importer fails (real log), the user named no --tool: the ncu
    capture is complete and valid, one line says why there is no timeline, exit 0."""
    monkeypatch.setattr("profiler.nsys.importer_missing", lambda nsys: [])  # the libraries look fine...
    ncu = ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    nsys = nsys_stub(tmp_path, log=LOGS / "nsys_missing_libs.log", report=None, qdstrm=True)  # ...yet it fails
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["profile", "--ctx", "128k", "--ncu", ncu, "--nsys", nsys, "--out", str(out)])
    assert r.exit_code == 0, r.output
    (why,) = [line for line in r.stderr.splitlines() if "no timeline" in line]
    assert "left only the raw .qdstrm" in why and "the ncu capture is complete" in why
    m = json.loads((out / "manifest.json").read_text())
    assert m["status"] == "complete" and [e["tool"] for e in m["reports"]] == ["ncu"]
    assert "profile.nsys.log" in m["logs"] and "profile.qdstrm" in m["logs"]
    run = roofline.load(out)
    assert run.timeline is None and len(run.launches) == 3
    assert any("no timeline" in n for n in json.loads((out / "analysis.json").read_text())["notes"])
    assert not list(tmp_path.glob("run.failed-*"))


def test_nsys_named_explicitly_still_fails_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr("roofline.pipelines.profiling.importer_missing", lambda nsys: [])
    ncu = ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    nsys = nsys_stub(tmp_path, log=LOGS / "nsys_missing_libs.log", report=None, qdstrm=True)
    r = cli("profile", "--ctx", "128k", "--tool", "both", "--ncu", ncu, "--nsys", nsys, "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "left only the raw .qdstrm" in first_line(r.output)
    kept_run(tmp_path)


def test_default_tools_skip_an_nsys_whose_importer_cannot_load(tmp_path, monkeypatch):
    """`roofline doctor`'s importer check decides before `both` is chosen: nsys is not even run."""
    monkeypatch.setattr("roofline.pipelines.profiling.importer_missing", lambda nsys: ["libdw.so.1"])
    ncu = ncu_stub(tmp_path, log=SAMPLE_RUN / "profile.ncu.log", report=SAMPLE_RUN / "profile.ncu-rep")
    nsys = stub(
        tmp_path,
        "nsys",
        'if [ "$1" = "--version" ]; then echo "NVIDIA Nsight Systems version 2025.3.1"; '
        'exit 0; fi\ntouch "$0.ran"; exit 1\n',
    )
    out = tmp_path / "run"
    r = CliRunner().invoke(main, ["profile", "--ctx", "128k", "--ncu", ncu, "--nsys", nsys, "--out", str(out)])
    assert r.exit_code == 0, r.output
    assert "no timeline: nsys's importer cannot load libdw.so.1" in r.stderr
    assert not Path(nsys + ".ran").exists()
    assert [e["tool"] for e in json.loads((out / "manifest.json").read_text())["reports"]] == ["ncu"]
