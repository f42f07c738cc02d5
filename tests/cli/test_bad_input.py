"""Bad input gives a one-line error or a warning, never a traceback, a hang or a silent acceptance, and
nothing is lost. Cut and edited files are made from the real committed H200 captures, copied into tmp_path.
More cases beside this file: tests/cli/test_bad_files.py (every number read from a file),
tests/cli/test_dialect.py (options, exit codes, compare, doctor) and tests/api/test_races.py (two
commands at once, a signal)."""

import json
import shutil
import struct
from pathlib import Path

import pytest
from click.testing import CliRunner

from roofline.cli import main
from tests.paths import FIXTURES, ROOT, RUNS, SAMPLE_RUN
from tests.stubs import (
    alive,
    hanging_tool,
    kept_run,
)

TRITON_MLA_RUN = RUNS / "h200-triton_mla-128k"  # 3 launches of _verify_extend_kernel
REPORT = TRITON_MLA_RUN / "profile.ncu-rep"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(result, code=None):
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    if code is not None:
        assert result.exit_code == code, result.output
    else:
        assert result.exit_code != 0, result.output
    assert "Traceback" not in result.output
    return result.output


# -- a report cut inside a record -----------------------------------------------------------------


def _records(path: Path) -> list[tuple[int, int]]:
    """(offset, declared length) of each length-prefixed record after the 4-byte magic."""
    data, pos, out = path.read_bytes(), 4, []
    while pos < len(data):
        n = struct.unpack_from("<I", data, pos)[0]
        out.append((pos, n))
        pos += 4 + n
    return out


def _cut(tmp_path, nbytes: int) -> Path:
    out = tmp_path / "cut.ncu-rep"
    out.write_bytes(REPORT.read_bytes()[:nbytes])
    return out


def test_cut_inside_last_launch_record_is_incomplete(tmp_path):
    last_pos, last_len = _records(REPORT)[-1]  # launch 3's payload
    cut = _cut(tmp_path, last_pos + 4 + last_len // 2)
    out = one_line_error(cli("analyze", cut), 2)
    assert "incomplete capture: cut inside launch record 3: 2 whole launches" in out
    r = cli("analyze", cut, "--allow-incomplete", "--format", "json")
    data = json.loads(r.output)
    assert r.exit_code == 0 and data["complete"] is False
    assert data["kernels"][0]["launches"] == 2


def test_cut_just_after_a_launch_header_counts_the_whole_launches(tmp_path):
    header_pos, header_len = _records(REPORT)[-2]  # launch 3's header, its payload missing
    cut = _cut(tmp_path, header_pos + 4 + header_len)
    out = one_line_error(cli("analyze", cut), 2)
    assert "cut inside launch record 3: 2 whole launches" in out and "before the first one" not in out


def test_cut_before_any_launch_says_so(tmp_path):
    pos, n = _records(REPORT)[4]  # launch 1's header (after: file header, session, sources header, sources)
    out = one_line_error(cli("analyze", _cut(tmp_path, pos + 10)), 2)
    assert "cut inside launch record 1: 0 whole launches" in out


def test_every_committed_report_walks_whole():
    from profiler.ncu_reader import walk_records

    for report in sorted(FIXTURES.rglob("*.ncu-rep")) + [SAMPLE_RUN / "profile.ncu-rep"]:
        walk = walk_records(report)
        assert walk.cut is None and walk.whole_bytes == report.stat().st_size, report


# -- spec.json and every other file of a run are checksummed ---------------------------------------


def _rewritten_run(tmp_path) -> Path:
    """The committed triton_mla run written again by RunWriter (the current manifest format)."""
    from profiler.run_writer import RunWriter

    w = RunWriter(tmp_path / "run")
    for name in ("spec.json", "harness.json", "profile.ncu-rep", "profile.ncu.log", "commands.txt"):
        shutil.copy(TRITON_MLA_RUN / name, w.path / name)
    w.add_report(w.path / "profile.ncu-rep", "ncu", launches=3, passes=17)
    return w.commit()


def _edit_json(path: Path, **changes):
    data = json.loads(path.read_text())
    for key, value in changes.items():
        target = data
        *parents, last = key.split(".")
        for p in parents:
            target = target[p] if not p.isdigit() else target[int(p)]
        target[last] = value
    path.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize("field,value", [("workload.heads", 64), ("iterations", 1)])
def test_an_edited_spec_is_refused(tmp_path, field, value):
    run = _rewritten_run(tmp_path)
    assert cli("analyze", run).exit_code == 0
    _edit_json(run / "spec.json", **{field: value})
    out = one_line_error(cli("analyze", run), 2)
    assert "spec.json: does not match the sha256 in manifest.json" in out and len(out.splitlines()) == 1


def test_an_older_run_without_a_spec_checksum_warns(tmp_path):
    run = tmp_path / "old"
    shutil.copytree(TRITON_MLA_RUN, run)
    r = cli("analyze", run)
    assert r.exit_code == 0 and "spec.json is not checksummed in this older run" in r.output


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("reports.0.launches", "3", "reports[0].launches must be an integer or null"),
        ("reports.0.bytes", 1.5, "reports[0].bytes must be an integer"),
        ("commands", "ncu", "commands must be a list of strings"),
        ("wall_s", "fast", "wall_s must be a number or null"),
        ("host", [], "host must be a JSON object"),
    ],
)
def test_manifest_fields_are_type_checked(tmp_path, field, value, message):
    run = tmp_path / "old"
    shutil.copytree(TRITON_MLA_RUN, run)
    _edit_json(run / "manifest.json", **{field: value})
    out = one_line_error(cli("analyze", run), 2)
    assert message in out and len(out.splitlines()) == 1


