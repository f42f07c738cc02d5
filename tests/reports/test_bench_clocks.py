"""A bench row's clocks (profiler/bench.py bench_points, bench.json): recorded as each row is timed, read back,
and a row that throttled marked in the bench's table."""

import json

import pytest
from click.testing import CliRunner

from kernels.batches import BenchPoint, make_workload
from profiler import bench as bench_mod
from profiler.clocks import ClockRecord, ClockSample, ClockSampler
from roofline.analysis.bench_table import bench_table
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from roofline.pipelines.benching import BenchRun

META = {"device": "NVIDIA H200", "read_gbps": 4489.0, "copy_gbps": 4282.0, "matmul_tflops": 686.0, "method": "rotated"}
STEADY = ClockRecord("nvml", ClockSample(1980, 3201, 150.0, 40), ClockSample(1980, 3201, 410.0, 44))
CAPPED = ClockRecord("nvml", ClockSample(1980, 3201, 600.0, 50), ClockSample(1755, 3201, 700.0, 55, reasons=0x4))


@pytest.fixture
def timed_rows(monkeypatch):
    """bench_points over two points with the timing replaced: the 8k row steady, the 128k row power-capped."""
    got = {8192: STEADY, 131072: CAPPED}
    monkeypatch.setattr(bench_mod, "time_read", lambda w, method, clocks: bench_mod.Timed(0.05, got[w.ctx_len]))
    monkeypatch.setattr(
        bench_mod, "time_kernel", lambda n, w, method, clocks, **kw: bench_mod.Timed(0.07, got[w.ctx_len])
    )
    points = [BenchPoint(make_workload(ctx=c, page_size=64, tree_mask="chain")) for c in ("8k", "128k")]
    return bench_mod.bench_points(["read", "triton_mla_fast"], points, clocks=ClockSampler(nvml=None))


def test_each_row_records_its_clocks(timed_rows):
    capped = timed_rows[timed_rows.ctx_len == 131072].iloc[0]
    assert (capped.sm_mhz_start, capped.sm_mhz_end, capped.power_w_end) == (1980, 1755, 700.0)
    assert capped.throttled == "sw power cap at end; SM clock fell 1980 -> 1755 MHz"
    assert set(timed_rows[timed_rows.ctx_len == 8192].throttled) == {""}


def test_the_bench_table_marks_a_throttled_row_and_reads_it_back(timed_rows, tmp_path):
    table = bench_table(timed_rows, get_gpu("h200"), META["read_gbps"], META["matmul_tflops"], source="test")
    BenchRun(dict(META, clocks="nvml"), table).save(tmp_path)
    saved = json.loads((tmp_path / "bench.json").read_text())
    assert saved["rows"][2]["sm_mhz_end"] == 1755 and saved["meta"]["clocks"] == "nvml"
    out = CliRunner().invoke(main, ["bench", "--from", str(tmp_path / "bench.json")]).output
    assert (
        "clocks as each row was timed (NVML, the GPU's own clock): SM 1755-1980 MHz, memory 3201 MHz, "
        "power 150-700 W, temperature 44-55 °C; THROTTLED: 2 row(s), marked !"
    ) in out
    assert "0.0700!" in out and "0.0500!" in out and out.count("!") == 4  # the two 128k rows, the line, the footnote
    assert "! throttled: read 128k: sw power cap at end; SM clock fell 1980 -> 1755 MHz" in out


def test_a_bad_clock_in_a_bench_json_is_refused(timed_rows, tmp_path):
    table = bench_table(timed_rows, get_gpu("h200"), META["read_gbps"], META["matmul_tflops"], source="test")
    BenchRun(META, table).save(tmp_path)
    data = json.loads((tmp_path / "bench.json").read_text())
    data["rows"][1]["power_w_end"] = -5
    (tmp_path / "bench.json").write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["bench", "--from", str(tmp_path / "bench.json")])
    assert r.exit_code == 2 and "rows[1].power_w_end" in r.output


def test_a_bench_json_from_before_clocks_still_reads():
    from tests.paths import ROOT

    out = CliRunner().invoke(main, ["bench", "--from", str(ROOT / "docs/results/h200-bench.json")]).output
    assert "clocks: not recorded (a bench.json from before clocks were recorded)" in out and "!" not in out
