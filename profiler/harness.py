"""The child process a profiler runs: build the workload, warm up, then N launches in one NVTX range.

    python -m profiler.harness --spec run/spec.json --kernel triton_mla --iters 3 [--info run/harness.json]
        [--plan run/plan.json]

Warm-up (Triton compilation, first launch) happens before the range, so a profiler told
to include only the range (`ncu --nvtx --nvtx-include roofline/`, profiler/nvtx.py) sees just the kernel's launches.
The workload is the spec's alone; `--plan` records the launch plan the kernel ran on it (kernels/registry.py
KernelInfo.plan: triton_mla_fast's path, schedule, grids and work items), which the analysis reads back.

The timing pass, run with no profiler attached (ncu and nsys distort time), writes timing.json:

    python -m profiler.harness --spec run/spec.json --kernel triton_mla --timing-samples 30 --timing-out run/timing.json
"""

from __future__ import annotations

import argparse
import json
import sys

from kernels.launch_spec import device_facts
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload
from profiler.clocks import ClockSampler
from profiler.nvtx import RANGE, STEP
from profiler.timing import TimingSamples, write_timing

PLAN_FORMAT = "roofline-plan/1"  # plan.json: the split path, schedule, split length, launches' grids, work items


def run_in_range(call, iters: int, warmup: int = 1) -> None:
    """`warmup` calls (compilation) outside, then `iters` calls inside one NVTX range, each call
    in a nested `step` range of its own (nsys reads per-step time, gaps and launch cost from them)."""
    import torch  # lazy

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(RANGE)
    for _ in range(iters):
        torch.cuda.nvtx.range_push(STEP)
        call()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m profiler.harness")
    parser.add_argument("--spec", required=True, help="workload spec JSON file")
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--info", help="write device and library versions here (JSON)")
    parser.add_argument("--plan", help="write the launch plan the kernel ran here (JSON), where it records one")
    parser.add_argument(
        "--timing-samples",
        type=int,
        default=0,
        help="instead of the NVTX range: this many timing samples (profiler.bench.time_step)",
    )
    parser.add_argument("--timing-out", help="where the timing pass writes its timing.json")
    parser.add_argument(
        "--spin-cycles",
        type=int,
        default=0,
        help="timing pass: a spin kernel of this many cycles after each step, inside the graph (a known "
        "slowdown: roofline gate)",
    )
    args = parser.parse_args(argv)
    if args.timing_samples < 0 or (args.timing_samples and not args.timing_out):
        parser.error("--timing-samples needs a count >= 0 and --timing-out")

    import torch  # lazy

    from kernels.inputs import build_inputs  # lazy

    with open(args.spec) as f:
        spec = json.load(f)
    workload = VerifyWorkload.from_dict(spec["workload"])
    if not torch.cuda.is_available():
        print("harness: no CUDA device visible to torch", file=sys.stderr)
        return 3
    if args.timing_samples:
        return timing_pass(args.kernel, workload, args.timing_samples, args.timing_out, args.spin_cycles)
    info = get_kernel(args.kernel)
    fn = info.load()
    inp = build_inputs(workload, device="cuda")
    run_in_range(lambda: fn(inp), args.iters, args.warmup)
    if args.info:
        with open(args.info, "w") as f:
            json.dump(host_info(), f, indent=2)
    record = info.plan_record(inp) if args.plan else None
    if record is not None:
        with open(args.plan, "w") as f:
            json.dump({"format": PLAN_FORMAT, "kernel": info.name, "workload": workload.to_dict(), **record}, f)
    print(f"harness: {args.kernel} ran {args.iters} times on {device_facts('cuda')[0]} ({workload.describe()})")
    return 0


def host_info() -> dict:
    import torch  # lazy: the child's start-up
    import triton  # lazy

    name, sm_count, _ = device_facts("cuda")
    return {
        "device": name,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "sm_count": sm_count,
    }


def cuda_uuid() -> str | None:
    """The NVML name (`GPU-<uuid>`) of torch's device 0, so the clocks read are of the GPU timed."""
    import torch  # lazy

    uuid = getattr(torch.cuda.get_device_properties(0), "uuid", None)
    return f"GPU-{uuid}" if uuid else None


def timing_pass(kernel: str, workload, samples: int, out: str, spin_cycles: int = 0) -> int:
    """Time `kernel`'s step (rotated input sets, CUDA-graph replays) and write timing.json (one round, with
    the GPU's clocks at the start and end of its samples) to `out`; `spin_cycles`: torch.cuda._sleep after
    each step (a known slowdown)."""
    import torch  # lazy

    from profiler.bench import time_step  # lazy: torch and triton

    then = (lambda: torch.cuda._sleep(spin_cycles)) if spin_cycles else None
    t = time_step(kernel, workload, samples, then=then, clocks=ClockSampler(cuda_uuid()))
    info = host_info()
    write_timing(
        out,
        TimingSamples(
            samples_ms=tuple(t.samples_ms),
            method="rotated",
            input_sets=t.input_sets,
            replays_per_sample=t.replays_per_sample,
            kernel=kernel,
            workload=workload.to_dict(),
            host={"gpu": info["device"], **{k: info[k] for k in ("torch", "triton", "cuda")}},
            clocks=(t.clocks,) if t.clocks is not None else (),
        ),
    )
    ordered = sorted(t.samples_ms)
    end = t.clocks.end if t.clocks is not None else None
    clock = f", SM {end.sm_mhz:.0f} MHz" if end is not None and end.sm_mhz else ""
    throttled = f", THROTTLED ({'; '.join(t.clocks.throttled)})" if t.clocks is not None and t.clocks.throttled else ""
    print(
        f"harness: timing pass of {kernel}: {len(ordered)} samples, median {ordered[len(ordered) // 2]:.4f} ms "
        f"per step, {t.input_sets} input sets, {t.replays_per_sample} replays per sample ({info['device']}{clock})"
        + throttled
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
