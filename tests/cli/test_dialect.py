"""One dialect across commands. One option name a concept (--gpu, --devices, -o/--out,
--format, --force; the old names still work, hidden), one exit-code table in every --help and applied,
compare's verdict last with a one-line mode and kernels paired by role, doctor's words for a CPU analysis
environment, roofline.__version__ and the error types. Each test fails without its change."""

import json

import click
import pytest
from click.testing import CliRunner

from roofline.cli import COMMANDS, main
from tests.paths import FIXTURES, RUNS, SAMPLE_RUN

FLASHMLA = RUNS / "h200-flashmla-chain-128k-p64"  # the README's before/after example
FAST = RUNS / "h200-triton_mla_fast-chain-128k-p64"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def params(command: str, *argv) -> dict:
    """The values `roofline COMMAND argv` parses to (nothing runs)."""
    cmd = main.get_command(click.Context(main), command)
    return cmd.make_context(command, [str(a) for a in argv]).params


# -- option names ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command,new,old,dest,value,parsed",
    [
        ("analyze", "--gpu", "--project-to", "project_to", "rtx-pro-6000", "rtx-pro-6000"),
        ("profile", "--gpu", "--chip", "chip", "h200", "gh100"),  # a GPU model resolves to its ncu chip
        ("metrics", "--gpu", "--chip", "chip", "gb202", "gb202"),
        ("sweep", "--devices", "--gpus", "devices", "0,1", "0,1"),
    ],
)
def test_one_name_a_concept_and_the_old_name_still_works_hidden(command, new, old, dest, value, parsed):
    cmd = main.get_command(click.Context(main), command)
    ctx = cmd.make_context(command, [new, value])
    assert ctx.params[dest] == parsed
    r = CliRunner().invoke(main, [command, "--help"])
    assert new in r.output and old not in r.output  # hidden: --help teaches the one name
    if command == "metrics":  # the old spelling still runs
        assert cli(command, old, value, "--format", "json").exit_code == 0
        r = cli(command, old, value, new, value)
        assert r.exit_code == 2 and f"{old} is the old name of {new}" in r.output


def test_analyze_projects_with_gpu_as_it_did_with_project_to():
    new, old = cli("analyze", "--gpu", "rtx-pro-6000"), cli("analyze", "--project-to", "rtx-pro-6000")
    assert new.exit_code == old.exit_code == 0 and "rtx-pro-6000" in new.output and new.output == old.output


@pytest.mark.parametrize(
    "command,argv",
    [
        ("profile", ["-o", "runs/x"]),
        ("sweep", ["--kernel", "triton_mla", "-o", "runs/s"]),
        ("bench", ["-o", "runs/b"]),
        ("validate", ["-o", "runs/v"]),
        ("compare", ["a", "b", "-o", "c.md"]),
        ("calibrate", ["-o", "h200.json"]),
    ],
)
def test_every_command_that_writes_takes_o_and_out(command, argv):  # report alone had -o
    assert params(command, *argv)["out" if command in ("sweep", "compare", "calibrate") else "out_dir"]


def test_format_json_everywhere_output_is_printed():
    for name in COMMANDS:
        cmd = main.get_command(click.Context(main), name)
        fmt = [p for p in cmd.params if p.name == "fmt"]
        assert fmt and "json" in fmt[0].type.choices, name  # report, bench and validate had none


