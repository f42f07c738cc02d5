"""The serving rows of a bench (`roofline bench --serving`): each row's batch, its bytes and the ratios to a bare
read and FlashMLA in the same run, as the bench prints them and as tools/make_examples.py puts them in the README
(from the bench.json the H200 call writes: tests/fixtures/capture/serving_bench_h200.sh)."""

import importlib.util
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from kernels.batches import SERVING
from reports.serving import render_serving_markdown, render_serving_text, serving_rows
from roofline.analysis.bench_table import bench_table
from roofline.analysis.scaling import scaling_fits
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from roofline.pipelines.benching import BenchRun, read_bench
from tests.paths import ROOT

META = {"device": "NVIDIA H200", "read_gbps": 4489.0, "copy_gbps": 4282.0, "matmul_tflops": 686.0, "method": "rotated"}
# three serving rows' times on the H200, ms (docs/results/h200-serving-g1/serving.jsonl)
G1 = {
    r["row"]: r for r in map(json.loads, (ROOT / "docs/results/h200-serving-g1/serving.jsonl").read_text().splitlines())
}
KERNELS = ("read", "flashmla", "triton_mla_fast_graph")


def times(rows=("ragged32", "skew16", "even16", "b1h8")) -> pd.DataFrame:
    """bench_points' rows for these serving rows, with G1's times (the columns bench_points writes)."""
    out = []
    for s in SERVING:
        if s.name not in rows:
            continue
        w = s.workload()
        for k in KERNELS:
            out.append(
                {
                    "kernel": k,
                    "row": s.name,
                    "lens": s.lens,
                    "ctx_len": w.ctx_len,
                    "ctx_lens": ",".join(map(str, w.ctx_lens)) if w.ctx_lens else "",
                    "page_size": w.page_size,
                    "heads": w.heads,
                    "q_len": w.q_len,
                    "batch": w.batch,
                    "mask": w.tree_mask,
                    "median_ms": G1[s.name][k],
                    "error": "",
                }
            )
    return pd.DataFrame(out)


@pytest.fixture
def bench():
    table = bench_table(times(), get_gpu("h200"), META["read_gbps"], META["matmul_tflops"], source="test")
    return BenchRun(META, table, scaling_fits(table, META["read_gbps"], META["matmul_tflops"]))


def test_each_ragged_row_gets_its_own_bytes_and_read(bench):
    t = bench.table.set_index(["row", "kernel"])
    assert t.loc[("ragged32", "read"), "kv_bytes"] == G1["ragged32"]["kv_bytes"]  # the batch's total, not 32 x max
    assert t.loc[("skew16", "read"), "kv_bytes"] == t.loc[("even16", "read"), "kv_bytes"] == 186_458_112
    assert t.loc[("skew16", "triton_mla_fast_graph"), "x_read"] == pytest.approx(449.75 / 49.29, rel=1e-3)
    assert t.loc[("even16", "triton_mla_fast_graph"), "x_read"] == pytest.approx(78.79 / 49.30, rel=1e-3)
    assert bench.fits == []  # ragged batches are not a context-length series


def test_the_serving_table_shows_each_row_beside_the_read_and_flashmla(bench):
    kernels, rows = serving_rows(bench.table)
    assert kernels == list(KERNELS) and [r["row"] for r in rows] == ["ragged32", "skew16", "even16", "b1h8"]
    assert rows[0]["batch"] == "32 x 4220-32222" and rows[2]["batch"] == "16 x 10112" and rows[3]["batch"] == "128k"
    md = render_serving_markdown(bench.table)
    assert "| skew16 | 16 x 2k-128k | 16 | 4 | 186.5 | 49.3 | 79.7 | 449.8 | 5.65 | 9.12 |" in md
    assert "`triton_mla_fast_graph` / FlashMLA" in md.splitlines()[0]
    assert "skew16" in render_serving_text(bench.table)


def test_the_bench_table_prints_batches_and_reads_them_back(bench, tmp_path):
    bench.save(tmp_path)
    again = read_bench(tmp_path / "bench.json")
    assert list(again.table["ctx_lens"]) == list(bench.table["ctx_lens"])
    r = CliRunner().invoke(main, ["bench", "--from", str(tmp_path / "bench.json")])
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if line.startswith("kernel "))
    assert "row" in header and "batch" in header and "KV MB" in header
    assert " 2k-128k " in r.output and "serving rows" in r.output