# -- options and files that set a number ------------------------------------------------------------


@pytest.mark.parametrize(
    "args,message",
    [
        (["model", "--ctx", "100000m"], "above the 16m (16,777,216) tokens roofline models"),
        (["model", "--kernel", "triton_mla_fast", "--page-size", "3"], "needs a power-of-two page_size"),
        (
            ["check", "--kernel", "triton_mla_fast", "--page-size", "3", "--ctx", "300", "--device", "cpu"],
            "needs a power-of-two page_size",
        ),
        (
            ["compare", SAMPLE_RUN, SAMPLE_RUN, "--fail-if-slower", "nan"],
            "--fail-if-slower must be a finite percentage",
        ),
        (
            ["compare", SAMPLE_RUN, SAMPLE_RUN, "--fail-if-slower", "inf"],
            "--fail-if-slower must be a finite percentage",
        ),
    ],
)
def test_bad_numbers_are_refused_in_one_line(args, message):
    out = one_line_error(cli(*args), 2)
    assert message in out


def test_spec_bounds_the_context_length():
    from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len

    assert parse_ctx_len("16m") == 16 * 1024**2
    with pytest.raises(WorkloadError, match="above the 16m"):
        VerifyWorkload(ctx_len=16 * 1024**2 + 1)
    with pytest.raises(WorkloadError, match="above the 16m"):
        VerifyWorkload(batch=2, ctx_lens=(8, 10**12))


def test_model_of_a_graph_kernel_and_a_gpu_without_launch_config():
    r = cli("model", "--kernel", "triton_mla_fast_graph")
    assert r.exit_code == 0 and "modelled as triton_mla_fast" in r.output
    for gpu, arch in (("a100", "sm_80"), ("l40s", "sm_89")):
        r = cli("model", "--kernel", "triton_mla_fast", "--gpu", gpu, "--compile")
        assert r.exit_code == 0, r.output
        assert f"no launch configuration for {arch}" in r.output and "modelled without --compile" in r.output


def test_bench_from_a_file_with_no_rows(tmp_path):
    f = tmp_path / "bench.json"
    meta = {"device": "NVIDIA H200", "read_gbps": 4570, "copy_gbps": 4255, "matmul_tflops": 695}
    f.write_text(json.dumps({"meta": meta, "rows": []}))
    out = one_line_error(cli("bench", "--from", f), 2)
    assert "no rows" in out and "kernel" not in out
    f.write_text(json.dumps({"meta": {**meta, "read_gbps": 0}, "rows": [{}]}))
    assert "meta.read_gbps must be a positive number" in one_line_error(cli("bench", "--from", f), 2)


