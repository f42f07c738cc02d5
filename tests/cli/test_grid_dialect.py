"""One dialect for the workload and the capture: a command that builds one workload takes one value an option
(profile), a command that sweeps takes comma lists of the same options (sweep, bench), and sweep takes every
capture option profile takes."""

import shlex

import click
import pytest
from click.testing import CliRunner

from kernels.errors import BadInput
from roofline.cli import main
from roofline.cli.options import GRID_OPTIONS


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def command(name):
    return main.get_command(click.Context(main), name)


def test_sweep_and_bench_take_the_same_grid_options_and_sweep_profiles_capture_options():
    sweep, bench, profile = command("sweep"), command("bench"), command("profile")
    opts = {c.name: {o for p in c.params for o in p.opts} for c in (sweep, bench, profile)}
    assert set(GRID_OPTIONS) <= opts["sweep"] and set(GRID_OPTIONS) <= opts["bench"]
    capture = {"--tool", "--preset", "--gpu", "--iters", "--timeout", "--timing-samples", "--timing-rounds", "--ncu"}
    assert capture <= opts["sweep"] and capture <= opts["profile"]


def test_a_sweep_goes_over_masks_and_q_lens(tmp_path):
    r = run(
        "sweep", "--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--mask", "tree,chain",
        "--q-len", "4,9", "-o", tmp_path / "S", "--print-commands",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    argvs = [shlex.split(line) for line in r.output.splitlines()]
    got = {(a[a.index("--mask") + 1], a[a.index("--q-len") + 1]) for a in argvs}
    assert got == {("tree", "4"), ("tree", "9"), ("chain", "4"), ("chain", "9")}


def test_a_sweep_passes_tool_preset_gpu_and_rounds_to_each_point(tmp_path):
    r = run(
        "sweep", "--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--tool", "both", "--preset", "verdict",
        "--gpu", "h200", "--timing-rounds", "2", "-o", tmp_path / "S", "--print-commands",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    argv = shlex.split(r.output)
    params = command("profile").make_context("profile", argv[2:]).params
    assert (params["tool"], params["preset"], params["chip"], params["timing_rounds"]) == (
        "both",
        "verdict",
        "gh100",
        2,
    )


@pytest.fixture
def bench_points(monkeypatch):
    seen = {}

    def fake(kernels, points=None, **kw):
        seen["points"] = points
        raise BadInput("stopped before the GPU (test)")

    monkeypatch.setattr("roofline.cli.bench.run_bench", fake)
    monkeypatch.setattr("roofline.cli.bench.need_kernels", lambda name: None)
    return seen


def test_bench_goes_over_q_lens_as_sweep_does(bench_points, tmp_path):
    r = run("bench", "--kernel", "read", "--ctx", "8k", "--page-size", "64", "--heads", "8", "--q-len", "4,9",
            "--mask", "chain", "-o", tmp_path / "B")  # fmt: skip
    assert r.exit_code == 2 and "stopped before the GPU" in r.output
    assert [(p.workload.q_len, p.workload.tree_mask) for p in bench_points["points"]] == [(4, "chain"), (9, "chain")]


@pytest.mark.parametrize("name", ["sweep", "bench"])
def test_a_bad_mask_in_a_list_is_a_usage_error_naming_mask(name, tmp_path):
    only_plan = ["--print-commands"] if name == "sweep" else []  # bench parses its grid before any GPU work
    r = run(name, "--kernel", "triton_mla", "--mask", "tree,rope", "-o", tmp_path / "X", *only_plan)
    assert r.exit_code == 2 and "--mask" in r.output and "'tree,rope'" in r.output
