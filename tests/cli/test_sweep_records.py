"""`roofline sweep`'s records: --summarize reads every point of a sweep folder and writes only with --write, says
why a point has no numbers, and each point's command is one `roofline profile` accepts; a sweep records each
point's numbers in sweep.json. The committed H200 sweep is copied into tmp_path."""

import json
import shutil

import click
import pytest
from click.testing import CliRunner

from roofline.cli import main
from tests.paths import ROOT
from tests.stubs import stand_in

COMMITTED_SWEEP = ROOT / "docs" / "results" / "h200-sweep"


def _sweep(*args):
    return CliRunner().invoke(main, ["sweep", *map(str, args)])


def test_summarize_writes_nothing_and_reads_every_point_of_the_committed_sweep(tmp_path):
    import pandas as pd

    sweep = tmp_path / "h200-sweep"
    shutil.copytree(COMMITTED_SWEEP, sweep)
    before = {p.name: p.read_bytes() for p in sweep.iterdir()}
    r = _sweep("--summarize", sweep, "--format", "json")
    assert r.exit_code == 0 and {p.name: p.read_bytes() for p in sweep.iterdir()} == before
    rows = json.loads(r.stdout)
    committed = pd.read_csv(COMMITTED_SWEEP / "summary.csv")
    assert [row["status"] for row in rows] == list(committed["status"])  # 15 done, 3 failed (page 48)
    assert sum(row["status"] == "done" for row in rows) == 15
    assert [row["step_ms"] for row in rows if row["status"] == "done"] == pytest.approx(
        list(committed.loc[committed["status"] == "done", "step_ms"]), rel=1e-9
    )
    assert all("numbers from summary.csv" in row["error"] for row in rows if row["status"] == "done")
    assert "nothing written (pass --write" in r.stderr


def test_summarize_says_why_a_point_has_no_numbers_and_writes_with_write(tmp_path):
    sweep = tmp_path / "h200-sweep"
    shutil.copytree(COMMITTED_SWEEP, sweep)
    (sweep / "summary.csv").unlink()
    (sweep / "sweep.png").unlink()
    r = _sweep("--summarize", sweep, "--format", "json")
    rows = json.loads(r.stdout)
    assert r.exit_code == 0 and not (sweep / "summary.csv").exists()
    missing = [row for row in rows if row["status"] == "missing"]
    assert len(missing) == 15 and "run folder triton_mla-8k-h8-q9-p1 is not in" in missing[0]["error"]
    assert _sweep("--summarize", sweep, "--write").exit_code == 0 and (sweep / "summary.csv").exists()


def test_point_commands_carry_tool_preset_and_timeout(tmp_path):
    r = _sweep("--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--out", tmp_path / "S", "--print-commands")
    argv = r.output.split()
    assert r.exit_code == 0 and argv[:2] == ["roofline", "profile"]
    for option, value in (("--tool", "ncu"), ("--preset", "roofline"), ("--timeout", "900"), ("--iters", "3")):
        assert argv[argv.index(option) + 1] == value
    # each point's command is one that `roofline profile` itself accepts
    profile = main.get_command(click.Context(main), "profile")
    params = profile.make_context("profile", argv[2:]).params
    assert (
        params["tool"] == "ncu" and params["ctx_len"] == 8192 and params["out_dir"].endswith("triton_mla-8k-h8-q9-p1")
    )


def test_a_sweep_records_each_points_numbers_in_sweep_json(tmp_path):

    out = tmp_path / "S"
    r = _sweep("--kernel", "triton_mla", "--ctx", "8k", "--page-size", "1", "--out", out, "--ncu", stand_in(tmp_path))
    assert r.exit_code == 0, r.output
    point = json.loads((out / "sweep.json").read_text())["points"]["triton_mla-8k-h8-q9-p1"]
    assert point["step_ms"] > 0 and point["bound"].startswith("latency")
    shutil.rmtree(out / "triton_mla-8k-h8-q9-p1")
    (out / "summary.csv").unlink()
    (row,) = json.loads(_sweep("--summarize", out, "--format", "json").stdout)
    assert row["status"] == "done" and row["step_ms"] == pytest.approx(point["step_ms"], rel=1e-9)
    assert "numbers as sweep.json recorded them" in row["error"]
