"""One reader for every capture format, chosen by content; the ncu CSV reader on real H200 exports.

The CSVs are `ncu -i REPORT --csv --page raw [--print-units base]` of committed reports, and a live
run's CSV mixed into stdout (tests/fixtures/README.md, "Captured 2026-11-30").
"""

import gzip
import importlib.util
import json
import shutil

import numpy as np
import pytest
from click.testing import CliRunner

import roofline
from profiler.errors import ReportError
from profiler.ncu_csv import base_unit, nvtx_text, parse_number, read_ncu_csv
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from profiler.readers import NCU_CSV, NCU_REP, NSYS_REP, NSYS_SQLITE, read_folder, read_launches, sniff
from roofline.cli import main
from tests.paths import FIXTURES, FULL_SET, NO_KERNELS_LOG, RUNS, SAMPLE_RUN, SAMPLE_V1

CSV = FIXTURES / "csv"
FAST_P64 = RUNS / "h200-triton_mla_fast-128k-p64" / "profile.ncu-rep"
SAME_CAPTURE = [  # (report, its CSV export)
    (SAMPLE_V1 / "profile.ncu-rep", CSV / "h200-triton_mla-128k.raw.csv"),
    (FAST_P64, CSV / "h200-triton_mla_fast-128k-p64.raw.csv"),
    (FAST_P64, CSV / "h200-triton_mla_fast-128k-p64.base-units.csv"),
    (FULL_SET, CSV / "triton_mla_8k_full.raw.csv"),
    (CSV / "fast8k.ncu-rep", CSV / "fast8k.raw.csv"),
]
HAS_NSYS_READER = importlib.util.find_spec("profiler.nsys_reader") is not None


def _print_precision(column: str) -> float:
    """ncu prints percentages, ratios and waves with as few as 2 decimals (base units: always)."""
    return 0.005 if column.endswith("_pct") or column.startswith("stall_") or column == "waves_per_sm" else 0.0


def assert_same_table(table_a, table_b):
    a, b = table_a.frame, table_b.frame
    assert list(a.columns) == list(b.columns)
    assert list(a["kernel"]) == list(b["kernel"]) and list(a["launch"]) == list(b["launch"])
    assert list(a["device"]) == list(b["device"])
    numeric = a.select_dtypes("number").columns
    assert len(numeric) > 100
    for col in numeric:
        x, y = a[col].to_numpy(float), b[col].to_numpy(float)
        assert np.isclose(x, y, rtol=1e-3, atol=_print_precision(col), equal_nan=True).all(), (col, x, y)
    assert table_a.missing_metrics == table_b.missing_metrics


@pytest.mark.parametrize("report,csv", SAME_CAPTURE, ids=lambda p: p.name)
def test_report_and_its_csv_give_the_same_table(report, csv):
    rep, raw = read_ncu_report(report), read_ncu_csv(csv)
    assert set(raw.frame.columns) <= set(rep.frame.columns)  # the same names; the report adds breakdown: lists
    assert list(raw.frame["nvtx"]) == list(rep.frame["nvtx"])
    assert raw.units["gpu__time_duration.sum"] == rep.units["gpu__time_duration.sum"] == "ns"
    assert raw.rules == {} and "no rule results" in raw.notes[0]
    assert_same_table(tidy_launches(rep), tidy_launches(raw))


@pytest.mark.parametrize("report,csv", SAME_CAPTURE[:3], ids=lambda p: p.name)
def test_report_and_its_csv_give_the_same_verdicts(report, csv):
    a, b = roofline.load(report), roofline.load(csv)
    cols = ["kernel", "launches", "bound", "cause", "roof", "unit"]
    assert a.kernels[cols].equals(b.kernels[cols])
    assert any("no rule results" in n for n in b.analysis.notes)
    assert all(k.ncu_rule is None for k in b.analysis.kernels)  # not invented
    assert all(k.ncu_rule for k in a.analysis.kernels)


def test_csv_mixed_into_stdout_reads_like_the_bare_csv(tmp_path):
    mixed = CSV / "fast8k_stdout_mixed.txt"
    text = mixed.read_text()
    assert "==PROF==" in text and "harness: triton_mla_fast ran" in text
    bare = tmp_path / "bare.csv"
    bare.write_text("".join(line for line in text.splitlines(keepends=True) if line.startswith('"')))
    assert sniff(mixed) == NCU_CSV
    a, b = read_launches(mixed), read_launches(bare)
    assert_same_table(a, b)
    assert list(a.frame["kernel"]) == ["_fast_split_kernel", "_combine_kernel"] * 2
    # a second run of the same command, saved as a report: same kernels, same verdicts
    rep = roofline.load(CSV / "fast8k.ncu-rep").kernels
    live = roofline.load(mixed).kernels
    assert list(rep["kernel"]) == list(live["kernel"]) and list(rep["bound"]) == list(live["bound"])


