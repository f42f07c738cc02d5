"""The nsys sqlite reader on real H200 timelines (tests/fixtures/h200/nsys, schema 3.20.3), checked
against `nsys stats --report cuda_gpu_kern_sum` of the same exports, and on damaged or foreign files."""

import gzip
import io
import re
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from profiler.errors import ReportError
from profiler.ncu import ncu_command
from profiler.nsys_reader import read_nsys_launches, read_nsys_sqlite
from profiler.nsys_summary import summarize_kernels
from profiler.nvtx import RANGE, STEP, include_filter
from profiler.readers import read_launches
from tests.paths import FIXTURES, ROOT, SAMPLE_RUN

NSYS = FIXTURES / "nsys"
FAST8K = NSYS / "triton_mla_fast_8k.sqlite"
MLA8K = NSYS / "triton_mla_8k.sqlite"
NO_CUDA = FIXTURES / "logs" / "nsys_no_cuda.sqlite"


def kern_sum(name: str) -> pd.DataFrame:
    """The committed `nsys stats --report cuda_gpu_kern_sum --format csv` output (its first line
    says which script nsys ran, then a blank line, then the CSV)."""
    text = (NSYS / f"{name}.kern_sum.csv").read_text()
    return pd.read_csv(io.StringIO(text[text.index("Time (%)") :]))


@pytest.mark.parametrize("name", ["triton_mla_fast_8k", "triton_mla_8k"])
def test_per_kernel_numbers_match_nsys_stats(name):
    timeline = read_nsys_sqlite(NSYS / f"{name}.sqlite")
    ours = summarize_kernels(timeline.launches).set_index("demangled_name")  # whole trace, as nsys stats
    theirs = kern_sum(name).set_index("Name")
    assert set(ours.index) == set(theirs.index)
    for kernel, row in theirs.iterrows():
        mine = ours.loc[kernel]
        assert mine["launches"] == row["Instances"]
        assert mine["total_ms"] * 1e6 == pytest.approx(row["Total Time (ns)"], abs=0.5)
        assert mine["median_ms"] * 1e6 == pytest.approx(row["Med (ns)"], abs=0.5)
        assert mine["min_ms"] * 1e6 == pytest.approx(row["Min (ns)"], abs=0.5)
        assert mine["max_ms"] * 1e6 == pytest.approx(row["Max (ns)"], abs=0.5)
        assert mine["share_pct"] == pytest.approx(row["Time (%)"], abs=0.06)


def test_fast_kernel_steps_at_8k():
    """20 steps of split + combine inside the `roofline` range; warm-up launches (2 steps, and
    torch's input set-up) stay outside it."""
    t = read_nsys_sqlite(FAST8K)
    assert list(t.kernels["kernel"]) == ["_fast_split_kernel", "_combine_kernel"]
    assert list(t.kernels["launches"]) == [20, 20]  # kern_sum counts 22: two warm-up steps outside the range
    assert len(t.steps) == 20 and (t.steps["kernels"] == 2).all()
    in_range = t.launches[t.launches["in_range"]]
    assert (in_range["step"] >= 0).all() and (t.launches.loc[~t.launches["in_range"], "step"] == -1).all()
    # one stream: kernels never overlap, so step = kernel time + idle gaps, and the one gap is the max
    s = t.steps
    assert np.allclose(s["step_ms"], s["kernel_ms"] + s["idle_ms"]) and np.allclose(s["idle_ms"], s["max_gap_ms"])
    first = s.iloc[0]  # first kernel start to last kernel end, from the export's own timestamps
    assert first["step_ms"] == pytest.approx((3586059773 - 3585943869) / 1e6)
    assert first["launch_api_ms"] == pytest.approx(((3585942600 - 3585931855) + (3586051481 - 3586042492)) / 1e6)
    summary = t.summary
    assert summary["gpu"] == "NVIDIA H200" and summary["schema"] == "3.20.3" and summary["steps"] == 20
    assert summary["kernel_ms_per_step"] == pytest.approx(0.0306, abs=1e-3)
    # the host needs ~75 us per step for ~31 us of kernels: the GPU is busy a third of the range
    assert summary["host_ms_per_step"] > 2 * summary["step_ms_median"]
    assert 25 < summary["gpu_busy_pct_of_range"] < 40