def test_report_format_json_names_its_files(tmp_path):
    r = cli("report", SAMPLE_RUN, "-o", tmp_path / "r" / "report.md", "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["report"].endswith("report.md") and len(d["charts"]) >= 4


# -- exit codes ---------------------------------------------------------------------------------------------


def test_every_help_ends_with_the_exit_code_table():
    for name in [None, *COMMANDS]:
        r = CliRunner().invoke(main, [name, "--help"] if name else ["--help"])
        assert r.exit_code == 0 and "Exit codes (every roofline command):" in r.output, name
        assert "2      a usage or input error" in r.output


def test_a_missing_path_exits_2_from_analyze_as_from_compare(tmp_path):
    missing = tmp_path / "missing"
    codes = {
        c: cli(*args).exit_code
        for c, args in (
            ("analyze", ["analyze", missing]),
            ("compare", ["compare", SAMPLE_RUN, missing]),
            ("report", ["report", missing]),
        )
    }
    assert codes == {"analyze": 2, "compare": 2, "report": 2}  # analyze and report exited 1


# -- compare: the verdict last, one line, pairs by role ---------------------------------------------------


def test_compare_prints_its_gate_last_and_has_a_one_line_mode():
    r = cli("compare", FLASHMLA, FAST, "--fail-if-slower", "5")
    last = r.output.rstrip().splitlines()[-1]
    assert r.exit_code == 0 and last.startswith("gate: passed: head step -28.9% vs base")  # was line 5 of ~100
    line = cli("compare", FLASHMLA, FAST, "--fail-if-slower", "5", "--format", "line")
    assert line.exit_code == 0 and line.output == last + "\n"
    swapped = cli("compare", FAST, FLASHMLA, "--fail-if-slower", "5", "--format", "line")
    assert swapped.exit_code == 1 and swapped.output.startswith("gate: FAILED: head step +40.7% vs base")


def test_compare_pairs_the_readmes_kernels_by_role_and_says_so():
    d = json.loads(cli("compare", FLASHMLA, FAST, "--format", "json").output)
    pairs = {(k["kernel"], k["head_kernel"], k["paired_by"]) for k in d["kernels"]}
    assert pairs == {  # was four rows: two "base only", two "head only"
        ("flash_fwd_splitkv_mla_kernel", "_gluon_ring_kernel", "role (main)"),
        ("flash_fwd_mla_combine_kernel", "_combine_kernel", "role (combine)"),
    }
    assert sum(n.startswith("paired by role") for n in d["notes"]) == 2
    text = cli("compare", FLASHMLA, FAST).output
    assert "flash_fwd_splitkv_mla_kernel -> _gluon_ring_kernel  both, by role (main)" in text


def test_compare_pair_names_the_pairs_and_refuses_a_kernel_a_run_lacks(tmp_path):
    pair = "flash_fwd_mla_combine_kernel=_gluon_ring_kernel"
    d = json.loads(cli("compare", FLASHMLA, FAST, "--pair", pair, "--format", "json").output)
    by = {k["kernel"]: (k["head_kernel"], k["paired_by"]) for k in d["kernels"] if k["side"] == "both"}
    assert by == {"flash_fwd_mla_combine_kernel": ("_gluon_ring_kernel", "--pair")}
    r = cli("compare", FLASHMLA, FAST, "--pair", "nope=_combine_kernel")
    assert r.exit_code == 2 and "--pair nope=_combine_kernel: the base run has no kernel nope" in r.output
    out = tmp_path / "cmp.md"
    assert cli("compare", FLASHMLA, FAST, "--format", "markdown", "-o", out).exit_code == 0
    assert out.read_text().startswith("### roofline compare")
    r = cli("compare", FLASHMLA, FAST, "-o", out)
    assert r.exit_code == 2 and "cmp.md: already exists; pass --force" in r.output


# -- doctor, the package ----------------------------------------------------------------------------------


def test_doctor_in_a_cpu_analysis_environment_says_so(monkeypatch, tmp_path):
    import roofline.pipelines.doctor as doctor

    no_torch = json.dumps({"torch": None, "triton": None, "error": "ModuleNotFoundError: No module named 'torch'"})
    real_run = doctor._run
    monkeypatch.setattr(
        doctor, "_run", lambda cmd, timeout=60: (0, no_torch) if "-c" in cmd else real_run(cmd, timeout)
    )
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")  # no nvidia-smi, ncu or nsys
    monkeypatch.setattr("profiler.ncu._INSTALL_GLOBS", ())
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    r = CliRunner().invoke(main, ["doctor"])
    assert "reinstall torch" not in r.output and "import torch failed" not in r.output  # for a torch never installed
    assert not any(line.startswith("FAIL") for line in r.output.splitlines()), r.output
    assert r.output.splitlines()[-1].startswith("a CPU analysis environment (no NVIDIA driver, no CUDA build of torch)")
    assert "info  torch and triton  not installed" in r.output


def test_version_and_every_error_type_from_roofline():
    import importlib.metadata

    import roofline

    assert roofline.__version__ == importlib.metadata.version("roofline") and "__version__" in dir(roofline)
    for name in ("OutputExists", "ReportExists", "RemovalError", "ChartError", "UnknownKernel", "CompileError"):
        err = getattr(roofline, name)
        assert name in roofline.__all__ and issubclass(err, roofline.RooflineError), name


def test_a_closed_kernel_without_line_info_is_not_told_to_import_its_source():
    r = cli("analyze", FIXTURES / "corpus" / "gemm.ncu-rep.gz")  # cuBLAS: PC samples, no file:line
    assert r.exit_code == 0 and "no line info: the kernel carries no file:line" in r.output
    assert "(`ncu --import-source yes`);" not in r.output  # was the advice, which cannot help