def test_a_bench_json_whose_lengths_do_not_match_its_batch_is_refused(bench, tmp_path):
    bench.save(tmp_path)
    data = json.loads((tmp_path / "bench.json").read_text())
    data["rows"][0]["ctx_lens"] = "4096,x"
    (tmp_path / "bench.json").write_text(json.dumps(data))
    r = CliRunner().invoke(main, ["bench", "--from", str(tmp_path / "bench.json")])
    assert r.exit_code == 2 and "rows[0].ctx_lens must be 32 comma-separated prefix lengths" in r.output


def _make_examples():
    spec = importlib.util.spec_from_file_location("make_examples", ROOT / "tools" / "make_examples.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_readme_serving_table_comes_from_the_committed_bench(bench, tmp_path):
    """Until the H200's bench.json is committed, the README says where it will come from; with it, the table."""
    make = _make_examples()
    assert "Not measured yet" in make.serving_block(tmp_path) and "serving_bench_h200.sh" in make.serving_block(
        tmp_path
    )
    bench.save(tmp_path / make.SERVING_BENCH.parent)
    block = make.serving_block(tmp_path)
    assert "| skew16 | 16 x 2k-128k |" in block and "roofline bench --from" in block


def test_a_time_taken_with_a_throttle_reason_on_record_is_marked():
    """The committed H200 run: NVML recorded a power-cap reason for some read and FlashMLA timings, none of ours and
    none at ragged32."""
    committed = read_bench(ROOT / "docs/results/h200-serving/bench.json")
    _, rows = serving_rows(committed.table)
    marked = {r["row"]: sorted(r["throttled"]) for r in rows}
    assert marked["ragged8"] == ["flashmla", "read"] and marked["ragged32"] == []
    assert [row for row, kernels in marked.items() if "triton_mla_fast_graph" in kernels] == []
    md = render_serving_markdown(committed.table)
    assert (
        "| 151.8! | 261.4! | 232.1 |" in md and "| 173.8 | 189.3 | 211.2 |" in md and "| 49.7! | 80.7! | 70.3 |" in md
    )
    assert "throttle reason on record" in md
    assert "!" not in render_serving_markdown(bench_table(times(), get_gpu("h200"), 4489.0, 686.0, source="t"))


def test_a_layered_run_prints_its_gemm_and_its_ratios_join_the_readme_table():
    """The committed `--method layered` run of the same call: the text says how the steps ran and gives the GEMM
    between them; the README's table adds its two ratios, marked where a timing behind one had a throttle reason."""
    layered = read_bench(ROOT / "docs/results/h200-serving/layered/bench.json")
    assert layered.meta["method"] == "layered"
    text = render_serving_text(layered.table, layered.meta["method"])
    assert "another layer's GEMM between steps" in text.splitlines()[0] and "GEMM between µs" in text
    even = next(line for line in text.splitlines() if line.startswith("even16"))
    assert even.split()[-1] == "63.6"  # the output projection's GEMM alone, µs
    committed = read_bench(ROOT / "docs/results/h200-serving/bench.json")
    md = render_serving_markdown(committed.table, layered.table)
    assert md.splitlines()[0].endswith("| a layer between: `triton_mla_fast_graph` / FlashMLA | / read |")
    assert "| 66.7 | 1.07 | 1.34 | 0.97! | 1.42! |" in md  # even16: 68.6 / 70.9 and 68.6 / 48.4 with a GEMM between
    assert "| 273.1 | 1.02 | 5.88 | 0.97! | 5.63! |" in md


def test_the_readme_serving_table_carries_the_layered_ratios_once_committed(bench, tmp_path):
    make = _make_examples()
    bench.save(tmp_path / make.SERVING_BENCH.parent)
    assert "a layer between" not in make.serving_block(tmp_path)
    layered = BenchRun({**META, "method": "layered"}, bench.table, [])
    layered.save(tmp_path / make.SERVING_LAYERED.parent)
    block = make.serving_block(tmp_path)
    assert "--method layered" in block and "| 5.65 | 9.12 | 5.65 | 9.12 |" in block
