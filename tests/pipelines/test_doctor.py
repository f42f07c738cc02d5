"""`roofline doctor` and the foreign-package guard. On this CPU machine doctor must run, say why
profiling cannot work (no GPU), and exit non-zero (0 where it is a CPU analysis environment, which it says); each check is also tested on its own inputs."""

import json
import os
import subprocess
import sys

from click.testing import CliRunner

import profiler.nsys as nsys_driver
from roofline.analysis.diagnosis import Check, verdict
from roofline.cli import main
from roofline.pipelines.doctor import check_counters, check_gpu, check_tools


def tool(tmp_path, name, text, code=0):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{text}\nEOF\nexit {code}\n")
    path.chmod(0o755)
    return path


def test_doctor_on_a_machine_without_gpu(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")  # no nvidia-smi, ncu or nsys here
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    r = CliRunner().invoke(main, ["doctor"])
    assert "Traceback" not in r.output
    assert "GPU         no NVIDIA driver here: nvidia-smi not found" in r.output
    last = r.output.splitlines()[-1]  # a CPU torch here (tests/pipelines: the CI's): an analysis environment, exit 0
    assert (r.exit_code, "profiling cannot work here" in last) == (1, True) or (
        r.exit_code == 0 and last.startswith("a CPU analysis environment")
    )
    for line in r.output.splitlines():  # every FAIL/warn line is followed by its fix
        if line.startswith(("FAIL", "warn")):
            following = r.output.splitlines()[r.output.splitlines().index(line) + 1]
            assert "fix: " in following, line
    data = json.loads(CliRunner().invoke(main, ["doctor", "--format", "json"]).output)
    assert data["ok"] is False and {c["name"] for c in data["checks"]} >= {"GPU", "ncu", "nsys", "ncu_report"}


def test_gpu_and_tools_found(monkeypatch, tmp_path):
    tool(tmp_path, "nvidia-smi", "NVIDIA H200, 580.159.04")
    tool(tmp_path, "ncu", "NVIDIA (R) Nsight Compute Command Line Profiler\nVersion 2025.3.1.0 (build 36398880)")
    tool(tmp_path, "nsys", "NVIDIA Nsight Systems version 2025.3.1.90-253135822234v0")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    assert check_gpu()[0].status == "ok" and "NVIDIA H200, 580.159.04" in check_gpu()[0].detail
    assert "h200 in kernels/data/hardware.json (sm_90, ncu chip gh100)" in check_gpu()[0].detail
    checks, found = check_tools(own_profiler=True)
    by_name = {c.name: c for c in checks}
    assert by_name["ncu"].detail == f"{tmp_path / 'ncu'} (Version 2025.3.1.0 (build 36398880))"
    assert "2025.3.1.90" in by_name["nsys"].detail


def test_nsys_importer_libraries_missing(monkeypatch, tmp_path):
    tool(tmp_path, "nsys", "NVIDIA Nsight Systems version 2025.3.1.90")
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setattr(nsys_driver, "_loadable", lambda lib: lib != "libdw.so.1")
    checks, found = check_tools(own_profiler=True)
    (imp,) = [c for c in checks if c.name == "nsys importer"]
    assert imp.status == "FAIL" and "libdw.so.1" in imp.detail and "LD_LIBRARY_PATH" in imp.fix
    assert "nsys" not in found


def test_counter_permission(tmp_path):
    params = tmp_path / "params"
    params.write_text("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\nEnableMSI: 1\n")
    (c,) = check_counters(params, euid=1000)
    assert c.status == "FAIL" and "ERR_NVGPUCTRPERM" in c.detail
    assert "NVreg_RestrictProfilingToAdminUsers=0" in c.fix and "sudo" in c.fix
    assert check_counters(params, euid=0)[0].status == "ok"
    params.write_text("RmProfilingAdminOnly: 0\n")
    assert check_counters(params, euid=1000)[0].status == "ok"
    assert check_counters(tmp_path / "absent", euid=1000)[0].status == "info"


def test_verdict_needs_one_usable_profiler_and_no_blocking_problem():
    ok = [Check("ncu", "ok", "x"), Check("nsys", "ok", "y"), Check("GPU", "ok", "H200")]
    assert verdict(ok) == (True, "ready to profile with ncu and nsys")
    no_counters = ok + [Check("counters", "FAIL", "admin-only")]
    assert verdict(no_counters) == (True, "ready to profile with nsys")
    no_libs = no_counters + [Check("nsys importer", "FAIL", "libdw")]
    assert verdict(no_libs)[0] is False
    assert verdict(ok + [Check("CUDA", "FAIL", "cpu torch", blocks=True)]) == (
        False,
        "profiling cannot work here (CUDA: see FAIL above)",
    )


def _foreign(tmp_path, name):
    """A package named like ours, first on the path: what PyPI's `kernels` (Hugging Face) or
    `profiler` does when installed beside roofline."""
    pkg = tmp_path / "site" / name
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("raise ImportError('not roofline')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    return env


def _roofline(command: str, cwd, env, timeout: int = 120) -> subprocess.CompletedProcess:
    """`python -m roofline COMMAND` in its own process, from `cwd` with `env`."""
    return subprocess.run(
        [sys.executable, "-m", "roofline", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def test_foreign_kernels_package_is_one_line(tmp_path):
    env = _foreign(tmp_path, "kernels")
    r = _roofline("kernels", tmp_path, env)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert f"`import kernels` finds {tmp_path / 'site' / 'kernels'}, not roofline's own kernels package" in line
    assert "Hugging Face" in line and "Fix: " in line
    r = _roofline("doctor", tmp_path, env, timeout=300)
    assert r.returncode == 1 and "FAIL  package kernels" in r.stdout and "Traceback" not in r.stderr


def test_foreign_profiler_package_is_one_line(tmp_path):
    env = _foreign(tmp_path, "profiler")
    r = _roofline("analyze", tmp_path, env)
    assert r.returncode == 2 and "`import profiler` finds" in r.stderr and "PyPI's `profiler`" in r.stderr
    r = _roofline("doctor", tmp_path, env, timeout=300)
    assert r.returncode == 1 and "FAIL  package profiler" in r.stdout and "not checked" in r.stdout
