"""The run directory as evidence: a run reads only its own reports, is never overwritten or
half-written without saying so, and a bad spec or a short report is a one-line error."""

import json
import shutil

import pytest
from click.testing import CliRunner

import roofline
from kernels.spec import VerifyWorkload
from profiler.run_writer import RunWriter
from profiler.rundir import FILES, MANIFEST, RunDirError, default_run_name, sha256
from roofline.cli import main
from tests.paths import APP_FAILED_LOG, FIXTURES, SAMPLE_V1, TORCH_DEFAULT
from tests.stubs import (
    replaying_ncu,
)


def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.fixture
def sample_copy(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(SAMPLE_V1, run)  # its record boundaries are known (see the cut-short test)
    return run


@pytest.fixture
def profiled(tmp_path):
    """A run profiled once at 128k by the replaying ncu: (run dir, that ncu) for a second profile into it."""
    out, ok = tmp_path / "run", replaying_ncu(tmp_path)
    assert cli("profile", "--ctx", "128k", "--out", str(out), "--ncu", ok).exit_code == 0
    return out, ok


def test_a_stray_report_in_a_run_is_not_read(sample_copy):
    before = roofline.load(sample_copy)
    shutil.copy(TORCH_DEFAULT, sample_copy / "a_stray.ncu-rep")  # sorts before profile.ncu-rep
    after = roofline.load(sample_copy)
    assert list(after.kernels["kernel"]) == list(before.kernels["kernel"]) == ["_verify_extend_kernel"]
    assert after.step.gap == pytest.approx(before.step.gap)


def test_a_changed_report_fails_its_checksum(sample_copy):
    rep = sample_copy / "profile.ncu-rep"
    rep.write_bytes(TORCH_DEFAULT.read_bytes())
    r = cli("analyze", str(sample_copy))
    assert r.exit_code == 2 and "does not match the sha256" in r.output and "Traceback" not in r.output


def test_a_report_cut_short_is_incomplete_unless_allowed(sample_copy):
    """A real report cut after 2 of its 3 launches (as a killed ncu leaves it), with the manifest
    describing that file: expected 3 launches, found 2 -> error; --allow-incomplete marks it."""
    rep = sample_copy / "profile.ncu-rep"
    data = rep.read_bytes()
    assert len(data) == 335213
    rep.write_bytes(data[:293960])  # the record boundary right after this report's 2nd launch
    manifest = json.loads((sample_copy / MANIFEST).read_text())
    manifest["reports"][0]["sha256"] = sha256(rep)
    (sample_copy / MANIFEST).write_text(json.dumps(manifest))
    r = cli("analyze", str(sample_copy))
    assert r.exit_code == 2 and "expected 3 launches" in r.output and "found 2" in r.output
    r = cli("analyze", str(sample_copy), "--allow-incomplete", "--format", "json")
    d = json.loads(r.output)
    assert r.exit_code == 0 and d["complete"] is False and d["step"] is None
    assert d["kernels"][0]["launches"] == 2


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("heads", "8", 'heads must be an integer, got "8"'),
        ("iterations", "3", 'iterations must be an integer >= 1, got "3"'),
        ("iterations", -1, "iterations must be an integer >= 1, got -1"),
        ("workload", [1, 2], "workload must be a JSON object"),
        ("page_size", [64], "page_size must be an integer, got [64]"),
    ],
)
def test_bad_spec_fields_are_one_line_errors(sample_copy, field, value, message):
    spec = json.loads((sample_copy / "spec.json").read_text())
    if field in spec:
        spec[field] = value
    else:
        spec["workload"][field] = value
    (sample_copy / "spec.json").write_text(json.dumps(spec))
    r = cli("analyze", str(sample_copy))
    assert r.exit_code == 2 and message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_a_failed_run_is_not_analyzed_as_complete(sample_copy):
    manifest = json.loads((sample_copy / MANIFEST).read_text())
    manifest.update(status="failed", error="ncu exited with code 1")
    (sample_copy / MANIFEST).write_text(json.dumps(manifest))
    r = cli("analyze", str(sample_copy))
    assert r.exit_code == 2 and "this run failed: ncu exited with code 1" in r.output


def test_profile_never_overwrites_without_force(profiled):
    out, ok = profiled
    first = sha256(out / MANIFEST)
    r = cli("profile", "--ctx", "128k", "--heads", "16", "--out", str(out), "--ncu", ok)
    assert r.exit_code == 2 and "already exists" in r.output and "--force" in r.output
    assert sha256(out / MANIFEST) == first


