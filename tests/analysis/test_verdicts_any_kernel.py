"""Verdicts that hold on kernels the project never saw, on real H200 captures."""

import dataclasses
import json
import re

import pandas as pd
import pytest
from click.testing import CliRunner

from kernels.registry import KERNELS, project_kernel_of
from kernels.spec import VerifyWorkload
from profiler.launch_table import LaunchTable
from profiler.ncu_reader import read_ncu_report
from profiler.ncu_tidy import tidy_launches
from reports.text import WRAP, render_text, short_names
from roofline.analysis.summary import summarize
from roofline.analysis.verdict import memory_units, sm_units
from roofline.cli import main
from tests.paths import FULL_SET, PROBES, ROOT, RUNS, SAMPLE_V1, TORCH_DEFAULT

ALL_REPORTS = [
    TORCH_DEFAULT,
    FULL_SET,
    SAMPLE_V1 / "profile.ncu-rep",
    *sorted(PROBES.glob("*.ncu-rep")),
    *sorted(RUNS.glob("*/profile.ncu-rep")),
]


def _kernel(analysis, prefix):
    return next(k for k in analysis.kernels if k.kernel.startswith(prefix))


# 1. The busiest unit, from ncu's own throughput breakdown


@pytest.mark.parametrize("report", ALL_REPORTS, ids=lambda p: p.parent.name + "/" + p.name)
def test_breakdown_units_reproduce_ncus_sm_and_memory_throughput(report):
    """SM% and Memory% are, by ncu's definition, the largest unit of their breakdown: ours must match."""
    for _, row in tidy_launches(read_ncu_report(report)).frame.iterrows():
        assert max(sm_units(row).values()) == pytest.approx(row["sm_throughput_pct"], abs=0.01)
        assert max(memory_units(row).values()) == pytest.approx(row["memory_throughput_pct"], abs=0.01)


def test_rng_fill_is_issue_bound_not_the_fp32_pipe():
    """torch.randn's kernel: SM 76%, ALU 58%, FMA-heavy 54%, FMA 41%: the issue slots lead, no pipe does
    (it used to be called 'compute (FP32 pipe)')."""
    k = _kernel(summarize(tidy_launches(read_ncu_report(TORCH_DEFAULT))), "distribution")
    assert k.bound == "compute" and k.roof == "issue slots"
    assert k.unit == "issue-bound: no pipe above 58% (issue slots 76%)"
    assert any(e.startswith("busiest SM units") and "ALU pipe" in e for e in k.evidence)
    assert "instruction count" in k.advice


def test_gemm_names_the_tensor_pipe_and_memory_kernels_their_level():
    gemm = _kernel(summarize(tidy_launches(read_ncu_report(TORCH_DEFAULT))), "nvjet")
    assert (gemm.roof, gemm.unit) == ("tensor pipe", "tensor pipe 93%")
    copy = summarize(tidy_launches(read_ncu_report(PROBES / "stream_copy.ncu-rep"))).kernels[0]
    assert (copy.roof, copy.unit) == ("DRAM", "DRAM 86%")
    l2 = summarize(tidy_launches(read_ncu_report(PROBES / "l2_reread.ncu-rep"))).kernels[0]
    assert (l2.roof, l2.unit) == ("L2", "L2 82%")


def test_latency_kernels_still_name_their_busiest_unit():
    k = summarize(tidy_launches(read_ncu_report(FULL_SET))).kernels[0]
    assert k.bound == "latency" and k.unit == "L1/shared 2%"


# 2. Advice that fits the kernel


def test_attention_advice_only_for_the_projects_kernels():
    small = summarize(tidy_launches(read_ncu_report(PROBES / "small_grid.ncu-rep"))).kernels[0]
    assert small.cause == "small grid" and small.project_kernel is None
    assert "split-KV" not in small.advice and "blocks >= 2x the SMs" in small.advice
    copy = summarize(tidy_launches(read_ncu_report(PROBES / "stream_copy.ncu-rep"))).kernels[0]
    assert "KV" not in copy.advice and "fewer bytes" in copy.advice
    mla = summarize(tidy_launches(read_ncu_report(FULL_SET))).kernels[0]  # no workload, but a registered kernel
    assert mla.project_kernel == "triton_mla" and "split-KV" in mla.advice


def test_registry_names_the_gpu_kernels_its_kernels_launch():
    sources = "".join(p.read_text() for p in ROOT.glob("kernels/**/*.py"))
    for info in KERNELS.values():
        if info.availability:  # an optional peer (flashmla): its CUDA source is not in the project
            continue
        for name in info.device_kernels:
            assert re.search(rf"@(triton|gluon)\.jit\s+def {name}\(", sources), name
    assert project_kernel_of("_fast_split_kernel") == "triton_mla_fast"
    # as ncu names it (tests/kernels/test_flashmla.py)
    assert project_kernel_of("flash_fwd_splitkv_mla_kernel") == "flashmla"
    assert project_kernel_of("nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT") is None


# 3. The hierarchical roofline from a --set full report


