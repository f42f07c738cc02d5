from pathlib import Path

ROOT = Path(__file__).parent.parent

FIXTURES = Path(__file__).parent / "fixtures" / "h200"
SAMPLE_RUN = Path(__file__).parent.parent / "roofline" / "data" / "samples" / "h200-triton_mla-128k"
FULL_SET = FIXTURES / "triton_mla_8k_full.ncu-rep"
TORCH_DEFAULT = FIXTURES / "torch_copy_matmul_default.ncu-rep"
NO_KERNELS_LOG = FIXTURES / "ncu_no_kernels.log"
PROBES = FIXTURES / "probes"
RUNS = FIXTURES / "runs"
APP_FAILED_LOG = FIXTURES / "ncu_app_failed.log"
BAD_OPTION_LOG = FIXTURES / "ncu_bad_option.log"
BENCH_CSV = Path(__file__).parent.parent / "docs" / "results" / "h200-bench.csv"
SAMPLE_V1 = (
    FIXTURES / "runs" / "h200-triton_mla-128k"
)  # the first bundled sample: old metric list, SOLBottleneck rule, 17 passes
