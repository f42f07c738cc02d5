"""Phrases said only where they are true, each checked on a capture where it would be false.

- "fewer padded rows" at 64 heads (576 rows are nine whole 64-row blocks) and on cuDNN's prefill: said only
  where the tensor cores ran more FLOPs than the workload needs;
- "a read of these bytes takes 12.0 us fixed (27% of it)" under a compute-bound floor of 239 us (27% was of
  the read, not of the floor);
- the "role barrier" class given to the instruction after a __syncthreads in kernels without warp roles (a
  random-number kernel's ISETP; here the softmax and row-sum corpus kernels).
"""

import pytest

import roofline
from kernels.spec import VerifyWorkload
from profiler.ncu_source import has_roles, instruction_class, read_pc_samples
from roofline.analysis.floor import at_size_line, workload_floor
from roofline.catalogue.gpus import get_gpu
from tests.paths import FIXTURES, RUNS


@pytest.mark.parametrize(
    "run_dir", ["h200-triton_mla_fast-h64-128k-p64-source", "h200-triton_mla_fast-h64-ring-128k-p64-source"]
)
def test_no_padding_advice_where_64_heads_fill_whole_blocks(run_dir):
    run = roofline.load(RUNS / run_dir)
    assert run.workload.heads * run.workload.q_len == 9 * 64
    split = run.analysis.kernels[0]
    assert split.bound in ("latency", "compute") and "padded" not in split.advice


def test_padding_advice_where_the_tensor_cores_ran_more_than_the_workload():
    split = roofline.load(RUNS / "h200-triton_mla_fast-128k-p64").analysis.kernels[0]  # 8 heads x 9 rows
    assert "fewer padded rows or recomputed MMAs: the tensor cores ran 2.72x the useful FLOPs" in split.advice


def test_the_at_size_line_under_a_compute_bound_floor_says_the_read_is_shorter():
    h200 = get_gpu("h200")
    line = at_size_line(workload_floor(VerifyWorkload(ctx_len=131072, heads=64), h200))
    assert "(27% of it)" not in line
    assert line.startswith("at-size floor: 239.3 µs per layer, the compute floor: a read of these bytes takes less")
    assert "12.0 µs fixed, 27% of the read" in line
    bandwidth = at_size_line(workload_floor(VerifyWorkload(ctx_len=131072, heads=8), h200))
    assert "12.0 µs fixed (27% of it)" in bandwidth  # there the read is the floor: 27% of it is right


@pytest.mark.parametrize("op", ["softmax", "rowsum"])
def test_a_syncthreads_kernel_waits_at_block_barriers_not_role_handoffs(op):
    pc = read_pc_samples(FIXTURES / "corpus" / f"{op}.ncu-rep.gz").frame
    assert "role barrier" not in set(pc["wait_class"]) and "block barrier" in set(pc["wait_class"])


def test_the_instruction_after_a_block_barrier_is_a_block_barrier_wait():
    # the torch.randn kernel of an H800 capture (flyinglandlord/sglang's profile.ncu-rep): its busiest barrier
    # stall sits on the ISETP after BAR.SYNC 0x0
    sass = ["IMAD R28, R0, UR5, R28", "WARPSYNC.ALL", "BAR.SYNC 0x0", "ISETP.GE.AND P0, PT, R28, R7, PT"]
    assert not has_roles(sass)
    assert instruction_class(sass[3], sass[:3], set(), "barrier", has_roles(sass)) == "block barrier"
    assert has_roles(["BAR.SYNC 0x1, 0x100"]) and has_roles(["@!P0 BAR.ARV 0x2, 0x80"])