def test_slow_kernel_is_the_whole_step():
    t = read_nsys_sqlite(MLA8K)
    assert t.summary["kernels_per_step"] == 1 and t.summary["idle_ms_per_step"] == 0
    assert t.summary["gpu_busy_pct_of_range"] > 95
    assert t.steps["step_ms"].median() == pytest.approx(t.kernels["median_ms"].iloc[0])


def test_tidy_launch_table_matches_the_ncu_readers():
    nsys = read_nsys_launches(FAST8K).frame
    ncu = read_launches(SAMPLE_RUN / "profile.ncu-rep").frame
    assert set(ncu.columns) - {"source"} <= set(nsys.columns)
    assert len(nsys) == 40 and nsys["launch"].tolist() == list(range(40))
    split = nsys[nsys["kernel"] == "_fast_split_kernel"].iloc[0]
    assert split["device"] == "NVIDIA H200" and split["sm_count"] == 132
    assert split["grid_size"] == 99 and split["block_size"] == 128 and split["registers_per_thread"] == 255
    assert split["duration_ms"] == pytest.approx(0.023904)
    assert nsys[["dram_gbps", "sm_throughput_pct", "l2_hit_rate_pct", "stall_long_scoreboard"]].isna().all().all()


def test_analysis_of_a_timeline_has_times_and_no_invented_verdict():
    import roofline

    run = roofline.load(FAST8K)
    kernels = run.kernels.set_index("kernel")
    assert kernels.loc["_fast_split_kernel", "launches"] == 20
    assert kernels.loc["_fast_split_kernel", "duration_ms"] == pytest.approx(0.0239, abs=1e-4)
    assert set(kernels["bound"]) == {"unknown"}  # no counters: no bound claimed
    assert run.timeline is not None and run.timeline.summary["steps"] == 20


def test_gzip_compressed_export_reads_the_same(tmp_path):
    gz = tmp_path / "t.sqlite.gz"
    gz.write_bytes(gzip.compress(FAST8K.read_bytes()))
    assert read_nsys_sqlite(gz).summary["launches_in_range"] == 40


def test_export_without_kernel_table_says_why():
    with pytest.raises(
        ReportError, match=r"nsys_no_cuda.sqlite: .*no CUPTI_ACTIVITY_KIND_KERNEL table: nsys recorded no CUDA kernel"
    ):
        read_nsys_sqlite(NO_CUDA)


def _altered(tmp_path, *sql):
    path = tmp_path / "altered.sqlite"
    shutil.copy(FAST8K, path)
    with sqlite3.connect(path) as conn:
        for s in sql:
            conn.execute(s)
    return path


@pytest.mark.parametrize(
    "sql, message",
    [
        (
            "UPDATE META_DATA_EXPORT SET value = '4' WHERE name = 'EXPORT_SCHEMA_VERSION_MAJOR'",
            "schema 3.20.3 .*is not one roofline reads",
        ),
        ("DROP TABLE META_DATA_EXPORT", "without META_DATA_EXPORT: not an Nsight Systems export"),
        ("DROP TABLE CUPTI_ACTIVITY_KIND_RUNTIME", "no CUPTI_ACTIVITY_KIND_RUNTIME table"),
        ("DROP TABLE StringIds", "no StringIds table"),
        ("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN correlationId", "KERNEL lacks column.*correlationId"),
        ("DROP TABLE ENUM_NSYS_EVENT_TYPE", "no ENUM_NSYS_EVENT_TYPE"),
        ("UPDATE ENUM_NSYS_EVENT_TYPE SET name = 'X' || name WHERE name LIKE 'Nvtx%'", "names no NVTX range type"),
        ("DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL", "kernel table is empty"),
    ],
)
def test_schema_it_does_not_understand_is_a_clear_error(tmp_path, sql, message):
    with pytest.raises(ReportError, match=message):
        read_nsys_sqlite(_altered(tmp_path, sql))


def test_event_types_come_from_the_enum_not_fixed_numbers(tmp_path):
    """Renumber the NVTX push/pop range type: the reader follows ENUM_NSYS_EVENT_TYPE."""
    path = _altered(
        tmp_path,
        "UPDATE ENUM_NSYS_EVENT_TYPE SET id = 1059 WHERE name = 'NvtxPushPopRange'",
        "UPDATE NVTX_EVENTS SET eventType = 1059 WHERE eventType = 59",
    )
    assert read_nsys_sqlite(path).summary["steps"] == 20


