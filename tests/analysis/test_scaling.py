"""roofline.analysis.scaling: time = fixed + KV bytes / rate over context lengths, on the committed H200 bench."""

import dataclasses
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from roofline.analysis.bench_table import bench_table
from roofline.analysis.scaling import scaling_fits
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from tests.paths import BENCH_CSV

BENCH_JSON = BENCH_CSV.with_suffix(".json")


def saved():
    d = json.loads(BENCH_JSON.read_text())
    return d["meta"], pd.DataFrame(d["rows"])


def fit_of(fits, kernel, page_size, heads):
    (f,) = [f for f in fits if (f.kernel, f.page_size, f.heads) == (kernel, page_size, heads)]
    return f


def test_fits_of_the_h200_bench():
    meta, table = saved()
    fits = scaling_fits(table, meta["read_gbps"], meta["matmul_tflops"])
    assert len(fits) == 16  # 4 kernels x 2 page sizes x 2 head counts, 3 contexts each
    graph = fit_of(fits, "triton_mla_fast_graph", 64, 8)  # one replay per step: 0.0264, 0.0409, 0.0712 ms
    assert 20 < graph.fixed_us < 30 and 3000 < graph.rate_gbps < 3600 and not graph.note
    assert graph.points == 3 and graph.max_ctx_len == 131072 and 0.3 < graph.fixed_share < 0.45
    slow = fit_of(fits, "triton_mla", 64, 8)  # the 140x kernel: all rate, no fixed part to speak of
    assert slow.rate_gbps < 20 and slow.fixed_share < 0.01
    plain = fit_of(fits, "triton_mla_fast", 64, 8)  # plain calls, host-bound: 0.1855, 0.1759, 0.0761 ms
    assert plain.rate_gbps is None and "does not grow with the bytes" in plain.note
    p1 = fit_of(fits, "triton_mla_fast", 1, 8)  # 0.0578, 0.0561, 0.0729 ms: the short ones are the host's
    assert p1.pct_of_read_bw > 100 and "less than the ceilings allow" in p1.note


def test_a_straight_line_is_recovered_and_short_or_failed_groups_are_left_out():
    ctxs = [8192, 32768, 131072, 262144]
    kv = [(c + 9) * 1152 for c in ctxs]  # KV bytes: 576 bf16 per token, the prefix and the 9 drafts
    rows = [
        dict(
            kernel=k, ctx_len=c, page_size=64, heads=8, q_len=9, batch=1, error="", median_ms=0.010 + b / 2000e9 * 1e3
        )  # 10 us + the bytes at 2,000 GB/s
        for k in ("line", "two_points", "one_failed")
        for c, b in zip(ctxs, kv)
    ]
    table = bench_table(pd.DataFrame(rows), get_gpu("h200"), read_gbps=4500.0, matmul_tflops=700.0, source="test")
    assert list(table["kv_bytes"][:4]) == kv
    table = table[~((table.kernel == "two_points") & (table.ctx_len > 32768))]
    table.loc[(table.kernel == "one_failed") & (table.ctx_len > 8192), "error"] = "RuntimeError: out of memory"
    (f,) = scaling_fits(table, 4500.0, 700.0)
    assert f.kernel == "line" and f.points == 4
    assert f.fixed_us == pytest.approx(10.0) and f.rate_gbps == pytest.approx(2000.0)
    assert f.pct_of_read_bw == pytest.approx(100 * 2000 / 4500) and f.max_residual_pct < 1e-6


def test_bench_from_a_saved_json_needs_no_gpu(tmp_path):
    out = CliRunner().invoke(main, ["bench", "--from", str(BENCH_JSON)])
    assert out.exit_code == 0, out.output
    assert "time = fixed + KV bytes / rate" in out.output and "triton_mla_fast_graph" in out.output
    bad = tmp_path / "bench.json"
    bad.write_text('{"meta": {"device": "x"}, "rows": []}')
    out = CliRunner().invoke(main, ["bench", "--from", str(bad)])
    assert out.exit_code == 2 and str(bad) in out.output and "read_gbps" in out.output
    out = CliRunner().invoke(main, ["bench", "--from", str(BENCH_CSV)])
    assert out.exit_code == 2 and "not a bench.json" in out.output


def test_the_shortest_contexts_are_dropped_until_a_line_fits():
    # roofline bench of triton_mla_fast(_graph) from 8k to 1,024k on the H200 (docs/results/h200-bench-scaling.*)
    d = json.loads((BENCH_CSV.parent / "h200-bench-scaling.json").read_text())
    fits = scaling_fits(pd.DataFrame(d["rows"]), d["meta"]["read_gbps"], d["meta"]["matmul_tflops"])
    for f, wrote in zip(fits, d["scaling"], strict=True):  # what the run itself wrote
        assert dataclasses.asdict(f) == {k: pytest.approx(v) if isinstance(v, float) else v for k, v in wrote.items()}
    plain = fit_of(fits, "triton_mla_fast", 64, 8)  # 8k and 32k are off the line (host time, other split plans)
    assert plain.min_ctx_len >= 131072 and plain.points >= 3 and plain.max_residual_pct < 5
    assert 20 < plain.fixed_us < 35 and 3000 < plain.rate_gbps < 3800 and plain.fixed_share < 0.1
    h64 = fit_of(fits, "triton_mla_fast", 1, 64)  # 387 to 401 GB/s from 128k on: the rate falls, no fixed part
    assert h64.fixed_us < 0 and "negative" in h64.note