@pytest.mark.parametrize("value,shown", [(0, "0"), (-100, "-100"), ("fast", '"fast"'), (float("nan"), "NaN")])
def test_measured_ceilings_are_validated_on_load(tmp_path, monkeypatch, value, shown):
    home = tmp_path / "config"
    measured = home / "roofline" / "measured"
    measured.mkdir(parents=True)
    (measured / "h200.json").write_text(json.dumps({"read_gbps": value, "matmul_tflops": 686}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    out = one_line_error(cli("model", "--ctx", "128k"), 2)
    assert f"h200.json: read_gbps must be a positive number, got {shown}" in out


# -- special files are refused before they are opened -----------------------------------------------


def _roofline(*args, timeout=120):
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "roofline", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


@pytest.mark.parametrize("where", ["report", "run report", "run spec", "bench"])
def test_a_fifo_is_refused_not_waited_on(tmp_path, where):
    import os

    if where == "report":
        fifo = target = tmp_path / "profile.ncu-rep"
    else:
        target = tmp_path / "run"
        shutil.copytree(TRITON_MLA_RUN, target)
        fifo = target / ("spec.json" if where == "run spec" else "profile.ncu-rep")
        fifo.unlink()
    if where == "bench":
        fifo = target = tmp_path / "bench.json"
    os.mkfifo(fifo)
    args = ["bench", "--from", target] if where == "bench" else ["analyze", target]
    r = _roofline(*args)  # a hang fails here on the timeout
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in r.stderr


# -- profile: where it writes, how it stops, what it says ---------------------------------------------


def test_profile_out_in_an_impossible_place_is_one_line(tmp_path):
    out = one_line_error(cli("profile", "--ctx", "1k", "--tool", "ncu", "--out", "/proc/x"), 2)
    assert "/proc/x: cannot create a run directory there" in out


def test_a_profile_refused_before_anything_ran_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    r = cli("profile", "--ctx", "1k", "--tool", "ncu", "--ncu", tmp_path / "nope", "--out", tmp_path / "run")
    out = one_line_error(r, 1)
    assert "ncu not found" in out and "nothing captured was lost" not in out
    assert [p.name for p in tmp_path.iterdir()] == []


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_end_the_tools_group_like_ctrl_c(tmp_path, sig):
    import signal
    import subprocess
    import sys
    import time

    ncu = hanging_tool(tmp_path)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "roofline",
            "profile",
            "--ctx",
            "1k",
            "--tool",
            "ncu",
            "--ncu",
            ncu,
            "--out",
            str(tmp_path / "run"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not (tmp_path / "child.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.3)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + getattr(signal, sig)
    assert f"interrupted ({sig}) while ncu was running; its process group was ended" in err
    assert "Traceback" not in err and "capture timeout 900 s (--timeout)" in err
    assert not alive(int((tmp_path / "child.pid").read_text())) and not alive(int((tmp_path / "tool.pid").read_text()))
    kept, manifest = kept_run(tmp_path)
    assert manifest["status"] == "failed" and manifest["error"].startswith(f"interrupted ({sig})")


# -- a folder read counts each launch once ------------------------------------------------------------


def test_a_folder_with_ncu_and_nsys_of_the_same_launches_counts_them_once(tmp_path):
    for name in ("profile.ncu-rep", "profile.sqlite"):
        shutil.copy(SAMPLE_RUN / name, tmp_path / name)
    r = cli("analyze", tmp_path, "--format", "json")
    data = json.loads(r.output)
    assert r.exit_code == 0 and len(data["kernels"]) == 1
    (k,) = data["kernels"]
    assert k["launches"] == 3 and k["share_of_step"] == pytest.approx(1.0)
    assert data["timeline"]["summary"]["launches_in_range"] == 3
    assert any("profile.sqlite: Nsight Systems timeline beside Nsight Compute counters" in n for n in data["notes"])


def test_a_folder_with_an_nsys_report_and_its_sqlite_reads_the_sqlite_once(tmp_path):
    nsys = FIXTURES / "nsys"
    for name in ("triton_mla_8k.nsys-rep", "triton_mla_8k.sqlite"):
        shutil.copy(nsys / name, tmp_path / name)
    r = cli("analyze", tmp_path, "--format", "json")
    assert r.exit_code == 0, r.output  # the .nsys-rep (which needs nsys to read) is its sqlite's twin
    assert [k["launches"] for k in json.loads(r.output)["kernels"]] == [20]


# -- the API's error types ---------------------------------------------------------------------------


def test_roofline_re_exports_its_error_types():
    import roofline
    from profiler.errors import ProfilerError, ReportError
    from profiler.rundir import RunDirError

    assert roofline.ProfilerError is ProfilerError and roofline.ReportError is ReportError
    assert roofline.RunDirError is RunDirError and issubclass(roofline.IncompleteRun, roofline.ReportError)
    for name in ("ToolNotFound", "ToolTimeout", "WorkloadError", "CompareError", "MeasuredFileError", "Interrupted"):
        assert name in roofline.__all__ and isinstance(getattr(roofline, name), type)
    with pytest.raises(roofline.ReportError, match="no such run directory"):
        roofline.load("/nonexistent/run")


# -- run from the folder that holds a checkout named `roofline` ---------------------------------------

EDITABLE_RUN = """
import importlib.util, runpy, sys
from importlib.machinery import PathFinder
ROOT, CWD = sys.argv[1], sys.argv[2]
PKGS = ("roofline", "kernels", "profiler", "reports")
class Finder:  # as setuptools' editable install does: a finder at the end of sys.meta_path
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name in PKGS:
            return importlib.util.spec_from_file_location(name, f"{ROOT}/{name}/__init__.py",
                                                          submodule_search_locations=[f"{ROOT}/{name}"])
        parent = name.rpartition(".")[0]
        if parent in PKGS:
            return PathFinder.find_spec(name, path=[f"{ROOT}/{parent}"])
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in getattr(f, "__module__", "")] + [Finder]
sys.path = [CWD] + [p for p in sys.path if p not in ("", ".", ROOT)]  # python -m puts the current folder first
sys.argv = ["roofline", "analyze"]
runpy.run_module("roofline", run_name="__main__", alter_sys=True)
"""


def test_python_m_roofline_beside_a_clone_named_roofline_says_why(tmp_path):
    import subprocess
    import sys

    root = ROOT
    (tmp_path / "roofline").symlink_to(root, target_is_directory=True)  # cwd/roofline: the clone
    script = tmp_path / "editable_run.py"
    script.write_text(EDITABLE_RUN)
    r = subprocess.run(
        [sys.executable, str(script), str(root), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith(f"Error: `import roofline` finds the folder {tmp_path / 'roofline'}")
    assert "as a namespace package" in r.stderr and len(r.stderr.strip().splitlines()) == 1


# -- beyond the list: files that could set a number silently wrong --------------------------------------


def test_a_measured_file_of_another_gpu_is_refused(tmp_path, monkeypatch):
    measured = tmp_path / "config" / "roofline" / "measured"
    measured.mkdir(parents=True)
    (measured / "h200.json").write_text(json.dumps({"device": "NVIDIA H100 80GB HBM3", "read_gbps": 3000}))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    out = one_line_error(cli("model"), 2)
    assert 'h200.json: measured on "NVIDIA H100 80GB HBM3", not a NVIDIA H200' in out


def test_bench_from_a_row_with_a_text_number_is_refused(tmp_path):
    data = json.loads((ROOT / "docs" / "results" / "h200-bench-scaling.json").read_text())
    data["rows"][1]["median_ms"] = "fast"  # was read as NaN: the row dropped from the fits without a word
    f = tmp_path / "bench.json"
    f.write_text(json.dumps(data))
    assert 'rows[1].median_ms must be a positive number, got "fast"' in one_line_error(cli("bench", "--from", f), 2)
