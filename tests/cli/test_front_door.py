"""Every command as the README and the guide promise it: no traceback, one-line errors naming only options
that exist, the exit codes of the table, -o/--out where the dialect table says, one format for a bad --gpu."""

import importlib.util
import json
import sys

import pytest
from click.testing import CliRunner

from roofline.cli import main
from tests.paths import FIXTURES


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture
def no_torch(monkeypatch):
    """A machine without torch and triton: neither imports, nor is found."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n in ("torch", "triton") else real(n, *a))
    for name in ("torch", "triton", "profiler.bench"):
        monkeypatch.setitem(sys.modules, name, None)  # `import torch` raises ImportError


@pytest.mark.parametrize(
    "argv",
    [("bench",), ("bench", "--serving"), ("bench", "--kernel", "triton_mla_fast", "--ctx", "8k"), ("check",)],
)
def test_kernel_commands_without_torch_are_one_line_exit_2(no_torch, argv):
    r = cli(*argv)
    assert r.exit_code == 2, r.output
    assert r.output.startswith(f"Error: roofline {argv[0]} needs torch and triton") and len(r.output.splitlines()) == 1


def test_bench_from_a_saved_json_needs_no_torch(no_torch):
    r = cli("bench", "--from", "docs/results/h200-peers/bench.json")
    assert r.exit_code == 0 and "triton_mla_fast_graph" in r.output


# -- model ---------------------------------------------------------------------------------------------------


def test_model_of_a_kernel_without_a_model_gives_the_floor_and_says_why():
    r = cli("model", "--kernel", "flashmla", "--ctx", "128k", "--format", "json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    floor = json.loads(cli("model", "--ctx", "128k", "--format", "json").stdout)
    assert out["floor_ms"] == floor["floor_ms"] and "kernel_model" not in out
    assert any(n.startswith("flashmla has no kernel model") for n in out["notes"])
    r = cli("model", "--kernel", "flashmla", "--ctx", "128k")
    assert r.exit_code == 0 and "note: flashmla has no kernel model" in r.output


@pytest.mark.parametrize(
    "argv,message",
    [
        (("--ctx", "128k", "--lens", "4k,2k"), "--ctx and --lens both given"),
        (("--compile",), "--compile compiles the kernel --kernel names: give --kernel too"),
    ],
)
def test_model_refuses_options_it_would_drop(argv, message):
    r = cli("model", *argv)
    assert r.exit_code == 2 and message in r.output


def test_model_lens_alone_still_works():
    assert cli("model", "--lens", "4k,2k").exit_code == 0


def test_a_context_too_long_says_per_layer_and_whole_model():
    r = cli("model", "--ctx", "32m")
    assert r.exit_code == 2
    assert "19.3 GB of bf16 MLA KV cache per layer and request, 1.18 TB over a 61-layer model" in r.output
    assert "more than one GPU's memory" not in r.output


# -- -o/--out on the commands that print ---------------------------------------------------------------------


@pytest.mark.parametrize("command", ["analyze", "model"])
def test_out_writes_what_was_printed_and_refuses_an_existing_file(command, tmp_path):
    out = tmp_path / "out.json"
    r = cli(command, "--format", "json", "-o", out)
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text()) == json.loads(r.stdout)
    r = cli(command, "--format", "json", "-o", out)
    assert r.exit_code == 2 and "out.json: already exists; pass --force" in r.output
    assert cli(command, "--format", "json", "-o", out, "--force").exit_code == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.json"]  # no staging folder left


def test_analyze_out_of_a_bad_input_leaves_nothing(tmp_path):
    r = cli("analyze", tmp_path / "missing", "-o", tmp_path / "a.txt")
    assert r.exit_code == 2 and list(tmp_path.iterdir()) == []


# -- one format for a bad --gpu --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ("model",),
        ("analyze",),
        ("metrics",),
        ("profile",),
        ("compile", "--kernel", "triton_mla", "--arch", "sm_90"),
    ],
)
def test_an_unknown_gpu_is_one_line_everywhere(argv):
    r = cli(*argv, "--gpu", "h100x")
    assert r.exit_code == 2 and len(r.output.splitlines()) == 1, r.output
    assert r.output.startswith("Error: --gpu 'h100x': ") and "known: rtx-pro-6000, " in r.output


# -- advice names options that exist -------------------------------------------------------------------------


def test_an_nsys_report_without_nsys_names_no_option_analyze_lacks(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NSYS", raising=False)
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    r = cli("analyze", FIXTURES / "nsys" / "triton_mla_8k.nsys-rep")
    assert r.exit_code == 2 and "put it on PATH or set $NSYS" in r.output and "--nsys" not in r.output


def test_doctor_advice_names_no_option_doctor_lacks(monkeypatch, tmp_path):
    from roofline.pipelines.doctor import check_tools

    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    checks, _ = check_tools(True)
    fix = next(c.fix for c in checks if c.name == "ncu")
    assert "NCU=/path/to/ncu" in fix and "or --ncu at it" not in fix and "profile also takes --ncu" in fix
    assert "--ncu" not in cli("doctor", "--help").output


def test_doctor_in_a_cpu_analysis_environment_exits_0(monkeypatch, tmp_path):
    import roofline.pipelines.doctor as doctor

    no_torch = json.dumps({"torch": None, "triton": None, "error": "ModuleNotFoundError: No module named 'torch'"})
    real_run = doctor._run
    monkeypatch.setattr(
        doctor, "_run", lambda cmd, timeout=60: (0, no_torch) if "-c" in cmd else real_run(cmd, timeout)
    )
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    r = cli("doctor")
    assert r.exit_code == 0 and r.output.splitlines()[-1].startswith("a CPU analysis environment")
    out = json.loads(cli("doctor", "--format", "json").stdout)
    assert out["ok"] is False and out["analysis_environment"] is True


# -- a folder of run directories -----------------------------------------------------------------------------


def test_analyze_reads_a_folder_of_run_directories(tmp_path):
    import shutil

    from tests.paths import RUNS

    for name in ("h200-triton_mla-128k", "h200-triton_mla_decode-128k-p64"):
        shutil.copytree(RUNS / name, tmp_path / name)
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "manifest.json").write_text("{not json")
    r = cli("analyze", tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert lines[0] == f"{tmp_path}: 3 run directories (`roofline analyze RUN` for one run's verdicts)"
    rows = {line.split()[0]: line.split() for line in lines[3:]}
    assert rows["h200-triton_mla-128k"][1:3] == ["triton_mla", "128k"] and "latency" in rows["h200-triton_mla-128k"]
    assert rows["h200-triton_mla_decode-128k-p64"][1] == "triton_mla_decode"
    assert "UNREADABLE" in rows["broken"]
    out = json.loads(cli("analyze", tmp_path, "--format", "json").stdout)
    by_run = {r["run"]: r for r in out["runs"]}
    assert by_run["h200-triton_mla-128k"]["ctx_len"] == 131072 and by_run["h200-triton_mla-128k"]["gap"] > 100
    assert by_run["broken"]["status"] == "unreadable" and by_run["broken"]["error"]


def test_report_out_without_an_extension_is_a_folder(tmp_path):
    r = cli("report", "-o", tmp_path / "some" / "name", "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["report"] == str(tmp_path / "some" / "name" / "report.md")
    assert (tmp_path / "some" / "name" / "report.md").read_text().startswith("#")


def test_validate_without_ncu_leaves_no_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    r = cli("validate", "-o", tmp_path / "v")
    assert r.exit_code == 1 and "ncu (Nsight Compute) not found" in r.output
    assert "kept at" not in r.output and not (tmp_path / "v").exists()


def test_profile_without_a_profiler_says_so_before_anything_else(tmp_path, no_tools):
    r = cli("profile", "--ctx", "1k", "-o", tmp_path / "run")
    assert r.exit_code == 1 and r.output.startswith("Error: no profiler found")
    assert "capture timeout" not in r.output


def test_a_run_without_its_spec_says_why_it_has_no_workload(tmp_path):
    import shutil

    from tests.paths import RUNS

    run = shutil.copytree(RUNS / "h200-triton_mla-128k", tmp_path / "run")  # format 1: spec.json not checksummed
    (run / "spec.json").unlink()
    r = cli("analyze", run)
    assert r.exit_code == 0 and "workload:" not in r.output and "step:" not in r.output
    text = " ".join(r.output.split())
    assert "note: spec.json is missing from this run: no workload, so no step, floor or gap" in text
    assert "spec.json is not checksummed" not in text


def test_a_removal_folder_whose_experiment_is_cut_short_names_it(tmp_path):
    from tests.paths import ROOT, RUNS

    ring_run = RUNS / "h200-triton_mla_fast-ring-128k-p64"
    whole = (ROOT / "docs" / "results" / "h200-removal" / "_gluon_ring_kernel.json").read_text()
    cut = tmp_path / "cut"
    cut.mkdir()
    (cut / "_gluon_ring_kernel.json").write_text(whole[: len(whole) // 2])
    r = cli("analyze", ring_run, "--removal", cut)
    assert r.exit_code == 2 and len(r.output.splitlines()) == 1, r.output
    assert r.output.startswith(f"Error: {cut / '_gluon_ring_kernel.json'}: cannot read a removal experiment")
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "_gluon_ring_kernel.json").write_text(whole)
    (beside / "other.json").write_text(whole[:100])
    r = cli("analyze", ring_run, "--removal", beside, "--format", "json")
    assert r.exit_code == 0, r.output
    notes = json.loads(r.stdout)["notes"]
    assert any(n.startswith(f"{beside / 'other.json'}: cannot read") and "not read as a removal" in n for n in notes)


# -- the README's promises -------------------------------------------------------------------------------------


def test_a_million_tokens_print_as_1m_the_way_they_are_typed():
    from kernels.spec import ctx_text, parse_ctx_len

    assert [ctx_text(n) for n in (1 << 20, 2 << 20, 128 << 10, 300)] == ["1m", "2m", "128k", "300"]
    assert all(parse_ctx_len(ctx_text(n)) == n for n in (1 << 20, 3 << 20, 128 << 10, 1000))
    r = cli("bench", "--from", "docs/results/h200-peers/bench.json")
    assert r.exit_code == 0 and "1024k" not in r.output and " 1m " in r.output


def test_the_readme_marks_where_its_analyze_excerpt_is_cut():
    from pathlib import Path

    readme = Path("README.md").read_text()
    excerpt = readme.split("$ roofline analyze ")[1].split("```")[0]
    whole = Path("docs/examples/analyze.txt").read_text()
    assert "  [...]" in excerpt and "cuts marked `[...]`" in readme
    kept = [line for line in excerpt.splitlines()[1:] if line != "  [...]"]
    assert all(line in whole.splitlines() for line in kept) and len(kept) < len(whole.splitlines())
    flat = " ".join(readme.split())
    assert "The seed's 139x (714 ms per verify step against 5.146 ms to read its 61 layers' KV cache" in flat
    assert "is this 461x (the same kernel, one layer, against the H200's floor)" in flat


def test_a_folder_of_runs_refuses_per_run_options_and_report_names_one_run(tmp_path):
    import shutil

    from tests.paths import RUNS

    shutil.copytree(RUNS / "h200-triton_mla-128k", tmp_path / "runs" / "a")
    r = cli("analyze", tmp_path / "runs", "--gpu", "h100", "-o", tmp_path / "out.txt")
    assert r.exit_code == 2 and "a folder of run directories takes no --gpu: name one run" in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs"]
    r = cli("report", tmp_path / "runs", "-o", tmp_path / "rep")
    assert r.exit_code == 2 and len(r.output.splitlines()) == 1
    assert (
        "a folder of 1 run directory and no report of its own" in r.output and str(tmp_path / "runs" / "a") in r.output
    )