def test_without_nvtx_every_launch_is_read_and_no_steps(tmp_path):
    t = read_nsys_sqlite(_altered(tmp_path, "DROP TABLE NVTX_EVENTS"))
    assert t.summary["steps"] == 0 and t.summary["range"] is None and len(t.kernels) == 4
    assert "no NVTX_EVENTS" in t.summary["notes"][0]


@pytest.mark.parametrize("damage", ["empty", "truncated", "text", "ncu-report", "folder", "missing"])
def test_damaged_or_foreign_files(tmp_path, damage):
    path = tmp_path / "x.sqlite"
    if damage == "empty":
        path.write_bytes(b"")
    elif damage == "truncated":
        path.write_bytes(FAST8K.read_bytes()[:50_000])
    elif damage == "text":
        path.write_text("Time (%),Total Time (ns)\n")
    elif damage == "ncu-report":
        path.write_bytes((SAMPLE_RUN / "profile.ncu-rep").read_bytes())
    elif damage == "folder":
        path.mkdir()
    with pytest.raises(ReportError) as info:
        read_nsys_sqlite(path)
    text = str(info.value)
    assert str(path) in text and "\n" not in text
    expected = {
        "empty": "empty",
        "truncated": "damaged or cut short",
        "text": "a text file starting",
        "ncu-report": "binary data, not an Nsight Systems",
        "folder": "is a folder",
        "missing": "no such file",
    }
    assert expected[damage] in text


def test_nsys_rep_without_nsys_says_how_to_export(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("NSYS", raising=False)
    monkeypatch.setattr("profiler.nsys.INSTALL_GLOBS", ())
    with pytest.raises(
        ReportError,
        match=r"triton_mla_8k.nsys-rep: an Nsight Systems report.*needs nsys.*"
        r"nsys export --type sqlite -o triton_mla_8k.sqlite",
    ):
        read_nsys_sqlite(NSYS / "triton_mla_8k.nsys-rep")


def test_nsys_rep_is_exported_through_nsys(tmp_path):
    """A stand-in nsys whose `export` writes the sqlite the real nsys exported from this report."""
    stub = tmp_path / "nsys"
    stub.write_text(f'#!/bin/sh\nwhile [ "$1" != "-o" ]; do shift; done\ncp \'{MLA8K}\' "$2"\n')
    stub.chmod(0o755)
    t = read_nsys_sqlite(NSYS / "triton_mla_8k.nsys-rep", nsys=str(stub))
    assert t.summary["steps"] == 20 and t.source.endswith("triton_mla_8k.nsys-rep")


REAL = FAST8K.read_bytes()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    cut=st.one_of(st.just(len(REAL)), st.integers(0, len(REAL))),
    flips=st.lists(st.tuples(st.integers(0, len(REAL) - 1), st.integers(0, 7)), max_size=40),
)
def test_fuzz_truncated_and_bit_flipped_exports_only_give_clean_errors(tmp_path, cut, flips):
    data = bytearray(REAL)
    for pos, bit in flips:
        data[pos] ^= 1 << bit
    data = data[:cut]
    path = tmp_path / "fuzz.sqlite"
    path.write_bytes(bytes(data))
    try:
        t = read_nsys_sqlite(path)
    except ReportError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
        return
    assert isinstance(t.summary, dict)  # a flip in a value sqlite cannot notice still reads


def test_the_nvtx_range_names_are_defined_once():
    """The harness marks, ncu filters on and the nsys reader looks up the same ranges, named in
    profiler/nvtx.py alone: no other module defines a range name or pushes a literal one."""
    cmd = ncu_command("ncu", ["app"], "out/profile")
    assert cmd[cmd.index("--nvtx-include") + 1] == include_filter() == f"{RANGE}/"
    t = read_nsys_sqlite(FAST8K)  # a real capture of the harness: its ranges are found by these names
    assert t.summary["range"] == RANGE and len(t.steps) == 20
    root = ROOT
    for f in [p for pkg in ("kernels", "profiler", "roofline") for p in (root / pkg).rglob("*.py")]:
        if f.name == "nvtx.py":
            continue
        text = f.read_text()
        assert not re.search(r"range_push\(\s*[\"']", text), f"{f}: pushes a literal NVTX range"
        assert not re.search(rf"^\w*(RANGE|STEP)\w* = [\"']({RANGE}|{STEP})[\"']", text, re.M), f"{f}: names a range"
