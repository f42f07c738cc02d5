"""Register-blocked MMA kernels on real H200 captures (tests/fixtures/h200/mma/: Triton GEMMs, FlashAttention-2's
decode, CUTLASS's sm80 attention and a Triton attention kernel on the mma.sync path, 98 to 255 registers) get the MMA path named from their SASS, what that path
reaches, the same-work ground truth and advice that fits, never fewer registers or more occupancy; the
warpgroup-path kernels (cuBLAS, cuDNN) keep their verdicts."""

import lzma
import shutil

import pytest
from click.testing import CliRunner

import roofline
from kernels.errors import BadInput
from profiler.ncu_source import read_pc_samples
from roofline.analysis.mma_path import mma_path
from roofline.analysis.useful import UsefulWork
from roofline.cli import main
from tests.paths import FIXTURES

MMA = FIXTURES / "mma"
GEMM = MMA / "gemm_mma2.ncu-rep.gz"  # --set full: HMMA.16816, 152 registers, 12.5% occupancy
DECODE = MMA / "fa2_decode_roofline.ncu-rep.gz"  # the roofline preset: 255 registers, one query row
DECODE_WORK = UsefulWork(flops=4.0 * 8 * 64 * 32768 * 128, bytes=2.0 * 8 * 64 * 32768 * 128 * 2)  # QK^T + PV; K, V


def _only(run):
    (k,) = run.analysis.kernels
    return k


def _no_occupancy_advice(advice: str) -> None:
    assert "fewer registers" not in advice and "occupancy limiter" not in advice
    assert "more blocks" not in advice and "less shared memory" not in advice


def test_a_register_blocked_gemm_names_its_path_and_gets_no_occupancy_advice():
    k = _only(roofline.load(GEMM))
    assert k.bound == "latency" and k.cause == "register-blocked on mma.sync: low occupancy by design"
    _no_occupancy_advice(k.advice)
    assert k.advice.startswith("move the MMAs to the warpgroup path")
    said = "\n".join(k.evidence)
    assert "HMMA.16816.F32.BF16" in said and "152 registers per thread hold the MMA accumulators" in said
    # ncu's own peaks in this --set full report: mma.sync 360,448 of the warpgroup path's 540,672 ops per cycle
    assert (
        "mma.sync peaks at 0.67 of this GPU's warpgroup-MMA rate: 636 of 954 TFLOP/s (this report's own peaks)" in said
    )
    assert "tensor pipe 51.8% busy" in said
    # the same-work comparison, measured without a profiler on the H200 (mma_times.json)
    assert "cuBLAS 0.190 ms vs Triton on mma.sync 0.440 (0.43x)" in said


def test_fa2_decode_with_its_useful_work_names_the_padding():
    plain = _only(roofline.load(DECODE))
    assert plain.cause.startswith("register-blocked on mma.sync") and "pack more query rows" not in plain.advice
    k = _only(roofline.load(DECODE, useful=DECODE_WORK))
    _no_occupancy_advice(k.advice)
    said = "\n".join(k.evidence)
    assert "the tensor cores executed 128x the useful FLOPs" in said
    assert "DRAM moved 8.595 GB against 8.590 GB useful (1.00x)" in said
    assert "pack more query rows into a tile" in k.advice
    assert k.hierarchy["useful_flops"] == DECODE_WORK.flops and round(k.hierarchy["executed_over_useful"]) == 129


def test_without_sass_the_tensor_pipe_counters_name_the_path():
    run = roofline.load(DECODE)
    med = run.launches.median(numeric_only=True).to_dict()
    path = mma_path(med, None)
    assert path.key == "mma_sync" and "268,435,456 mma.sync, 0 warpgroup" in path.how


def test_warpgroup_kernels_are_not_register_blocked():
    for name in ("gemm", "sdpa"):  # cuBLAS nvjet and cuDNN: HGMMA, labelled compute (tensor pipe)
        run = roofline.load(FIXTURES / "corpus" / f"{name}.ncu-rep.gz")
        k = _only(run)
        assert k.bound == "compute" and k.roof == "tensor pipe"
        assert not any("register-blocked" in e for e in k.evidence)
        assert "padded" not in k.advice  # no workload: nothing shows padding
        med = run.launches.median(numeric_only=True).to_dict()
        path = mma_path(med, read_pc_samples(FIXTURES / "corpus" / f"{name}.ncu-rep.gz").functions[k.kernel])
        assert path.key == "mma_warpgroup" and "HGMMA" in path.how


