"""Launch one triton_mla_fast candidate a few times at one shape (a target for ncu):

    python tools/one_launch.py CANDIDATE HEADS [CTX] [PAGE]   (candidates: tools/search_gluon.py)
"""

import os
import sys

import torch

from kernels.inputs import build_inputs
from kernels.spec import VerifyWorkload
from kernels.triton_mla_fast import triton_mla_fast
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from search_gluon import CANDIDATES  # noqa: E402

name, heads = sys.argv[1], int(sys.argv[2])
ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 131072
page = int(sys.argv[4]) if len(sys.argv) > 4 else 64
path, cfg = CANDIDATES[name]
inp = build_inputs(VerifyWorkload(ctx_len=ctx, heads=heads, page_size=page), device="cuda")
for _ in range(3):
    triton_mla_fast(inp, path=path, **cfg)
torch.cuda.synchronize()
