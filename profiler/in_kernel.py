"""The in-kernel timeline's capture, a child of `roofline profile --in-kernel` (python -m profiler.in_kernel): the
fast kernel run with its stamps on (kernels/fast/timeline.py, kernels/stamps.py), its output checked against
the same step without them and against the PyTorch reference, the step timed with and without the stamps (CUDA
graph replays, alternating), and the stamps of one more replay written to F (npz: `split`, `combine`, `meta` as
JSON).

    python -m profiler.in_kernel --spec run/spec.json --kernel triton_mla_fast --out run/in_kernel.npz
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from kernels.spec import VerifyWorkload
from kernels.timeline_layout import GT_FIELDS, RAW_FIELDS

# The kernels whose source carries stamps (their Gluon paths on sm_90); any other has no in-kernel scopes.
SCOPED = ("triton_mla_fast", "triton_mla_fast_graph")
FORMAT = "roofline-in-kernel/1"


def no_scopes_line(kernel: str) -> str | None:
    """The one line that says `kernel` has no in-kernel scopes, or None where it has them."""
    if kernel in SCOPED:
        return None
    return f"in-kernel: {kernel} has no in-kernel scopes (only triton_mla_fast's Gluon paths stamp their stages)"


def _graph_ms(fn, replays: int):
    """fn captured in a CUDA graph; returns (a callable timing `replays` replays in ms per replay, the graph)."""
    import torch  # lazy

    fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def sample() -> float:
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / replays

    return sample, graph


def overhead(inp, stamps: dict, samples: int, replays: int) -> tuple[dict, object]:
    """The step's time without and with the stamps: medians of alternating samples of graph replays (ms); and
    the stamped step's CUDA graph."""
    from kernels.fast.run import triton_mla_fast  # lazy: torch, triton

    plain, _ = _graph_ms(lambda: triton_mla_fast(inp), replays)
    stamped, graph = _graph_ms(lambda: triton_mla_fast(inp, stamps=stamps), replays)
    a, b = [], []
    for _ in range(samples):
        a.append(plain())
        b.append(stamped())
    off, on = statistics.median(a), statistics.median(b)
    return {"off_ms": off, "on_ms": on, "overhead": on / off - 1.0, "samples": samples, "replays": replays}, graph


def relative(split, combine) -> tuple:
    """The stamps as the file keeps them (small and compressible): %globaltimer less the earliest one less 1
    (`gt0`, returned), each program's clocks less its earliest clock less 1, each combine program's clocks less
    its start less 1; int32. Zero stays zero (not written); a reader needs only these differences."""
    import numpy as np  # lazy

    s, c = split.copy(), combine.copy()
    gt = list(GT_FIELDS)
    gts = np.concatenate([s[:, :, gt][s[:, :, gt] != 0], c[:, [1, 5]][c[:, [1, 5]] != 0]])
    gt0 = int(gts.min()) - 1 if gts.size else 0
    s[:, :, gt] = np.where(s[:, :, gt] != 0, s[:, :, gt] - gt0, 0)
    clk = np.ones(s.shape[2], dtype=bool)
    clk[list(GT_FIELDS + RAW_FIELDS)] = False
    values = s[:, :, clk]
    top = np.iinfo(np.int64).max
    low = np.where(values != 0, values, top).reshape(len(s), -1).min(axis=1)
    base = np.where(low == top, 0, low - 1)
    s[:, :, clk] = np.where(values != 0, values - base[:, None, None], 0)
    c[:, [1, 5]] = np.where(c[:, [1, 5]] != 0, c[:, [1, 5]] - gt0, 0)
    start = c[:, 2] - 1
    for k in (2, 3, 4):
        c[:, k] = np.where(c[:, k] != 0, c[:, k] - start, 0)
    return s.astype(np.int32), c.astype(np.int32), gt0


def stamps_meta(kernel: str, workload: VerifyWorkload, stamps: dict, device: str) -> dict:
    """The file's meta for the stamps of one step of `kernel` (`stamps`: the dict a stamped call filled,
    kernels.fast.run.stamp_buffers) on `workload` and `device`."""
    return {
        "format": FORMAT,
        "kernel": kernel,
        "workload": workload.to_dict(),
        "device": device,
        "split_kernel": stamps["kernel"],
        **({"schedule": stamps["schedule"]} if stamps.get("schedule") else {}),  # its stage names (STAGES)
        "grid": list(stamps["grid"]),
        "stamp_tiles": stamps["stamp_tiles"],
        "combine_kernel": stamps["combine_kernel"],
        "combine_grid": list(stamps["combine_grid"]) if stamps["combine_grid"] else None,
    }


def write_stamps(out, stamps: dict, meta: dict) -> None:
    """The stamps of one step (their buffers in `stamps`) and `meta` (stamps_meta's, and more) into the npz file
    `out`, as `relative` keeps them; meta gains their time origin (gt0)."""
    import numpy as np  # lazy

    meta = dict(meta)
    split, combine, meta["gt0"] = relative(stamps["split"].cpu().numpy(), stamps["combine"].cpu().numpy())
    np.savez_compressed(out, split=split, combine=combine, meta=np.array(json.dumps(meta)))


def capture(kernel: str, workload: VerifyWorkload, out: str, samples: int = 15, replays: int = 20) -> int:
    """Run `kernel`'s step with its stamps and write them to `out`; 0 on success, 2 where it has no scopes."""
    line = no_scopes_line(kernel)
    if line is not None:
        print(line, file=sys.stderr)
        return 2
    import torch  # lazy

    from kernels.check import rel_err  # lazy: torch
    from kernels.fast.run import triton_mla_fast  # lazy
    from kernels.inputs import build_inputs  # lazy
    from kernels.launch_spec import device_facts  # lazy
    from kernels.reference import torch_ref  # lazy

    inp = build_inputs(workload, device="cuda")
    plain = triton_mla_fast(inp)
    stamps: dict = {}
    stamped = triton_mla_fast(inp, stamps=stamps)
    torch.cuda.synchronize()
    check = {
        "same_as_unstamped": bool(torch.equal(plain, stamped)),
        "rel_err_vs_reference": float(rel_err(stamped.float(), torch_ref(inp).float())),
    }
    cost, graph = overhead(inp, stamps, samples, replays)
    for key in ("split", "combine"):
        stamps[key].zero_()
    graph.replay()  # the stamps kept: one step as the timing ran it (a graph: no host gap before the combine)
    torch.cuda.synchronize()
    meta = {**stamps_meta(kernel, workload, stamps, device_facts("cuda")[0]), "check": check, "overhead": cost}
    write_stamps(out, stamps, meta)
    print(
        f"in-kernel: {stamps['kernel']} grid {tuple(stamps['grid'])} stamped; output same as unstamped: "
        f"{check['same_as_unstamped']}, rel err vs reference {check['rel_err_vs_reference']:.2e}; step "
        f"{cost['off_ms'] * 1e3:.1f} us -> {cost['on_ms'] * 1e3:.1f} us with stamps ({cost['overhead']:+.1%})"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m profiler.in_kernel", description=__doc__.splitlines()[0])
    ap.add_argument("--spec", required=True, help="the run's spec.json")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--out", required=True, help="the npz file to write")
    args = ap.parse_args(argv)
    with open(args.spec) as f:
        workload = VerifyWorkload.from_dict(json.load(f)["workload"])
    return capture(args.kernel, workload, args.out)


if __name__ == "__main__":
    sys.exit(main())
