"""Every child process learns the workload from the run's spec.json (or, for a sweep's point, from the one
request it is printed from): handed a ragged, q_len 4 workload, each reproduces it exactly. The GPU parts
are stood in for; what is checked is the workload each child would run."""

import json
import shlex
import subprocess
import sys

import pytest
from click.testing import CliRunner

import roofline
from kernels.spec import VerifyWorkload
from profiler import harness
from profiler.rundir import RunSpec
from roofline.cli import main
from roofline.pipelines.capture import round_command
from roofline.pipelines.why import NO_SUBJECT, why_command
from tests.paths import ROOT, RUNS

SKEW = ["--lens", "mix:1x128k,15x2k", "--q-len", "4", "--heads", "16", "--mask", "chain", "--seed", "3"]
RAGGED = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, tree_mask="chain", seed=3)
EVEN_Q4 = VerifyWorkload(ctx_len=32768, heads=8, q_len=4, page_size=64, tree_mask="chain", seed=3)
H200 = ("NVIDIA H200", 132, "sm_90")


def _spec(tmp_path, workload: VerifyWorkload):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(RunSpec(kernel="triton_mla_fast", workload=workload.to_dict(), iterations=3).to_dict()))
    return path


@pytest.fixture
def harness_sees(monkeypatch):
    """The harness with a CUDA device stood in: records the workload each of its two kinds would run."""
    import torch

    seen = {}
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)

    def timing(kernel, workload, samples, out, spin):
        seen["timing"] = workload
        return 0

    monkeypatch.setattr(harness, "timing_pass", timing)
    monkeypatch.setattr(harness, "get_kernel", lambda name: pytest.fail("the profiled child got past its stand-in"))
    monkeypatch.setattr("kernels.inputs.build_inputs", lambda w, device: seen.setdefault("profiled", w) and 1 / 0)
    return seen


@pytest.mark.parametrize("workload", [RAGGED, EVEN_Q4], ids=["ragged", "q_len 4"])
def test_a_timing_round_reads_the_workload_from_spec_json(tmp_path, harness_sees, workload):
    app = [sys.executable, "-m", "profiler.harness", "--spec", str(_spec(tmp_path, workload)), "--kernel", "x"]
    app += ["--iters", "3"]
    cmd = round_command(app, 8, tmp_path / "round.json")
    assert harness.main(cmd[3:]) == 0
    assert harness_sees["timing"] == workload


@pytest.mark.parametrize("workload", [RAGGED, EVEN_Q4], ids=["ragged", "q_len 4"])
def test_the_profiled_harness_reads_the_workload_from_spec_json(tmp_path, monkeypatch, workload):
    import torch

    seen = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(harness, "get_kernel", lambda name: type("K", (), {"load": lambda self: None})())
    monkeypatch.setattr("kernels.inputs.build_inputs", lambda w, device: seen.append(w))
    monkeypatch.setattr(harness, "run_in_range", lambda call, iters, warmup: None)
    monkeypatch.setattr(harness, "device_facts", lambda device: H200)
    assert harness.main(["--spec", str(_spec(tmp_path, workload)), "--kernel", "x", "--iters", "3"]) == 0
    assert seen == [workload]


def test_the_removal_child_names_the_ragged_workload_it_read(tmp_path):
    """The real child, on this CPU: with no GPU to plan on it says so, naming the run's workload."""
    cmd = why_command("triton_mla_fast", _spec(tmp_path, RAGGED), tmp_path / "removal.json")
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert proc.returncode == NO_SUBJECT, proc.stderr
    assert f"no experiment for triton_mla_fast at {RAGGED.describe()}: roofline removal needs a CUDA GPU" in proc.stdout


