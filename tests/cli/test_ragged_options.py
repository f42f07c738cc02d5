"""Ragged batches through every command that takes a workload: the options parse into the workload
the command would run (profile and bench need a GPU: their option parsing and what they would record are
tested here, up to the GPU work), and a bad batch is a one-line usage error."""

import json
import shlex

import pytest
from click.testing import CliRunner

import roofline
from kernels.batches import SERVING, make_workload
from kernels.errors import BadInput
from profiler.rundir import RunSpec, parse_spec
from roofline.cli import main

SKEW = ["--lens", "mix:1x128k,15x2k", "--heads", "16", "--q-len", "4", "--page-size", "64", "--mask", "chain"]


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def captured_profile(monkeypatch):
    """roofline.api.profile replaced: records what `roofline profile` asked for, then stops before any tool."""
    seen = {}

    def fake(request, **kw):
        seen.update(request=request, kernel=request.kernel, workload=request.workload, **kw)
        raise BadInput("stopped before the capture (test)")

    monkeypatch.setattr("roofline.api.profile", fake)
    return seen


def test_profile_takes_a_ragged_batch_and_its_spec_keeps_the_lengths(captured_profile):
    r = run("profile", "--kernel", "triton_mla_fast", *SKEW)
    assert r.exit_code == 2 and "stopped before the capture" in r.output
    w = captured_profile["workload"]
    assert w.ctx_lens == (131072,) + (2048,) * 15 and w.batch == 16 and (w.heads, w.q_len) == (16, 4)
    spec = RunSpec(kernel="triton_mla_fast", workload=w.to_dict(), iterations=1)  # what profiling.profile writes
    again = parse_spec(json.loads(json.dumps(spec.to_dict())))
    assert again.workload["ctx_lens"] == [131072] + [2048] * 15
    assert roofline.make_workload(**{k: v for k, v in again.workload.items() if k != "seed"}) is not None


def test_profile_draws_a_uniform_batch_with_its_seed(captured_profile):
    run("profile", "--kernel", "triton_mla_fast", "--lens", "uniform:1k-32k", "--batch", "32", "--seed", "0")
    assert list(captured_profile["workload"].ctx_lens[:3]) == [27830, 25085, 14375]  # as the H200 bench drew them


def test_a_bad_batch_is_a_usage_error_naming_it():
    r = run("profile", "--kernel", "triton_mla_fast", "--lens", "mix:1x128k,15y2k")
    assert r.exit_code == 2 and "COUNTxLENGTH" in r.output and "Traceback" not in r.output
    r = run("model", "--lens", "uniform:1k-32k")
    assert r.exit_code == 2 and "needs its size (--batch N)" in r.output


def test_the_api_takes_lens():
    w = roofline.make_workload(lens="uniform:1k-32k", batch=32, heads=16, q_len=2)
    assert w.batch == 32 and len(set(w.ctx_lens)) > 1
    assert roofline.make_workload(ctx="8k", batch=4).ctx_lens is None


def test_model_and_compile_take_a_ragged_batch():
    d = json.loads(run("model", *SKEW, "--kernel", "triton_mla_fast", "--format", "json").output)
    assert d["kv_bytes"] == 186_458_112 and d["kernel_model"]["grid"] == [1, 128, 1]
    assert "the batch schedule" in d["kernel_model"]["notes"]


@pytest.fixture
def captured_bench(monkeypatch):
    seen = {}

    def fake(kernels, points=None, **kw):
        seen.update(kernels=kernels, points=points, **kw)
        raise BadInput("stopped before the GPU (test)")

    monkeypatch.setattr("roofline.cli.bench.run_bench", fake)
    return seen


def test_bench_serving_times_the_serving_rows_beside_a_read_and_flashmla(captured_bench):
    r = run("bench", "--serving")
    assert r.exit_code == 2 and "stopped before the GPU" in r.output
    assert captured_bench["kernels"] == ["read", "flashmla", "triton_mla_fast_graph"]
    points = captured_bench["points"]
    assert [p.row for p in points] == [s.name for s in SERVING]
    assert [p.workload for p in points] == [s.workload() for s in SERVING]
    skew = points[2].workload
    assert skew.ctx_lens == (131072,) + (2048,) * 15 and (skew.page_size, skew.tree_mask) == (64, "chain")


