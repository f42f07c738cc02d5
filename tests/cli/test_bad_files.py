"""Every number read from a file is checked where it is read, with one line naming the
file and the field (exit 2): the measured read fit, removal rows, bench rows, manifests, sweep records;
duplicate and unknown rows, unchecked workload fields named; a run's file linked out of it, a folder in
a report's place, a deleted spec.json, a FIFO anywhere. Each test fails without its fix (the old
behaviour is in its comment). Edited files are copies of committed H200 results and captures."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from roofline.cli import main
from tests.paths import ROOT, RUNS

TRITON_MLA_RUN = RUNS / "h200-triton_mla-128k"  # format 1, 3 launches of _verify_extend_kernel
RING_RUN = RUNS / "h200-triton_mla_fast-ring-128k-p64"
RING_REMOVAL = ROOT / "docs" / "results" / "h200-removal" / "_gluon_ring_kernel.json"
BENCH = ROOT / "docs" / "results" / "h200-peers" / "bench.json"
SWEEP = ROOT / "docs" / "results" / "h200-sweep"
H200 = {"device": "NVIDIA H200", "read_gbps": 4488.7, "matmul_tflops": 686.4}
FIT = {"fixed_us": 12.0, "gbps": 4658.8, "min_bytes": 75497472, "max_bytes": 1207959552}


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def refused(result, *words):
    """Exit 2, one line, no traceback, every word in it."""
    out = result.output.strip()
    assert result.exit_code == 2 and "Traceback" not in out and len(out.splitlines()) == 1, out
    for w in words:
        assert w in out, out
    return out


def measured(tmp_path, monkeypatch, data: dict | str):
    folder = tmp_path / "config" / "roofline" / "measured"
    folder.mkdir(parents=True)
    (folder / "h200.json").write_text(data if isinstance(data, str) else json.dumps(data))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    return folder / "h200.json"


# -- the measured read fit: was printed as a floor, a traceback, or taken as absent -----------------------


@pytest.mark.parametrize(
    "fit,message",
    [
        ({**FIT, "gbps": -4658.8}, "read_fit.gbps must be a positive number, got -4658.8"),  # was "-12.0 us fixed"
        ({**FIT, "fixed_us": -12.0}, "read_fit.fixed_us must be a positive number, got -12.0"),
        ({**FIT, "gbps": 0}, "read_fit.gbps must be a positive number, got 0"),  # was ZeroDivisionError
        ({**FIT, "fixed_us": 1e300}, "read_fit.fixed_us must be a positive number of at most 1e+06, got 1e+300"),
        ({**FIT, "gbps": float("nan")}, "read_fit.gbps must be a positive number, got NaN"),  # was a bare NaN
        ([FIT], 'read_fit must be an object (fixed_us, gbps, min_bytes, max_bytes), got [{"fixed_us"'),  # absent
        ({**FIT, "fixed_ms": 0.012}, "read_fit: unknown field 'fixed_ms'"),
        ({**FIT, "min_bytes": 2 * FIT["max_bytes"]}, "read_fit.min_bytes 2415919104 is above max_bytes"),
    ],
)
def test_a_bad_read_fit_is_refused_where_it_is_read(tmp_path, monkeypatch, fit, message):
    f = measured(tmp_path, monkeypatch, json.dumps({**H200, "read_fit": fit}))
    refused(cli("model", "--ctx", "128k"), f"{f}: {message}")
    refused(cli("analyze", "--format", "json"), message)


def test_a_misspelt_ceiling_is_named_and_an_unmeasured_one_may_be_null(tmp_path, monkeypatch):
    f = measured(tmp_path, monkeypatch, {**H200, "read_gpbs": 4000})  # was ignored: the datasheet's used
    refused(cli("model"), f"{f}: unknown field 'read_gpbs'")
    f.write_text(json.dumps({**H200, "l2_read_gbps": None, "read_fit": FIT}))  # calibrate writes null for it
    r = cli("model", "--ctx", "128k")
    assert r.exit_code == 0 and "at size      44.45 µs" in r.output, r.output  # was: l2_read_gbps must be positive


# -- removal experiments ---------------------------------------------------------------------------------


def edited(source: Path, tmp_path, name: str, edit) -> Path:
    """A copy of the JSON file `source`, named `name` in tmp_path, changed by `edit`."""
    data = json.loads(source.read_text())
    edit(data)
    f = tmp_path / name
    f.write_text(json.dumps(data))
    return f


def removal(tmp_path, edit) -> Path:
    return edited(RING_REMOVAL, tmp_path, "_gluon_ring_kernel.json", edit)


def test_two_full_rows_for_one_point_are_refused(tmp_path):
    def twice(d):
        full = next(r for r in d["rows"] if r["variant"] == "full" and r["ctx_len"] == 131072 and r["heads"] == 8)
        d["rows"].append({**full, "graph_ms": 1.0})  # the later row was kept: every cut then "slower"

    f = removal(tmp_path, twice)
    refused(cli("analyze", RING_RUN, "--removal", f), f"{f}: rows[", "a second 'full' row for ctx_len=131072 heads=8")


def test_a_misspelt_variant_is_refused(tmp_path):
    f = removal(tmp_path, lambda d: d["rows"][1].update(variant="no-mmma"))  # was dropped without a word
    refused(cli("analyze", RING_RUN, "--removal", f), "rows[1]: unknown variant 'no-mmma' (known: full, ring,")


@pytest.mark.parametrize("field,value", [("batch", 4), ("graph_ms", 1e300)])
def test_an_unknown_row_field_or_an_absurd_time_is_refused(tmp_path, field, value):
    f = removal(tmp_path, lambda d: d["rows"][0].update({field: value}))
    refused(cli("analyze", RING_RUN, "--removal", f), "rows[0]")


def test_a_file_naming_no_batch_q_len_or_mask_says_it_checked_none_of_them(tmp_path):
    f = removal(tmp_path, lambda d: d.pop("workload"))  # matched any capture, said nothing
    r = cli("analyze", RING_RUN, "--removal", f, "--format", "json")
    assert r.exit_code == 0, r.output
    (note,) = [n for n in json.loads(r.output)["notes"] if "removal experiment" in n]
    assert "the file names no batch, q_len, tree_mask: not checked against this capture's" in note


def test_a_ragged_capture_never_matches_uniform_rows():
    from roofline.analysis.removal import RemovalMismatch, matching, read_removal

    ragged = {"ctx_len": 131072, "ctx_lens": [131072, 2048], "batch": 2, "heads": 8, "page_size": 64}
    with pytest.raises(RemovalMismatch, match="the capture is a ragged batch"):
        matching(read_removal(RING_REMOVAL), "NVIDIA H200", {**ragged, "q_len": 9, "tree_mask": "tree"})


# -- bench rows ------------------------------------------------------------------------------------------


def bench(tmp_path, edit) -> Path:
    return edited(BENCH, tmp_path, "bench.json", edit)


@pytest.mark.parametrize(
    "edit,message",
    [
        (lambda d: d["rows"][3].update(median_ms=-0.05), "rows[3].median_ms must be a positive number, got -0.05"),
        (lambda d: d["rows"][3].update(gap=1e300), "rows[3].gap must be a positive number of at most 1e+15"),
        (
            lambda d: d["rows"].append(dict(d["rows"][0])),
            "rows 0 and 60 time the same point (kernel=read, ctx_len=8192",
        ),
        (lambda d: d["meta"].update(read_gbps=1e300), "meta.read_gbps must be a positive number of at most 1e+06"),
    ],
)
def test_bench_from_a_bad_row_is_refused(tmp_path, edit, message):
    f = bench(tmp_path, edit)  # a negative time printed a negative gap; a duplicate was fitted twice
    refused(cli("bench", "--from", f), f"{f}: {message}")


# -- manifests, links out of a run, folders, a deleted spec.json --------------------------------------------


def old_run(tmp_path, **edit) -> str:
    run = tmp_path / "run"
    shutil.copytree(TRITON_MLA_RUN, run)
    m = json.loads((run / "manifest.json").read_text())
    for key, value in edit.items():
        m[key] = value(m) if callable(value) else value
    (run / "manifest.json").write_text(json.dumps(m))
    return run


@pytest.mark.parametrize(
    "edit,message",
    [
        ({"reports": lambda m: m["reports"] * 2}, "reports[1] names profile.ncu-rep a second time"),
        ({"reports": lambda m: [{**m["reports"][0], "tool": "nuc"}]}, "reports[0].tool must be one of ncu, nsys"),
        ({"reports": lambda m: [{**m["reports"][0], "bytes": -1}]}, "reports[0].bytes must be an integer >= 0"),
        ({"wall_s": float("nan")}, "wall_s must be a number >= 0, got NaN"),
    ],
)
def test_manifest_numbers_and_rows_are_checked(tmp_path, edit, message):
    run = old_run(tmp_path, **edit)
    refused(cli("analyze", run), f"{run / 'manifest.json'}: {message}")


def test_a_report_linked_out_of_the_run_is_refused(tmp_path):
    run = old_run(tmp_path)
    outside = tmp_path / "elsewhere.ncu-rep"
    (run / "profile.ncu-rep").rename(outside)
    (run / "profile.ncu-rep").symlink_to(outside)  # same bytes, same sha256: was followed silently
    refused(cli("analyze", run), f"{run / 'profile.ncu-rep'}: is a link out of the run (to {outside})")
    (run / "spec.json").rename(tmp_path / "spec.json")
    (run / "spec.json").symlink_to(tmp_path / "spec.json")
    (run / "profile.ncu-rep").unlink()
    outside.rename(run / "profile.ncu-rep")
    refused(cli("analyze", run), "spec.json: is a link out of the run")


def test_a_folder_in_a_reports_place_is_called_a_folder(tmp_path):
    run = old_run(tmp_path)
    (run / "profile.ncu-rep").unlink()
    (run / "profile.ncu-rep").mkdir()  # was: "named in manifest.json but missing"
    refused(cli("analyze", run), f"{run / 'profile.ncu-rep'}: is a folder, not a file")


def test_a_format_2_run_whose_spec_was_deleted_is_refused(tmp_path):
    from profiler.run_writer import RunWriter

    w = RunWriter(tmp_path / "run")
    for name in ("spec.json", "harness.json", "profile.ncu-rep", "profile.ncu.log", "commands.txt"):
        shutil.copy(TRITON_MLA_RUN / name, w.path / name)
    w.add_report(w.path / "profile.ncu-rep", "ncu", launches=3, passes=17)
    run = w.commit()
    assert cli("analyze", run).exit_code == 0
    (run / "spec.json").unlink()  # was analysed with no workload, no step and no word
    refused(cli("analyze", run), f"{run / 'spec.json'}: named in manifest.json with its sha256 but missing")


# -- sweep records -----------------------------------------------------------------------------------------


def test_numbers_a_sweep_kept_are_checked_when_its_runs_are_gone(tmp_path):
    sweep = tmp_path / "sweep"
    shutil.copytree(SWEEP, sweep)
    summary = (sweep / "summary.csv").read_text().splitlines()
    summary[1] = summary[1].replace(",0.9823999999999999,", ",-0.98,")  # shown as a step time before
    (sweep / "summary.csv").write_text("\n".join(summary) + "\n")
    refused(cli("sweep", "--summarize", sweep), "summary.csv: row 'triton_mla-8k-h8-q9-p1': step_ms must be a positive")
    shutil.copy(SWEEP / "summary.csv", sweep / "summary.csv")
    state = json.loads((sweep / "sweep.json").read_text())
    state["points"]["triton_mla-8k-h8-q9-p1"]["step_ms"] = float("nan")
    (sweep / "sweep.json").write_text(json.dumps(state))
    refused(cli("sweep", "--summarize", sweep), "points['triton_mla-8k-h8-q9-p1'].step_ms must be a positive number")


# -- a FIFO where a file should be: refused before it is opened, never waited on ------------------------------


@pytest.mark.subprocess
@pytest.mark.parametrize("where", ["removal", "measured", "sweep.json", "removal folder"])
def test_a_fifo_anywhere_is_refused_not_waited_on(tmp_path, where):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    if where == "removal":
        fifo = tmp_path / "removal.json"
        args = ["analyze", RING_RUN, "--removal", fifo]
    elif where == "removal folder":
        fifo = tmp_path / "cuts" / "x.json"
        fifo.parent.mkdir()
        args = ["analyze", RING_RUN, "--removal", fifo.parent]
    elif where == "measured":
        fifo = tmp_path / "config" / "roofline" / "measured" / "h200.json"
        fifo.parent.mkdir(parents=True)
        args = ["model"]
    else:
        shutil.copytree(SWEEP, tmp_path / "sweep")
        fifo = tmp_path / "sweep" / "sweep.json"
        fifo.unlink()
        args = ["sweep", "--summarize", tmp_path / "sweep"]
    os.mkfifo(fifo)
    r = subprocess.run(
        [sys.executable, "-m", "roofline", *map(str, args)], capture_output=True, text=True, timeout=120, env=env
    )  # a hang fails here on the timeout
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    assert f"{fifo}: is a FIFO (named pipe), not a regular file" in r.stderr