def test_full_set_report_has_all_three_levels_from_sector_counts():
    raw = read_ncu_report(FULL_SET)
    assert "lts__t_bytes.sum" not in raw.frame and "l1tex__t_bytes.sum" not in raw.frame  # why it needs sectors
    h = summarize(tidy_launches(raw)).kernels[0].hierarchy
    levels = {lv["level"]: lv for lv in h["levels"]}
    assert list(levels) == ["L1", "L2", "DRAM"]
    assert levels["L2"]["bytes"] == raw.frame["lts__t_sectors.sum"].iloc[0] * 32
    assert levels["L2"]["peak_gbps"] == pytest.approx(15421, rel=0.01)  # 94 slices x 3 sectors x 32 B x clock
    assert levels["L1"]["bytes"] > levels["L2"]["bytes"] > levels["DRAM"]["bytes"]
    assert h["fp32_flops"] > 0  # from the per-cycle FP32 instruction rates the set holds


# 4. Numbers from what is there


def test_dram_gbps_from_bytes_when_the_rate_is_absent():
    full = read_ncu_report(FULL_SET)
    raw = dataclasses.replace(
        full,
        frame=full.frame.drop(columns=["dram__bytes.sum.per_second", "dram__bytes_read.sum", "dram__bytes_write.sum"]),
    )
    t = tidy_launches(raw).frame  # only dram__sectors_read/write.sum left
    assert t["dram_gbps"].iloc[0] == pytest.approx(9.66, rel=0.01)
    decode = read_ncu_report(RUNS / "h200-triton_mla_decode-128k-p64" / "profile.ncu-rep")
    decode.frame.loc[0, "dram__bytes.sum.per_second"] = None  # one launch without the rate: filled, not '-'
    assert tidy_launches(decode).frame["dram_gbps"].notna().all()


def test_gap_only_where_one_kernel_is_the_step_and_share_otherwise():
    run = RUNS / "h200-triton_mla_decode-128k-p64"
    a = summarize(
        tidy_launches(read_ncu_report(run / "profile.ncu-rep")),
        VerifyWorkload(ctx_len=131072, page_size=64),
        iterations=3,
    )
    combine = _kernel(a, "_combine")
    assert combine.gap_to_floor is None and 0 < combine.share_of_step < 0.01
    assert sum(k.share_of_step for k in a.kernels) == pytest.approx(1.0)
    assert a.step.gap > 40
    text = render_text(a)
    assert "0.1x" not in text and "43.2x from the floor" in text


def test_rule_text_whole_in_json_and_wrapped_in_text():
    a = summarize(tidy_launches(read_ncu_report(TORCH_DEFAULT)))
    rule = _kernel(a, "nvjet").ncu_rule
    assert rule.endswith("@section:MemoryWorkloadAnalysis:Memory Workload Analysis@ section.")
    assert a.to_dict()["kernels"][1]["ncu_rule"] == rule
    text = render_text(a)
    assert rule in " ".join(line.strip() for line in text.splitlines())
    assert all(len(line) <= WRAP for line in text.splitlines() if "SOLBottleneck" in line)


def test_two_kernels_of_one_name_are_told_apart():
    both = pd.concat(
        [tidy_launches(read_ncu_report(PROBES / f"{p}.ncu-rep")).frame for p in ("l2_reread", "small_grid")],
        ignore_index=True,
    )
    a = summarize(LaunchTable(both, source="two probes"))
    labels = [k.label for k in a.kernels]
    assert [k.kernel for k in a.kernels] == ["_read_chunks_kernel"] * 2
    assert len(set(labels)) == 2 and all("[grid " in lab for lab in labels)
    table = render_text(a).splitlines()[2:6]
    assert len({line.split("  ")[0] for line in table if line.startswith("_read")}) == 2


def test_short_names_never_collide():
    gemm = "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT"  # from torch_copy_matmul_default
    names = [gemm, gemm.replace("coopB", "coopA"), gemm + " [grid 132]", gemm + " [grid 264]"]
    short = short_names(names)
    assert len(set(short)) == len(names) and all(len(s) <= 43 for s in short)


# 5. One story for the kernel model and the projection


def test_model_and_projection_say_why_they_differ():
    runner = CliRunner()
    model = runner.invoke(
        main, ["model", "--kernel", "triton_mla", "--gpu", "rtx-pro-6000", "--layers", "61", "--ctx", "128k"]
    )
    assert model.exit_code == 0, model.output
    assert "966." in model.output and "one SM's share of DRAM bandwidth (9.5 GB/s" in model.output
    assert "roofline analyze RUN --gpu GPU" in model.output
    proj = runner.invoke(main, ["analyze", str(SAMPLE_V1), "--project-to", "rtx-pro-6000", "--format", "json"])
    km = json.loads(proj.output)["projection"]["kernel_model"]
    assert km["model_ms_target"] * 61 == pytest.approx(966.4, rel=0.001)
    assert km["projected_ms_target"] * 61 == pytest.approx(703, rel=0.01)
    assert "drew 9.9 GB/s" in km["explanation"] and "projection is the number to trust" in km["explanation"]