def test_useful_work_is_for_captures_without_a_workload():
    with pytest.raises(BadInput, match="names its workload"):
        roofline.load(FIXTURES / "runs" / "h200-triton_mla_fast-skew16-p64", useful=UsefulWork(flops=1e9))
    with pytest.raises(BadInput, match="--useful-flops"):
        UsefulWork(flops=-1.0)
    with pytest.raises(BadInput, match="give FLOPs"):
        UsefulWork()


def test_analyze_takes_the_useful_work_from_the_command_line():
    out = CliRunner().invoke(
        main, ["analyze", str(DECODE), "--useful-flops", "8.589934592e9", "--useful-bytes", "8.589934592e9"]
    )
    assert out.exit_code == 0, out.output
    assert "useful work (given: 8.59e+09 FLOP and 8.59e+09 bytes per step)" in out.output
    assert "pack more query rows" in out.output


# Register-blocked at other register counts (tests/fixtures/capture/mma128_h200.sh): CUTLASS's sm80 attention
# (128 registers, 25%: the occupancy cause's threshold itself), a Triton GEMM (98 registers, 25%, L1/shared its
# busiest unit) and a Triton attention kernel (166 registers, bandwidth-bound on L1/shared).
CUTLASS = MMA / "cutlass_prefill.ncu-rep.xz"  # xz: gzip leaves it over the fixtures' 200 KB
GEMM_128 = MMA / "gemm_mma2_128.ncu-rep.gz"
ATTN = MMA / "attn_mma2.ncu-rep.gz"


@pytest.fixture(scope="module")
def cutlass(tmp_path_factory):
    plain = tmp_path_factory.mktemp("cutlass") / "cutlass_prefill.ncu-rep"
    with lzma.open(CUTLASS) as src, open(plain, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return plain


def _warpgroup_first(advice: str) -> None:
    _no_occupancy_advice(advice)
    assert advice.startswith("move the MMAs to the warpgroup path (wgmma), which reads its operands from shared")


def test_cutlass_attention_at_128_registers_is_register_blocked(cutlass):
    k = _only(roofline.load(cutlass))
    assert k.kernel.startswith("fmha_cutlassF_bf16_aligned_64x128_rf_sm80")
    assert k.bound == "latency" and k.cause == "register-blocked on mma.sync: low occupancy by design"
    _warpgroup_first(k.advice)
    said = "\n".join(k.evidence)
    assert "HMMA.1688.F32.BF16" in said and "128 registers per thread hold the MMA accumulators across the loop" in said
    assert "the 25.0% occupancy they allow is the design" in said
    assert "cuDNN 0.505 ms vs CUTLASS's sm80 attention (SDPA memory-efficient) 1.736 (0.29x)" in said


def test_a_gemm_at_98_registers_whose_busiest_unit_is_shared_memory_gets_the_warpgroup_path():
    k = _only(roofline.load(GEMM_128))
    assert k.unit.startswith("L1/shared")
    assert k.cause == "register-blocked on mma.sync: low occupancy by design"
    _warpgroup_first(k.advice)
    assert "98 registers per thread hold the MMA accumulators" in "\n".join(k.evidence)


def test_an_l1_bound_register_blocked_kernel_gets_the_warpgroup_path_before_shared_memory_cuts():
    k = _only(roofline.load(ATTN))
    assert (k.bound, k.roof, k.cause) == ("bandwidth", "L1/shared", "memory leads compute by 10+ points")
    _warpgroup_first(k.advice)
    assert k.advice.index("warpgroup path") < k.advice.index("cut the shared-memory traffic")


def test_the_sass_says_the_accumulators_stay_in_registers_across_the_loop(cutlass):
    for path in (GEMM, GEMM_128, ATTN, cutlass):
        (traits,) = read_pc_samples(path).functions.values()
        assert traits["mma_sync"] and traits["mma_register_loop"], path
    for name in ("gemm", "sdpa"):  # the warpgroup path: no mma.sync loop
        (traits,) = read_pc_samples(FIXTURES / "corpus" / f"{name}.ncu-rep.gz").functions.values()
        assert not traits["mma_register_loop"]
