import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from roofline.cli import main
from tests.paths import SAMPLE_RUN, TORCH_DEFAULT

KEYS = {
    "kernel",
    "launches",
    "duration_ms",
    "dram_throughput_pct",
    "sm_throughput_pct",
    "l2_hit_rate_pct",
    "dram_gbps",
    "waves_per_sm",
    "bound",
    "evidence",
}


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_kernels_json():
    out = json.loads(run("kernels", "--format", "json").output)
    assert {k["name"] for k in out} >= {"torch_ref", "triton_mla"} and all(k["description"] for k in out)


def test_analyze_bundled_sample_json():
    r = run("analyze", "--format", "json")
    assert r.exit_code == 0
    d = json.loads(r.output)
    assert d["gpu"]["name"] == "NVIDIA H200"
    (k,) = d["kernels"]
    assert KEYS <= set(k) and k["bound"] == "latency" and k["launches"] == 3


def test_analyze_text_and_bare_report(tmp_path):
    r = run("analyze", str(SAMPLE_RUN))
    assert "_verify_extend_kernel" in r.output and "small grid" in r.output and "x from the floor" in r.output
    d = json.loads(run("analyze", str(TORCH_DEFAULT), "--format", "json").output)
    assert len(d["kernels"]) == 2 and d["floor"] is None


def test_analyze_bad_paths(tmp_path):
    r = run("analyze", str(tmp_path / "nope"))
    assert r.exit_code == 2 and "no such run directory or report" in r.output
    r = run("analyze", str(tmp_path))
    assert r.exit_code == 2 and "no report in this folder" in r.output


@pytest.mark.parametrize("ctx", ["12q", "-5", "0"])
def test_bad_ctx_is_one_line_usage_error(ctx):
    r = run("model", "--ctx", ctx)
    assert r.exit_code == 2 and "context length" in r.output and "Traceback" not in r.output


def test_model_reproduces_the_seed_arithmetic():
    d = json.loads(
        run(
            "model",
            "--ctx",
            "128k",
            "--gpu",
            "rtx-pro-6000",
            "--heads",
            "8",
            "--q-len",
            "9",
            "--layers",
            "61",
            "--format",
            "json",
        ).output
    )
    assert d["kv_bytes"] / 1e9 == pytest.approx(9.2, abs=0.05)
    assert d["floor_ms"] == pytest.approx(5.1, abs=0.2) and d["bound"] == "bandwidth"
    d64 = json.loads(
        run(
            "model", "--ctx", "128k", "--gpu", "rtx-pro-6000", "--heads", "64", "--layers", "61", "--format", "json"
        ).output
    )
    assert d64["bound"] == "compute" and d64["arithmetic_intensity"] > 1000
    r = run("model", "--gpu", "rtx-9999")
    assert r.exit_code == 2 and "known: rtx-pro-6000" in r.output and "h200" in r.output


def test_check_cpu_json():
    r = run(
        "check", "--kernel", "triton_mla", "--ctx", "77", "--page-size", "16", "--device", "cpu", "--format", "json"
    )
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["ok"] and d["kernel"] == "triton_mla" and d["rel_err"] < 2e-3
    r = run("check", "--kernel", "nope", "--device", "cpu")
    assert r.exit_code == 2 and "known: torch_ref, triton_mla" in r.output


def test_profile_without_ncu_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("NCU", raising=False)
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    r = run("profile", "--ctx", "1k", "--out", str(tmp_path / "run"))
    assert r.exit_code == 1 and "ncu (Nsight Compute) not found" in r.output
    assert list(tmp_path.iterdir()) == []  # nothing ran: no run, no kept failed run, no temporary folder


def test_reading_commands_do_not_import_torch():
    code = (
        "import sys; from click.testing import CliRunner; from roofline.cli import main; "
        "r = CliRunner().invoke(main, ['analyze', '--format', 'json']); assert r.exit_code == 0, r.output; "
        "CliRunner().invoke(main, ['model']); CliRunner().invoke(main, ['kernels']); "
        "assert 'torch' not in sys.modules and 'triton' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_profile_end_to_end_with_a_replaying_ncu(tmp_path):
    """`roofline profile` with an ncu stand-in that replays the real H200 sample's log and report:
    the run directory gets everything later stages need, and the verdict is printed."""
    stub = tmp_path / "ncu"
    stub.write_text(
        "#!/bin/sh\n"
        f"cat '{SAMPLE_RUN / 'profile.ncu.log'}'\n"
        'while [ "$1" != "--export" ]; do shift; done\n'
        f"cp '{SAMPLE_RUN / 'profile.ncu-rep'}' \"$2.ncu-rep\"\n"
    )
    stub.chmod(0o755)
    out = tmp_path / "run"
    r = CliRunner().invoke(
        main,
        ["profile", "--kernel", "triton_mla", "--ctx", "128k", "--out", str(out), "--ncu", str(stub)],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    assert "small grid" in r.output and "x from the floor" in r.output
    for name in (
        "manifest.json",
        "spec.json",
        "commands.txt",
        "profile.ncu-rep",
        "profile.ncu.log",
        "launches.csv",
        "analysis.json",
    ):
        assert (out / name).exists(), name
    analysis = json.loads((out / "analysis.json").read_text())
    assert analysis["kernels"][0]["bound"] == "latency" and analysis["profile"]["passes"] == [6, 6, 6]
    assert "--clock-control none" in (out / "commands.txt").read_text()


def test_check_bad_page_size_for_the_fast_kernel_is_a_clear_error():
    r = run("check", "--kernel", "triton_mla_fast", "--ctx", "40", "--page-size", "3", "--device", "cpu")
    assert r.exit_code == 2 and "power-of-two page_size" in r.output and "Traceback" not in r.output
    r = run("check", "--kernel", "triton_mla_fast", "--ctx", "40", "--q-len", "0", "--device", "cpu")
    assert r.exit_code == 2 and "q_len must be >= 1" in r.output


def test_kernel_commands_without_torch_say_what_to_install(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    r = run("check", "--ctx", "40", "--device", "cpu")
    assert r.exit_code == 2 and "needs torch" in r.output and "roofline[kernels]" in r.output


def test_every_command_loads_under_its_name_and_help_summary():
    """The lazy group's table: each entry imports a command of that name whose help starts with the
    summary `roofline --help` shows without importing it."""
    import click

    from roofline.cli import COMMANDS

    ctx = click.Context(main)
    for name, (_, summary) in COMMANDS.items():
        command = main.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name
        assert " ".join(command.help.split()).startswith(summary), name
    r = CliRunner().invoke(main, ["--help"])
    commands = r.output.split("Commands:")[1].split("\n\n")[0]  # the exit-code table follows
    listed = [line.split()[0] for line in commands.splitlines() if line.strip()]
    assert r.exit_code == 0 and listed == sorted(COMMANDS)