def test_a_failed_forced_reprofile_leaves_the_old_run_intact(profiled, tmp_path):
    out, _ = profiled
    spec_before = (out / "spec.json").read_text()
    bad = replaying_ncu(tmp_path, log=APP_FAILED_LOG, report=None, exit_code=1)
    r = cli("profile", "--ctx", "8k", "--heads", "64", "--out", str(out), "--force", "--ncu", bad)
    assert r.exit_code == 1 and "failed with exit code 1" in r.output
    assert (out / "spec.json").read_text() == spec_before  # old workload still paired with old report
    assert roofline.load(out).step.gap > 100
    (failed,) = tmp_path.glob("run.failed-*")
    m = json.loads((failed / MANIFEST).read_text())
    assert m["status"] == "failed" and (failed / "profile.ncu.log").exists()
    assert json.loads((failed / "spec.json").read_text())["workload"]["heads"] == 64
    r = cli("analyze", str(failed))
    assert r.exit_code == 2 and "this run failed" in r.output


def test_force_replaces_only_when_the_new_run_is_complete(profiled, tmp_path):
    out, ok = profiled
    assert (
        cli(
            "profile", "--ctx", "128k", "--iters", "3", "--seed", "7", "--out", str(out), "--force", "--ncu", ok
        ).exit_code
        == 0
    )
    assert json.loads((out / "spec.json").read_text())["workload"]["seed"] == 7
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp folders left


def test_default_names_differ_by_workload_and_never_collide(tmp_path, monkeypatch):
    a = default_run_name("triton_mla", VerifyWorkload(heads=8))
    b = default_run_name("triton_mla", VerifyWorkload(heads=64))
    assert a != b and a.startswith("triton_mla-128k-h8-q9-p1-") and "-h64-" in b
    monkeypatch.setattr("profiler.rundir.utc_stamp", lambda: "20261130-000000")
    w1 = RunWriter(tmp_path / default_run_name("k", VerifyWorkload()), unique=True)
    w1.commit()
    w2 = RunWriter(tmp_path / default_run_name("k", VerifyWorkload()), unique=True)
    assert w2.final != w1.final and w2.final.name.endswith("-2")


def test_a_folder_without_manifest_is_read_as_a_folder_of_reports(tmp_path):
    shutil.copy(TORCH_DEFAULT, tmp_path / "one.ncu-rep")
    shutil.copy(FIXTURES / "probes" / "matmul.ncu-rep", tmp_path / "two.ncu-rep")
    (tmp_path / "notes.txt").write_text("not a report")
    run = roofline.load(tmp_path)
    assert set(run.launches["source"]) == {"one.ncu-rep", "two.ncu-rep"}
    assert run.workload is None and run.analysis.floor is None


def test_manifest_with_a_path_outside_the_run_is_refused(sample_copy):
    manifest = json.loads((sample_copy / MANIFEST).read_text())
    manifest["reports"][0]["path"] = "../elsewhere.ncu-rep"
    (sample_copy / MANIFEST).write_text(json.dumps(manifest))
    with pytest.raises(RunDirError, match="must be a file in the run"):
        roofline.load(sample_copy)


def test_api_load_gives_tables():
    run = roofline.load()
    assert run.complete and len(run.launches) == 3 and "duration_ms" in run.launches
    k = run.kernels.iloc[0]
    assert k["bound"] == "latency" and k["launches"] == 3 and k["cause"] == "small grid"
    d = run.to_dict()
    assert d["complete"] is True and d["manifest"]["reports"][0]["tool"] == "ncu"


def test_the_writer_hands_out_paths_by_role_and_refuses_files_it_did_not_name(tmp_path):
    w = RunWriter(tmp_path / "run")
    assert w.file("launches") == w.path / "launches.csv" and w.file("ncu") == w.path / "profile.ncu-rep"
    with pytest.raises(ValueError, match="'launch' is not a file of a run"):
        w.file("launch")
    stray = w.path / "other.ncu-rep"
    shutil.copy(TORCH_DEFAULT, stray)
    with pytest.raises(ValueError, match="not the run's ncu file"):
        w.add_report(stray, "ncu")
    with pytest.raises(ValueError, match="not the run's timing file"):
        w.add_report(stray, "timing")
    with pytest.raises(ValueError, match="notes.log: not a file of this run"):
        w.add_log(w.path / "notes.log")
    w.write_json("analysis", {"kernels": []})
    run = w.commit()
    assert json.loads((run / MANIFEST).read_text())["files"]["analysis.json"] == sha256(run / "analysis.json")


def test_every_file_of_a_profiled_run_is_named_by_the_writer_and_checksummed(profiled):
    out, _ = profiled
    manifest = json.loads((out / MANIFEST).read_text())
    held = {p.name for p in out.iterdir()}
    assert held <= set(FILES.values())
    assert held - {MANIFEST} == set(manifest["files"]) | {r["path"] for r in manifest["reports"]}
    assert manifest["logs"] == [FILES["ncu-log"]]
