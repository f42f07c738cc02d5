"""The timing pass's rounds forked from one server (profiler/round_server.py): each round its own process,
the server never starting CUDA (and running a round in a fresh interpreter where it had), a failed round named."""

import json
import os
import subprocess
import sys
import time

import pytest

from profiler import round_server
from profiler.round_server import forkable, preloads, run_rounds

PID_SCRIPT = (
    "import os, sys, pathlib\n"
    "out = pathlib.Path(sys.argv[sys.argv.index('--out') + 1])\n"
    "out.write_text(f'{os.getpid()} {os.getppid()}')\n"
    "print('harness: round done', out.name)\n"
    "sys.exit(int(sys.argv[sys.argv.index('--code') + 1]))\n"
)


def rounds(tmp_path, codes=(0, 0, 0)):
    script = tmp_path / "round.py"
    script.write_text(PID_SCRIPT)
    return [
        [sys.executable, str(script), "--out", str(tmp_path / f"r{i}"), "--code", str(c)] for i, c in enumerate(codes)
    ]


def test_each_round_is_its_own_process_forked_from_one_server(tmp_path):
    seen = []
    ran = run_rounds(rounds(tmp_path), tmp_path / "t.log", tmp_path, on_round=lambda i, last: seen.append((i, last)))
    assert ran.failed is None and ran.start == "fork"
    pids = [tuple(map(int, (tmp_path / f"r{i}").read_text().split())) for i in range(3)]
    assert len({p for p, _ in pids}) == 3 and len({parent for _, parent in pids}) == 1  # one server, 3 children
    assert pids[0][1] != os.getpid()
    assert seen == [(i, f"harness: round done r{i - 1}") for i in (1, 2, 3)]
    log = (tmp_path / "t.log").read_text()
    assert log.count("# round ") == 3 and log.count("(fork)") == 3


def test_exec_starts_a_fresh_interpreter_a_round(tmp_path):
    ran = run_rounds(rounds(tmp_path), tmp_path / "t.log", tmp_path, start="exec")
    assert ran.start == "exec" and ran.failed is None
    parents = {int((tmp_path / f"r{i}").read_text().split()[1]) for i in range(3)}
    assert parents == {os.getpid()}


def test_a_failed_round_stops_the_rest_and_is_named(tmp_path):
    for start in ("fork", "exec"):
        ran = run_rounds(rounds(tmp_path, (0, 3, 0)), tmp_path / "t.log", tmp_path, start=start)
        assert (ran.failed, ran.returncode) == (2, 3), start
        assert "harness: round done r1" in ran.lines
        assert not (tmp_path / "r2").exists()
        for i in range(2):
            (tmp_path / f"r{i}").unlink()


def test_a_server_that_started_cuda_runs_its_rounds_in_fresh_interpreters(tmp_path, monkeypatch, capfd):
    monkeypatch.setattr(round_server, "cuda_started", lambda: "torch")
    forked = []
    monkeypatch.setattr(round_server, "fork_round", lambda cmd: forked.append(cmd) or 0)
    code = round_server.serve({"rounds": rounds(tmp_path, (0, 0))})
    assert code == 0 and forked == []
    out = capfd.readouterr().out
    assert "torch started CUDA in the server: round 1 runs in a fresh interpreter" in out and out.count("(exec)") == 2
    assert int((tmp_path / "r0").read_text().split()[1]) == os.getpid()


PRELOAD_TRAP = """
import json, sys, torch
calls = []
def trap(name):
    def f(*a, **k):
        calls.append(name)
        raise RuntimeError("CUDA started")
    return f
for name in ("_lazy_init", "is_available", "device_count", "init"):
    setattr(torch.cuda, name, trap(name))
torch._C._cuda_getDeviceCount = trap("cudaGetDeviceCount")
from profiler.round_server import cuda_started, preload, preloads
names = preloads(json.loads(sys.argv[1]))
failed = preload(names)
print(json.dumps({"names": names, "failed": failed, "calls": calls, "started": cuda_started()}))
"""


@pytest.mark.subprocess
def test_the_servers_imports_start_no_cuda(tmp_path):
    """The harness, the timing code and the kernel's module, imported as the server does, call nothing that
    starts CUDA (torch's lazy init, its device count, Triton's driver)."""
    cmd = [sys.executable, "-m", "profiler.harness", "--spec", "s.json", "--kernel", "triton_mla_fast"]
    done = subprocess.run(
        [sys.executable, "-c", PRELOAD_TRAP, json.dumps(cmd)], capture_output=True, text=True, timeout=300
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["names"] == ["profiler.harness", "profiler.bench", "kernel:triton_mla_fast"]
    assert got == dict(got, failed=[], calls=[], started=None)


def test_what_can_be_forked(monkeypatch):
    py = sys.executable
    assert forkable([[py, "-m", "profiler.harness", "--kernel", "k"], [py, "x.py"]])
    assert not forkable([[py, "-u", "x.py"]])  # interpreter options: a fresh interpreter each
    assert not forkable([[py, "x.py"], ["python9", "x.py"]])
    assert not forkable([["ncu", "--set", "full", py, "x.py"]])
    assert preloads([py, "x.py"]) == [] and preloads([py, "-m", "m"]) == ["m"]
    assert run_rounds.__defaults__[-1] == "fork"
    monkeypatch.setattr(sys, "platform", "darwin")
    assert not forkable([[py, "x.py"]])  # a fresh interpreter each off Linux


def _ahead(tmp_path, marker):
    """A server started ahead whose preload (a module of tmp_path) records when it was imported."""
    (tmp_path / "preloaded_mod.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n"
    )
    env = {"PYTHONPATH": os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH", "")) if p)}
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return round_server.AheadServer(sys.executable, ["preloaded_mod"], tmp_path / "t.log", scratch, env)


def _wait_for(path, seconds=60.0):
    deadline = time.monotonic() + seconds
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return path.exists()


def test_a_server_started_ahead_imports_before_its_rounds_are_given(tmp_path):
    marker = tmp_path / "imported"
    server = _ahead(tmp_path, marker)
    assert _wait_for(marker)  # imported while no round is known
    assert server.started.proc.poll() is None  # and waiting for them
    seen = []
    ran = server.run(rounds(tmp_path), on_round=lambda i, last: seen.append(i))
    assert ran.failed is None and ran.start == "fork" and seen == [1, 2, 3]
    parents = {int((tmp_path / f"r{i}").read_text().split()[1]) for i in range(3)}
    assert parents == {server.started.proc.pid}  # every round forked from the server started ahead
    log = (tmp_path / "t.log").read_text()
    assert log.index("imported; waiting for the rounds") < log.index("# round 1 of 3")


def test_a_server_ended_unused_runs_no_round(tmp_path):
    server = _ahead(tmp_path, tmp_path / "imported")
    assert _wait_for(tmp_path / "imported")
    server.end()
    server.end()  # twice: nothing more
    assert server.started.proc.poll() is not None
    assert not any((tmp_path / f"r{i}").exists() for i in range(3))
    assert "# round" not in (tmp_path / "t.log").read_text()
