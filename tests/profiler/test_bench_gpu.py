"""`roofline bench`'s "layered" method on the GPU (ROOFLINE_GPU_TESTS=1): the GEMM between steps is taken out,
so a step timed with it is near the same step timed back to back, not the GEMM's tens of microseconds over it."""

import pytest

from kernels.batches import make_workload
from profiler import bench

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("name", ["read", "triton_mla_fast_graph"])
def test_layered_step_is_near_the_back_to_back_one(name):
    w = make_workload(lens="uniform:4k-32k", batch=8, heads=16, q_len=2, page_size=64, tree_mask="chain")
    if name == bench.READ:
        layered, rotated = bench.time_read(w, "layered"), bench.time_read(w, "rotated")
    else:
        layered, rotated = bench.time_kernel(name, w, "layered"), bench.time_kernel(name, w, "rotated")
    assert rotated.layer_ms is None and layered.layer_ms > rotated.median_ms / 4
    assert 0.7 < layered.median_ms / rotated.median_ms < 1.4, (layered, rotated)
