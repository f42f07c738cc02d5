"""The profile's request: one ProfileRequest built by the CLI, the API and the sweep alike, its defaults
declared once (roofline/pipelines/request.py)."""

import click
import pytest
from click.testing import CliRunner

import roofline
from kernels.spec import VerifyWorkload
from roofline.cli import main
from roofline.pipelines import request as req
from roofline.pipelines.request import ProfileRequest

SKEW = ["--lens", "mix:1x128k,15x2k", "--q-len", "4", "--heads", "16", "--mask", "chain", "--seed", "3"]


def test_the_cli_and_the_api_build_the_same_request(monkeypatch):
    seen = []

    def fake(request, **kw):
        seen.append(request)
        raise roofline.BadInput("stopped before the capture (test)")

    monkeypatch.setattr("roofline.pipelines.profiling.profile", fake)
    r = CliRunner().invoke(main, ["profile", "--kernel", "triton_mla_fast", *SKEW, "--timing-rounds", "2"])
    assert r.exit_code == 2, r.output
    with pytest.raises(roofline.BadInput):
        roofline.profile(
            "triton_mla_fast", lens="mix:1x128k,15x2k", q_len=4, heads=16, tree_mask="chain", seed=3, timing_rounds=2
        )
    cli, api = seen
    assert cli == api
    assert cli.workload.ctx_lens == (131072,) + (2048,) * 15 and cli.workload.q_len == 4 and cli.workload.seed == 3


def test_the_defaults_are_the_requests_everywhere():
    profile = main.get_command(click.Context(main), "profile")
    sweep = main.get_command(click.Context(main), "sweep")
    defaults = ProfileRequest()
    for command in (profile, sweep):
        params = {p.name: p.default for p in command.params}
        assert params["iterations"] == defaults.iterations == req.DEFAULT_ITERATIONS
        assert params["timeout"] == defaults.timeout == req.DEFAULT_TIMEOUT_S
        assert params["timing_samples"] == defaults.timing_samples == req.DEFAULT_TIMING_SAMPLES
        assert params["timing_rounds"] == defaults.timing_rounds == req.DEFAULT_TIMING_ROUNDS
    w = VerifyWorkload()
    params = {p.name: p.default for p in profile.params}
    assert (params["heads"], params["q_len"], params["page_size"], params["tree_mask"]) == (
        w.heads,
        w.q_len,
        w.page_size,
        w.tree_mask,
    )


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("iterations", 0, "iterations must be at least 1"),
        ("timeout", 0, "timeout must be a positive number of seconds"),
        ("timing_samples", -1, "timing_samples must be 0"),
        ("timing_rounds", 0, "timing_rounds must be at least 1"),
        ("tool", "perf", "tool must be one of ncu, nsys, both"),
    ],
)
def test_a_setting_out_of_range_is_refused_once(field, value, message):
    with pytest.raises(ValueError, match=message):
        ProfileRequest(**{field: value})


def test_a_request_goes_through_json_unchanged():
    w = roofline.make_workload(lens="mix:1x128k,15x2k", q_len=4, heads=16, tree_mask="chain", seed=3)
    r = ProfileRequest("triton_mla_fast", w, tool="ncu", timing_rounds=2, why=True)
    assert ProfileRequest.from_dict(r.to_dict()) == r


def test_the_request_holds_the_workload_and_the_settings_alone():
    with pytest.raises(TypeError, match="the request holds the workload"):
        roofline.profile(ProfileRequest(), tool="ncu")