def _stand_in_gpu(monkeypatch, built: list):
    from roofline.pipelines import removal_experiment as cuts

    monkeypatch.setattr(cuts.torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuts.torch.cuda, "get_device_name", lambda *a: "NVIDIA H200")
    monkeypatch.setattr(cuts.torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(cuts, "device_facts", lambda device: H200)
    monkeypatch.setattr(cuts, "rotated_input_sets", lambda w: built.append(w) or ["set"])
    monkeypatch.setattr(cuts, "_rotated_ms", lambda call, sets: 0.05)


def test_the_removal_child_times_the_workload_it_read(tmp_path, monkeypatch):
    """The child's `--for` with the GPU stood in: the inputs it times are built for the run's workload."""
    built: list = []
    _stand_in_gpu(monkeypatch, built)
    w = VerifyWorkload(ctx_len=32768, heads=16, q_len=4, page_size=64, tree_mask="chain", seed=3)
    cmd = why_command("triton_mla", _spec(tmp_path, w), tmp_path / "removal.json")
    r = CliRunner().invoke(main, cmd[3:])
    assert r.exit_code == 0, r.output
    assert built == [w]
    doc = json.loads((tmp_path / "removal.json").read_text())
    assert doc["workload"] == dict(batch=1, q_len=4, tree_mask="chain")


def test_the_removal_child_times_the_ragged_batch_it_read(tmp_path, monkeypatch):
    """skew16 at q_len 4 with the GPU stood in: the fast kernel's staggered batch schedule is the subject, its inputs
    are the run's ragged batch exactly, and the document names that batch."""
    built: list = []
    _stand_in_gpu(monkeypatch, built)
    w = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, page_size=64, tree_mask="chain", seed=3)
    cmd = why_command("triton_mla_fast", _spec(tmp_path, w), tmp_path / "removal.json")
    r = CliRunner().invoke(main, cmd[3:])
    assert r.exit_code == 0, r.output
    assert built == [w]
    doc = json.loads((tmp_path / "removal.json").read_text())
    assert doc["kernel"] == "_gluon_seesaw_kernel"
    assert doc["workload"] == dict(batch=16, q_len=4, tree_mask="chain", ctx_lens=list(w.ctx_lens))


def test_a_sweep_points_command_makes_the_same_request(tmp_path, monkeypatch):
    r = CliRunner().invoke(
        main, ["sweep", "--kernel", "triton_mla_fast", *SKEW, "--page-size", "64", "-o", tmp_path / "S"]
        + ["--timing-rounds", "2", "--print-commands"],
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    seen = []

    def profile(request, **kw):
        seen.append(request)
        raise roofline.BadInput("stopped before the capture (test)")

    monkeypatch.setattr("roofline.pipelines.profiling.profile", profile)
    (line,) = r.output.splitlines()
    assert CliRunner().invoke(main, shlex.split(line)[1:]).exit_code == 2
    (request,) = seen
    want = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, tree_mask="chain", seed=3, page_size=64)
    assert request.workload == want and (request.tool, request.preset, request.timing_rounds) == ("ncu", "roofline", 2)


def test_profile_why_names_the_profiled_workload(tmp_path):
    """`profile --why` at q_len 4 on a ragged batch, through an ncu replaying the batch's real H200 capture:
    the experiment child reads the run's spec.json and names exactly that workload."""
    from tests.stubs import replaying_ncu

    skew = RUNS / "h200-triton_mla_fast-skew16-p64"
    ncu = replaying_ncu(tmp_path, log=skew / "profile.ncu.log", report=skew / "profile.ncu-rep")
    out = tmp_path / "run"
    args = ["--tool", "ncu", "--iters", "1", "--timing-samples", "0", "--gpu", "gh100", "--ncu", ncu, "--why"]
    skew_args = ["--lens", "mix:1x128k,15x2k", "--q-len", "4", "--heads", "16", "--page-size", "64", "--mask", "chain"]
    r = CliRunner().invoke(main, ["profile", "--kernel", "triton_mla_fast", *skew_args, *args, "-o", str(out)])
    assert r.exit_code == 0, r.output
    w = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, page_size=64, tree_mask="chain")
    notes = json.loads((out / "analysis.json").read_text())["notes"]
    assert (
        f"--why: no experiment for triton_mla_fast at {w.describe()}: roofline removal needs a CUDA GPU"
        in "\n".join(notes)
    )
    assert "q_len=4" in w.describe()
