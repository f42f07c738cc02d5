"""Host time of one triton_mla_fast call (enqueue only, the GPU running behind) per page size, and
where it goes (cProfile), to tell launch overhead from kernel time.  python benchmarks/host_profile.py"""

import cProfile
import io
import pstats
import time

import torch

from kernels.fast.run import triton_mla_fast
from kernels.inputs import build_inputs
from kernels.spec import VerifyWorkload


def main() -> None:
    for page in (64, 1):
        inp = build_inputs(VerifyWorkload(ctx_len=8192, heads=8, page_size=page), device="cuda")
        for _ in range(5):
            triton_mla_fast(inp)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(300):
            triton_mla_fast(inp)
        host = (time.perf_counter() - t) / 300 * 1e6
        torch.cuda.synchronize()
        print(f"page {page}: host {host:.1f} us per call")
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(300):
            triton_mla_fast(inp)
        pr.disable()
        torch.cuda.synchronize()
        s = io.StringIO()
        pstats.Stats(pr, stream=s).sort_stats("cumtime").print_stats(14)
        print(s.getvalue()[:3500])


if __name__ == "__main__":
    main()
