"""The ncu driver: finding ncu, its command line, and its failures turned into typed errors.

The stub `ncu` below replays logs that the real ncu 2025.3.1 printed on the H200
(tests/fixtures/h200/*.log), so the classification is tested on the tool's own words.
"""

import stat

import pytest

from profiler.errors import ApplicationFailed, NoKernelsProfiled, ProfilerError, ToolNotFound
from profiler.metrics import DEFAULT_PRESET, PRESETS
from profiler.ncu import classify_failure, find_ncu, ncu_command, run_ncu
from tests.paths import APP_FAILED_LOG, BAD_OPTION_LOG, NO_KERNELS_LOG


def _stub(tmp_path, log, code=0, write_report=False):
    script = tmp_path / "ncu"
    lines = ["#!/bin/sh", f"cat '{log}'"]
    if write_report:  # ncu writes <--export>.ncu-rep; the argument follows --export
        lines.append('while [ "$1" != "--export" ]; do shift; done; : > "$2.ncu-rep"')
    lines.append(f"exit {code}")
    script.write_text("\n".join(lines) + "\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


def test_find_ncu_missing_is_clear(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    with pytest.raises(ToolNotFound, match="ncu .*not found.*--ncu"):
        find_ncu()
    with pytest.raises(ToolNotFound, match="/nope/ncu"):
        find_ncu("/nope/ncu")


def test_command_line_pins_clocks_and_range():
    cmd = ncu_command("ncu", ["python", "app.py"], "out/profile")
    assert cmd[cmd.index("--clock-control") + 1] == "none"
    assert cmd[cmd.index("--nvtx-include") + 1] == "roofline/"
    assert cmd[cmd.index("--metrics") + 1].split(",") == list(PRESETS[DEFAULT_PRESET].metrics)
    assert "--section" not in cmd and "--set" not in cmd  # SpeedOfLight alone costs 10 passes
    assert cmd[-2:] == ["python", "app.py"]


def test_command_line_follows_the_preset():
    full = ncu_command("ncu", ["app"], "out/profile", preset="full")
    assert full[full.index("--set") + 1] == "full" and "--metrics" not in full
    roof = ncu_command("ncu", ["app"], "out/profile", preset="roofline")
    assert "l1tex__t_bytes.sum" in roof[roof.index("--metrics") + 1].split(",")


def test_no_kernels_profiled_exit_zero_is_an_error(tmp_path):
    ncu = _stub(tmp_path, NO_KERNELS_LOG, code=0)
    with pytest.raises(NoKernelsProfiled) as info:
        run_ncu(["python", "-c", "pass"], tmp_path / "run", ncu=ncu)
    text = str(info.value)
    assert "No kernels were profiled" in text and "nvjet_sm90" in text  # ncu's own list is shown
    assert (tmp_path / "run" / "profile.ncu.log").read_text().count("Available Kernels") == 1


def test_nonzero_exit_and_missing_report(tmp_path):
    log = tmp_path / "empty.log"
    log.write_text("")
    with pytest.raises(ProfilerError, match="exited with code 9"):
        run_ncu(["true"], tmp_path / "a", ncu=_stub(tmp_path, log, code=9))
    with pytest.raises(ProfilerError, match="wrote no report"):
        run_ncu(["true"], tmp_path / "b", ncu=_stub(tmp_path, log, code=0))


def test_application_failure_shows_the_programs_own_error(tmp_path):
    with pytest.raises(ApplicationFailed) as info:
        run_ncu(["true"], tmp_path / "run", ncu=_stub(tmp_path, APP_FAILED_LOG, code=1))
    text = str(info.value)
    assert "failed with exit code 1" in text and "FileNotFoundError" in text


def test_bad_ncu_option_keeps_ncus_message(tmp_path):
    with pytest.raises(ProfilerError, match="exited with code 1") as info:
        run_ncu(["true"], tmp_path / "run", ncu=_stub(tmp_path, BAD_OPTION_LOG, code=1))
    assert "Invalid configuration for nvtx-include" in str(info.value)
    assert classify_failure(["==PROF== Disconnected from process 1"], 0, "x.log") is None
