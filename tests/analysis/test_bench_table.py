"""roofline bench's table: the bare read of the same KV bytes as a row and a ratio, masks, and the
points a kernel cannot run listed rather than timed (bench_grid's rows, as it makes them)."""

import pandas as pd
from click.testing import CliRunner

from reports.text import render_bench
from roofline.analysis.bench_table import bench_table
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main

META = {"device": "NVIDIA H200", "read_gbps": 4489.0, "copy_gbps": 4282.0, "matmul_tflops": 686.0, "method": "rotated"}


def row(kernel, ms, mask="chain", page=64, error=""):
    return {
        "kernel": kernel,
        "ctx_len": 131072,
        "page_size": page,
        "heads": 8,
        "q_len": 9,
        "batch": 1,
        "mask": mask,
        "median_ms": ms,
        "error": error,
    }


def test_read_row_gives_each_kernel_its_ratio_to_a_bare_read_of_the_same_bytes():
    times = pd.DataFrame(
        [
            row("read", 0.0467),
            row("flashmla", 0.0763),
            row("triton_mla_fast", 0.0657),
            row("read", 0.0470, mask="tree", page=1),
            row("triton_mla_fast", 0.0690, mask="tree", page=1),
            row("flashmla", float("nan"), mask="tree", page=1, error="skipped: flashmla supports only the chain mask"),
        ]
    )
    table = bench_table(times, get_gpu("h200"), 4489.0, 686.0, source="test")
    x = table.set_index(["kernel", "mask"])["x_read"]
    assert round(x[("flashmla", "chain")], 2) == 1.63 and round(x[("triton_mla_fast", "chain")], 2) == 1.41
    assert round(x[("triton_mla_fast", "tree")], 2) == 1.47  # against the read of its own point
    assert table[table.kernel == "read"]["tflops"].isna().all()  # a bare read does no attention FLOPs
    text = render_bench(table, META)
    header = next(line for line in text.splitlines() if line.startswith("kernel "))
    assert "x read" in text and "1.41x" in text and " mask " in header
    assert "not run (the kernel cannot): flashmla at 128k 1 8 tree: flashmla supports only the chain mask" in text
    assert "error:" not in text


def test_bench_refuses_an_unknown_mask():
    r = CliRunner().invoke(main, ["bench", "--mask", "chain,causal"])
    assert r.exit_code == 2 and "causal: a mask is tree or chain" in r.output