def test_csv_cells():
    assert parse_number("810,581,689,428.43") == pytest.approx(810581689428.43)
    assert parse_number("1,024") == 1024 and parse_number("0.764258") == pytest.approx(0.764258)
    assert parse_number("n/a") is None and parse_number("") is None and parse_number("no data") is None
    assert parse_number("NVIDIA H200") == "NVIDIA H200" and parse_number("1,2") == "1,2"
    assert base_unit("ms") == ("ns", 1e6) and base_unit("Gbyte/s") == ("byte/s", 1e9)
    assert base_unit("sector/us")[0] == "sector/s" and base_unit("Kbyte/block") == ("byte/block", 1e3)
    assert base_unit("Ghz") == ("hz", 1e9) and base_unit("%") == ("%", 1.0)
    assert (
        nvtx_text('3920  "<default domain>:roofline:none:none"  "<default domain>:step:none:none" ') == "roofline/step"
    )


def _csv_lines():
    return (CSV / "h200-triton_mla-128k.raw.csv").read_text().splitlines(keepends=True)


@pytest.mark.parametrize(
    "damage,message",
    [
        (lambda L: L[:1], "ends after its header"),
        (lambda L: L[:2], "no launch rows"),
        (lambda L: [L[0]] + L[2:], "units row"),
        (lambda L: L[:3] + [L[3][: len(L[3]) // 2] + "\n"] + L[4:], "line 4 (has|is not a valid)"),
        (
            lambda L: L[:3] + [",".join(L[3].split(",")[:100]) + "\n"] + L[4:],
            "line 4 has \\d+ fields, the header has 612",
        ),
        (lambda L: L + [L[-1]], "appears twice"),
        (lambda L: L[:2] + L[3:], "missing \\[0\\]"),
        (lambda L: L[:3] + [L[3].replace('"15.230368"', '"fast"')] + L[4:], "is not a number"),
        (lambda L: ["harness: done\n"] + L[2:], "no ncu CSV header"),
    ],
)
def test_damaged_csv_is_one_clear_error(tmp_path, damage, message):
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(damage(_csv_lines())))
    with pytest.raises(ReportError, match=message) as exc:
        read_ncu_csv(bad)
    assert str(exc.value).startswith(str(bad)) and "\n" not in str(exc.value)


def test_sniff_by_content_not_name(tmp_path):
    renamed = tmp_path / "capture.txt"
    shutil.copy(SAMPLE_RUN / "profile.ncu-rep", renamed)
    assert sniff(renamed) == NCU_REP
    csv_as_rep = tmp_path / "looks.ncu-rep"
    shutil.copy(CSV / "fast8k.raw.csv", csv_as_rep)
    assert sniff(csv_as_rep) == NCU_CSV
    gz = tmp_path / "fast8k.csv.gz"
    gz.write_bytes(gzip.compress((CSV / "fast8k_stdout_mixed.txt").read_bytes()))
    assert sniff(gz) == NCU_CSV and len(read_launches(gz)) == 4
    for rep in (FIXTURES / "nsys").glob("*.nsys-rep"):
        assert sniff(rep) == NSYS_REP
    for db in [*(FIXTURES / "nsys").glob("*.sqlite"), FIXTURES / "logs" / "nsys_no_cuda.sqlite"]:
        assert sniff(db) == NSYS_SQLITE


def _other_kinds(tmp_path):
    import sqlite3
    import zipfile

    db = tmp_path / "other.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE runs (id INTEGER)")
    con.commit()
    con.close()
    zf = tmp_path / "reports.zip"
    with zipfile.ZipFile(zf, "w") as z:
        z.write(SAMPLE_RUN / "profile.ncu-rep", "profile.ncu-rep")
    rnd = tmp_path / "random.bin"
    rnd.write_bytes(np.random.default_rng(0).bytes(4096))
    return [
        (NO_KERNELS_LOG, "Nsight Compute console output without a `--csv --page raw` table"),
        (FIXTURES / "nsys" / "triton_mla_8k.log", "a text file starting"),
        (rnd, "binary data"),
        (SAMPLE_RUN / "spec.json", "a JSON document"),
        (zf, "a zip archive"),
        (db, "an SQLite database that is not an Nsight Systems export"),
        (FIXTURES / "tune" / "tune_h8_p1.csv", "a CSV file that is not ncu's raw page"),
    ]


def test_other_files_say_what_they_look_like(tmp_path):
    for path, what in _other_kinds(tmp_path):
        with pytest.raises(ReportError) as exc:
            read_launches(path)
        msg = str(exc.value)
        assert msg.startswith(str(path)) and what in msg and "\n" not in msg, msg
        assert "no kernel launches" not in msg
        assert ".ncu-rep" in msg and "--csv --page raw" in msg and ".nsys-rep" in msg and "sqlite" in msg
        r = CliRunner().invoke(main, ["analyze", str(path)])
        assert r.exit_code == 2 and what in r.output and "Traceback" not in r.output
        assert len(r.output.strip().splitlines()) == 1


@pytest.mark.skipif(HAS_NSYS_READER, reason="profiler/nsys_reader.py is installed: the nsys case is tested below")
def test_nsys_without_its_reader_is_a_clear_error():
    for path in (FIXTURES / "nsys" / "triton_mla_8k.nsys-rep", FIXTURES / "nsys" / "triton_mla_8k.sqlite"):
        with pytest.raises(ReportError, match="nsys reader is not available") as exc:
            read_launches(path)
        assert str(exc.value).startswith(str(path)) and "Nsight Systems" in str(exc.value)


@pytest.mark.skipif(not HAS_NSYS_READER, reason="profiler/nsys_reader.py (another branch) is not merged yet")
def test_nsys_sqlite_through_the_one_reader():
    table = read_launches(FIXTURES / "nsys" / "triton_mla_8k.sqlite")
    frame = table.frame
    assert len(frame) and set(frame["kernel"]) >= {"_verify_extend_kernel"}
    assert (frame["source"] == "triton_mla_8k.sqlite").all()
    assert frame["sm_throughput_pct"].isna().all() and not table.counters  # a timeline has no counters
    assert table.source == str(FIXTURES / "nsys" / "triton_mla_8k.sqlite") and table.missing_metrics == []


def test_folder_with_a_csv_and_a_report_reads_both(tmp_path):
    shutil.copy(FAST_P64, tmp_path / "fast.ncu-rep")
    shutil.copy(CSV / "h200-triton_mla-128k.raw.csv", tmp_path / "baseline.csv")
    (tmp_path / "notes.txt").write_text("not a report\n")
    table = read_folder(tmp_path)
    assert table.source == str(tmp_path) and list(table.frame["source"].unique()) == ["baseline.csv", "fast.ncu-rep"]
    assert table.frame["launch"].is_unique and len(table) == 3 + 6
    assert sorted(table.rules) == list(range(3, 9))  # the report's rules, under their launches' new numbers
    run = roofline.load(tmp_path)
    ks = run.kernels.set_index("kernel")
    assert ks.loc["_verify_extend_kernel", "source"] == "baseline.csv"
    assert ks.loc["_fast_split_kernel", "source"] == "fast.ncu-rep"
    # the report's rule text stays on its own kernels; the CSV's kernel has none and a note says why
    by_kernel = {k.kernel: k for k in run.analysis.kernels}
    assert by_kernel["_fast_split_kernel"].ncu_rule and by_kernel["_verify_extend_kernel"].ncu_rule is None
    assert any(n.startswith("baseline.csv: read from ncu CSV") for n in run.analysis.notes)
    r = CliRunner().invoke(main, ["analyze", str(tmp_path), "--format", "json"])
    assert r.exit_code == 0
    assert {k["source"] for k in json.loads(r.output)["kernels"]} == {"baseline.csv", "fast.ncu-rep"}


@pytest.mark.parametrize(
    "report",
    [
        FULL_SET,
        SAMPLE_RUN / "profile.ncu-rep",
        FIXTURES / "bench" / "tiny10_full.ncu-rep.gz",
        FIXTURES / "passes" / "nosol_k_small_pc.ncu-rep.gz",
        FIXTURES / "corpus" / "gemm.ncu-rep.gz",
    ],
    ids=lambda p: p.name,
)
def test_reading_only_the_metrics_the_analysis_uses_changes_nothing(report):
    """read_launches reads ncu_tidy.raw_metrics() only: same table as reading all."""
    import pandas as pd

    from profiler.readers import plain_file

    fast = read_launches(report)
    with plain_file(report) as plain:
        full = tidy_launches(read_ncu_report(plain))
    pd.testing.assert_frame_equal(fast.frame.drop(columns="source"), full.frame)
    assert fast.missing_metrics == full.missing_metrics and fast.rules == full.rules