def test_bench_passes_launch_parameters_to_the_kernel(captured_bench):
    run("bench", "--serving", "--kernel", "read,triton_mla_fast_graph,triton_mla_fast_graph:schedule=uniform")
    assert captured_bench["kernels"][-1] == "triton_mla_fast_graph:schedule=uniform"
    r = run("bench", "--serving", "--kernel", "triton_mla_fast_graph:schedul=uniform")
    assert r.exit_code == 2 and "no launch parameter schedul" in r.output


def test_bench_serving_refuses_grid_options():
    r = run("bench", "--serving", "--ctx", "8k", "--heads", "8")
    assert r.exit_code == 2 and "leave out --ctx, --heads" in r.output


def test_bench_lens_and_batch_make_their_points(captured_bench):
    run("bench", "--kernel", "read", "--lens", "mix:1x128k,15x2k", "--lens", "uniform:1k-32k", "--batch", "32")
    points = captured_bench["points"]
    assert len(points) == 2 * 2 * 2  # two batches x pages 1,64 x heads 8,64
    assert points[0].workload.ctx_lens == (131072,) + (2048,) * 15 and points[0].lens == "mix:1x128k,15x2k"
    assert points[-1].workload.batch == 32  # --batch sizes the draw, not the listed mix
    run("bench", "--kernel", "read", "--ctx", "8k", "--batch", "4", "--page-size", "64", "--heads", "8")
    (p,) = captured_bench["points"]
    assert (p.workload.batch, p.workload.ctx_len, p.workload.ctx_lens) == (4, 8192, None)


def test_sweep_points_and_their_commands_reproduce_a_ragged_batch():
    r = run(
        "sweep", "--kernel", "triton_mla_fast", "--lens", "mix:1x128k,15x2k", "--lens", "uniform:1k-32k",
        "--batch", "8", "--heads", "16", "--q-len", "4", "--page-size", "64", "--print-commands",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    outs = {(a := shlex.split(c))[a.index("--out") + 1] for c in lines}
    assert len(lines) == 2 and len(outs) == 2  # two distinct point folders
    argv = shlex.split(lines[1])
    lens = argv[argv.index("--lens") + 1]
    assert make_workload(lens=lens).ctx_lens == make_workload(lens="uniform:1k-32k", batch=8).ctx_lens


def test_profile_of_a_ragged_batch_end_to_end_with_an_ncu_replaying_the_h200_capture(tmp_path):
    """`roofline profile --lens` with an ncu stand-in that replays the skewed batch's real H200 capture
    (tests/fixtures/README.md): spec.json keeps the lengths, and the verdict names load imbalance."""
    from tests.paths import RUNS
    from tests.stubs import replaying_ncu

    skew = RUNS / "h200-triton_mla_fast-skew16-p64"
    ncu = replaying_ncu(tmp_path, log=skew / "profile.ncu.log", report=skew / "profile.ncu-rep")
    out = tmp_path / "run"
    r = run(
        "profile", "--kernel", "triton_mla_fast", *SKEW, "--tool", "ncu", "--iters", "1", "--timing-samples", "0",
        "--chip", "gh100", "--ncu", ncu, "--out", str(out),
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    spec = json.loads((out / "spec.json").read_text())
    assert spec["workload"]["ctx_lens"] == [131072] + [2048] * 15 and spec["workload"]["batch"] == 16
    assert "_gluon_seesaw_kernel: latency (load imbalance)" in r.output
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis["kernels"][0]["imbalance"]["tail"]["tail"][0]["request"] == 0


def test_a_sweeps_summary_shows_each_points_batch():
    """A sweep with batched points adds the batch (and a ragged batch's --lens text in place of its ctx)."""
    import pandas as pd

    from reports.sweep import render_summary_text
    from roofline.pipelines.sweep_dir import SUMMARY_COLUMNS

    row = dict.fromkeys(SUMMARY_COLUMNS) | dict(kernel="triton_mla_fast", page_size=64, heads=16, q_len=4)
    table = pd.DataFrame(
        [
            row | dict(ctx_len=131072, status="done", step_ms=0.45, batch=16, lens="mix:1x128k,15x2k"),
            row | dict(ctx_len=8192, status="failed", error="boom", batch=4, lens=""),
        ]
    )
    text = render_summary_text(table)
    assert text.splitlines()[0].split()[:3] == ["kernel", "ctx", "batch"]
    assert "mix:1x128k,15x2k  16" in text and "8k                4" in text
    plain = render_summary_text(table.drop(columns=["batch", "lens"]))
    assert "batch" not in plain.splitlines()[0] and "128k" in plain
