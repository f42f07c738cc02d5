"""Full-size kernel checks on the GPU (bf16). Skipped without one; run on the H200:
ROOFLINE_GPU_TESTS=1 python -m pytest -m gpu tests/test_gpu_kernels.py
"""

import pytest

from kernels.spec import VerifyWorkload

pytestmark = pytest.mark.gpu

CASES = [
    dict(ctx_len=128 * 1024, page_size=1, tree_mask="tree"),
    dict(ctx_len=128 * 1024, page_size=64, tree_mask="tree"),
    dict(ctx_len=128 * 1024, page_size=64, tree_mask="chain"),
    dict(ctx_len=1000, ctx_lens=(4093, 70001, 128 * 1024), batch=3, page_size=16, tree_mask="tree"),
]


@pytest.mark.parametrize("kernel", ["triton_mla", "triton_mla_decode", "triton_mla_fast"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"p{c['page_size']}-{c['tree_mask']}-b{c.get('batch', 1)}")
def test_kernel_matches_reference_on_gpu(kernel, case):
    from kernels.check import check_kernel

    result = check_kernel(kernel, VerifyWorkload(seed=7, **case), device="cuda")
    print(result)
    assert result.ok, result
