import json

import pytest
from click.testing import CliRunner

from kernels.spec import VerifyWorkload
from roofline.analysis.kernel_models import kernel_model
from roofline.catalogue.gpus import get_gpu
from roofline.cli import main
from tests.paths import BENCH_CSV, RUNS, SAMPLE_RUN


def run(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


@pytest.mark.parametrize(
    "kernel,programs,limited",
    [
        ("triton_mla", 8, "serial program"),
        ("triton_mla_decode", 72, "serial program"),
        ("triton_mla_fast", 129, "bandwidth"),
    ],
)
def test_kernel_models_h200_128k(kernel, programs, limited):
    # grids as ncu saw them on the H200 at page size 64 (tests/fixtures/h200/runs: 72 and 129 blocks)
    m = kernel_model(kernel, VerifyWorkload(ctx_len=131072, page_size=64), get_gpu("h200"))
    assert m.programs == programs and m.limited_by == limited
    kv = (131072 + 9) * 1152
    assert m.unique_bytes >= kv and m.moved_bytes >= kv
    config = dict((name, source) for name, _, _, source in m.inputs)["launch configuration"]
    if kernel == "triton_mla_fast":  # sm_90 runs the Gluon path, with its own measured config
        assert "GLUON_CONFIG" in config


def test_model_cli_with_kernel_and_ceilings():
    d = json.loads(run("model", "--kernel", "triton_mla", "--ctx", "128k", "--gpu", "h200", "--format", "json").output)
    km = d["kernel_model"]
    assert km["moved_bytes"] == 8 * (131072 + 9) * 1152  # once per head
    assert km["gap_to_floor"] > 50 and d["ceilings"][0]["kind"] in ("datasheet", "measured")
    r = run("model", "--kernel", "torch_ref")
    assert r.exit_code == 2 and "reference" in r.output


def test_projection_says_what_is_measured_and_modelled():
    d = json.loads(run("analyze", str(SAMPLE_RUN), "--project-to", "rtx-pro-6000", "--format", "json").output)
    p = d["projection"]
    (k,) = p["kernels"]
    assert k["bound_measured"] == "latency" and k["method"].startswith("modelled: latency-bound")
    assert k["projected_ms"] == pytest.approx(k["measured_ms"] * 1980 / 2617)
    assert p["floor"]["bound"] == "bandwidth" and p["floor"]["bandwidth_kind"] == "datasheet"
    assert "measured" in p and "modelled" in p
    r = run("analyze", str(SAMPLE_RUN), "--project-to", "tpu-v9")
    assert r.exit_code == 2 and "unknown GPU" in r.output


def test_split_kernel_runs_analyze_with_two_kernels_and_a_roofline():
    d = json.loads(run("analyze", str(RUNS / "h200-triton_mla_fast-128k-p64"), "--format", "json").output)
    names = [k["kernel"] for k in d["kernels"]]
    assert names == ["_fast_split_kernel", "_combine_kernel"]
    split = d["kernels"][0]
    levels = {lv["level"]: lv for lv in split["hierarchy"]["levels"]}
    assert set(levels) == {"L1", "L2", "DRAM"}
    assert levels["DRAM"]["bytes"] == pytest.approx((131072 + 9) * 1152, rel=0.1)  # KV read ~once
    assert split["hierarchy"]["tensor_flops"] > 2e10
    assert d["step"]["gap"] < 20  # the fast kernel is near the floor's order of magnitude


def test_bench_table_recomputes_from_times():
    import pandas as pd

    from roofline.analysis.bench_table import bench_table

    saved = pd.read_csv(BENCH_CSV, keep_default_na=False)
    again = bench_table(
        saved[["kernel", "ctx_len", "page_size", "heads", "q_len", "batch", "median_ms", "error"]],
        get_gpu("h200"),
        read_gbps=4489.0,
        matmul_tflops=686.6,
        source="test",
    )
    assert again["eff_gbps"].tolist() == pytest.approx(saved["eff_gbps"].astype(float).tolist(), rel=1e-3)
    base = again[(again.kernel == "triton_mla")]
    assert (base["speedup_vs_triton_mla"] == 1.0).all()


def test_projection_of_a_bandwidth_bound_kernel_scales_by_bandwidth():
    from tests.paths import PROBES

    d = json.loads(
        run("analyze", str(PROBES / "stream_copy.ncu-rep"), "--project-to", "rtx-pro-6000", "--format", "json").output
    )
    (k,) = d["projection"]["kernels"]
    ratio = get_gpu("h200").dram_ceiling().value / get_gpu("rtx-pro-6000").dram_ceiling().value
    assert k["projected_ms"] == pytest.approx(k["measured_ms"] * ratio)
    assert "of the roof" in k["method"] and "datasheet" in k["method"]


def test_bench_rendering_without_the_baseline_prints_no_nan():
    import pandas as pd

    from reports.text import render_bench
    from roofline.analysis.bench_table import bench_table

    saved = pd.read_csv(BENCH_CSV, keep_default_na=False)
    fast = saved[saved.kernel == "triton_mla_fast"][
        ["kernel", "ctx_len", "page_size", "heads", "q_len", "batch", "median_ms", "error"]
    ]
    table = bench_table(fast, get_gpu("h200"), read_gbps=4489.0, matmul_tflops=686.6, source="test")
    meta = {"device": "NVIDIA H200", "read_gbps": 4489.0, "copy_gbps": 4282.0, "matmul_tflops": 686.6}
    text = render_bench(table, meta)
    assert "nan" not in text.lower() and "triton_mla_fast" in text


def test_model_says_when_memory_and_compute_floors_are_close():
    # 8 heads at 128k on the H200: compute is ~89% of the memory floor, so the floor needs both pipes at once
    d = json.loads(run("model", "--ctx", "128k", "--gpu", "h200", "--format", "json").output)
    assert d["bound"] == "bandwidth" and 0.8 < d["balance"] < 1.0
    assert d["serial_ms"] == pytest.approx(d["memory_ms"] + d["compute_ms"])
    assert "balance      compute time is 8" in run("model", "--ctx", "128k", "--gpu", "h200").output
    # 64 heads: compute-bound by 7x, nothing to say
    d64 = json.loads(run("model", "--ctx", "128k", "--heads", "64", "--gpu", "h200", "--format", "json").output)
    assert d64["bound"] == "compute" and d64["balance"] < 0.2
    assert "balance" not in run("model", "--ctx", "128k", "--heads", "64", "--gpu", "h200").output


# --- a ragged batch: the floor's totals and the fast kernel's model under both schedules --------------------

SKEW = dict(lens="mix:1x128k,15x2k", heads=16, q_len=4, page_size=64, tree_mask="chain")


def test_a_ragged_floor_takes_the_batchs_total_bytes_and_flops():
    """The floor and the at-size floor of a ragged batch read every request's tokens once: the sum, not the
    longest times the batch (186.5 MB for one 128k request among fifteen of 2k, as the H200 call measured)."""
    from kernels.batches import make_workload
    from roofline.analysis.floor import workload_floor

    w, gpu = make_workload(**SKEW), get_gpu("h200")
    f = workload_floor(w, gpu)
    tokens = 131072 + 15 * 2048 + 16 * 4
    assert f.kv_bytes == tokens * 1152 == 186_458_112
    assert f.flops == 2 * 16 * 4 * tokens * (576 + 512)
    longest = workload_floor(make_workload(ctx="128k", batch=16, heads=16, q_len=4, page_size=64), gpu)
    assert longest.kv_bytes > 7 * f.kv_bytes  # what batch x the longest would have said
    fit = gpu.read_fit()
    assert f.at_size_ms == pytest.approx(fit.time_ms(f.kv_bytes + f.io_bytes))  # the total bytes at size
    d = json.loads(
        run("model", "--lens", "mix:1x128k,15x2k", "--heads", "16", "--q-len", "4", "--format", "json").output
    )
    assert d["kv_bytes"] == f.kv_bytes


def _partials(w, launch):
    from kernels.fast.paths import plan_fast

    plan = plan_fast(w, "sm_90", 132, **launch)
    rows = w.q_len * w.heads
    if plan.schedule is None:
        return plan.split.grid[1] * w.batch * rows
    return sum(j[2] for j in plan.schedule.jobs) * rows


@pytest.mark.parametrize("lens", ["mix:1x128k,15x2k", "uniform:1k-32k"])
def test_the_fast_kernel_model_counts_the_partials_each_schedule_writes(lens):
    """Under the batch schedule (grid (m_blocks, items, 1)) only the cut requests' items write partials; under
    the uniform one (grid (m_blocks, splits, batch)) every program does. The model charges each exactly (it
    used to charge items x batch under the batch schedule)."""
    from kernels.batches import make_workload

    w, gpu = (
        make_workload(**{**SKEW, "lens": lens, "batch": 32 if lens.startswith("uniform") else None}),
        get_gpu("h200"),
    )
    kv = w.kv_tokens * w.token_bytes
    for launch in ({}, {"schedule": "uniform"}):
        m = kernel_model("triton_mla_fast", w, gpu, launch=launch)
        scratch = 2 * _partials(w, launch) * (512 * 4 + 4)
        assert m.unique_bytes == kv + scratch and m.moved_bytes == kv + scratch  # one M block
    batch, uniform = (
        kernel_model("triton_mla_fast", w, gpu),
        kernel_model("triton_mla_fast", w, gpu, launch={"schedule": "uniform"}),
    )
    assert batch.grid[2] == 1 and uniform.grid[2] == w.batch
    assert "the batch schedule" in batch.notes and "the uniform schedule" in uniform.notes
    assert batch.per_program_bytes < uniform.per_program_bytes  # the longest item against the longest split


def test_the_uniform_schedule_on_a_skewed_batch_is_limited_by_its_longest_program():
    """One 128k request among fifteen of 2k: the uniform grid's longest program walks 16,448 tokens (the ncu
    capture's busiest SM worked 9.9x the average); the batch schedule's longest item 1,344."""
    from kernels.batches import make_workload

    w, gpu = make_workload(**SKEW), get_gpu("h200")
    uniform = kernel_model("triton_mla_fast", w, gpu, launch={"schedule": "uniform"})
    batch = kernel_model("triton_mla_fast", w, gpu)
    assert uniform.grid == (1, 8, 16) and uniform.per_program_bytes == 16448 * 1152
    assert uniform.limited_by == "serial program" and batch.limited_by == "bandwidth"
    assert batch.per_program_bytes == 1344 * 1152 and batch.time_ms < uniform.time_ms / 5
