"""The ncu report parser on real H200 captures (tests/fixtures/README.md says how each was made)."""

import pytest

from profiler.errors import ReportError
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import UnitError, tidy_launches, unit_scale
from tests.paths import FULL_SET, SAMPLE_V1, TORCH_DEFAULT


def test_sample_run_one_row_per_launch_with_units():
    raw = read_ncu_report(SAMPLE_V1 / "profile.ncu-rep")
    assert list(raw.frame["launch"]) == [0, 1, 2]
    assert set(raw.frame["kernel"]) == {"_verify_extend_kernel"}
    assert raw.units["gpu__time_duration.sum"] == "ns"
    assert raw.units["dram__bytes_read.sum"] == "byte"
    assert raw.source == str(SAMPLE_V1 / "profile.ncu-rep") and raw.cut is None
    table = tidy_launches(raw)
    tidy = table.frame
    assert tidy["device"].iloc[0] == "NVIDIA H200"
    assert (tidy["grid_size"] == 8).all() and (tidy["sm_count"] == 132).all()
    # ns -> ms: 128k tokens through 8 programs takes milliseconds, not nanoseconds
    assert tidy["duration_ms"].between(1, 100).all()
    # DRAM bytes: at least the 151 MB of KV once, and GB/s consistent with bytes / time
    read = tidy["dram_bytes_read"].iloc[0]
    assert read > 131072 * 1152
    gbps = (read + tidy["dram_bytes_write"].iloc[0]) / (tidy["duration_ms"].iloc[0] * 1e-3) / 1e9
    assert tidy["dram_gbps"].iloc[0] == pytest.approx(gbps, rel=0.05)
    assert tidy["dram_peak_gbps"].iloc[0] == pytest.approx(4800, rel=0.1)
    assert table.missing_metrics == [] and table.rules == raw.rules and table.source == raw.source


def test_full_set_report_other_kernels_and_default_sections():
    full = tidy_launches(read_ncu_report(FULL_SET)).frame
    assert len(full) == 1 and full["stall_long_scoreboard"].notna().all()
    torch_ops = tidy_launches(read_ncu_report(TORCH_DEFAULT))
    assert len(torch_ops) == 2
    assert torch_ops.frame["dram_bytes_read"].isna().all()  # not in ncu's default sections
    assert "dram__bytes_read.sum" in torch_ops.missing_metrics
    assert torch_ops.frame["sm_throughput_pct"].notna().all()


def test_rule_results_kept():
    raw = read_ncu_report(SAMPLE_V1 / "profile.ncu-rep")
    ids = [r["rule_identifier"] for r in raw.rules[0]]
    assert "SOLBottleneck" in ids


@pytest.mark.parametrize("damage", ["missing", "empty", "truncated", "garbage"])
def test_bad_reports_name_the_file(tmp_path, damage):
    bad = tmp_path / "bad.ncu-rep"
    data = (SAMPLE_V1 / "profile.ncu-rep").read_bytes()
    if damage == "empty":
        bad.write_bytes(b"")
    elif damage == "truncated":
        bad.write_bytes(data[: len(data) // 3])
    elif damage == "garbage":
        bad.write_bytes(b"this is not a report\n" * 100)
    with pytest.raises(ReportError, match="bad.ncu-rep"):
        read_ncu_report(bad)


def test_unit_scale():
    assert unit_scale("ns") == 1e-9 and unit_scale("byte/s") == 1.0 and unit_scale("Kbyte") == 1e3
    assert unit_scale("byte/cycle") == 1.0 and unit_scale("hz") == 1.0
    with pytest.raises(UnitError, match="furlong"):
        unit_scale("furlong")


def test_a_crashing_install_module_is_isolated(tmp_path, monkeypatch):
    """Nsight Compute 2025.3.1's extras/python ncu_report segfaulted in unit() on the H200: a module
    found in an install (ncu_report.py, not the PyPI package) is run in a child process."""
    (tmp_path / "ncu_report.py").write_text("import os\ndef load_report(path):\n    os.abort()\n")
    import importlib.util

    spec = importlib.util.spec_from_file_location("ncu_report_install", tmp_path / "ncu_report.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr("profiler.ncu_reader.import_ncu_report", lambda: module)
    with pytest.raises(ReportError, match="crashed while reading.*pip install ncu-report"):
        read_ncu_report(SAMPLE_V1 / "profile.ncu-rep")
