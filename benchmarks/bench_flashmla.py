"""FlashMLA beside the fast kernel and a bare read of the same KV bytes, on the GPU machine.

    python benchmarks/bench_flashmla.py --out docs/results/h200-flashmla-bench     # writes .txt and .json

Each point (page 64, chain mask, q_len 9) builds 4 input sets (seeds 0-3: a model's layers each read
their own KV cache) and captures, per reader, one CUDA graph that runs it on the 4 sets in turn. The
graph is replayed back to back (no L2 flush: a flush's dirty lines would be written back during the
timed kernel) and the time per call is the median over repeats of (events around 10 replays) / 40.
Readers: `read` (kernels.stream.stream_read over the workload's KV bytes), `flashmla` (its split and
combine kernels; the schedule metadata is computed once per input set, outside the graph, as FlashMLA's
own API does), `triton_mla_fast` (its split and combine launches: triton_mla_fast_graph's graph).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
from pathlib import Path

import torch

from kernels.check import rel_err
from kernels.flashmla import extension_dir
from kernels.inputs import build_inputs
from kernels.registry import get_kernel
from kernels.spec import VerifyWorkload, parse_ctx_len
from kernels.stream import stream_read

SETS = 4
REPLAYS = 10
REPEATS = 15


def rotated_us(calls) -> float:
    """Median microseconds per call of one CUDA graph running `calls` in turn (each run once first)."""
    for c in calls:
        c()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for c in calls:
            c()
    for _ in range(3):
        graph.replay()
    times = []
    for _ in range(REPEATS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(REPLAYS):
            graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1000 / (REPLAYS * len(calls)))
    return statistics.median(times)


def point(ctx_len: int, heads: int) -> dict:
    sets = [
        build_inputs(
            VerifyWorkload(ctx_len=ctx_len, heads=heads, page_size=64, tree_mask="chain", seed=s), device="cuda"
        )
        for s in range(SETS)
    ]
    w = sets[0].workload
    kv_bytes = w.kv_tokens * w.token_bytes
    fns = {"flashmla": get_kernel("flashmla").load(), "triton_mla_fast": get_kernel("triton_mla_fast").load()}
    row = {"ctx_len": ctx_len, "heads": heads, "q_len": w.q_len, "page_size": 64, "mask": "chain", "kv_bytes": kv_bytes}
    row["read_us"] = rotated_us(
        [lambda i=i: stream_read(i.kv_cache.view(-1)[: w.kv_tokens * w.head_dim]) for i in sets]
    )
    for name, fn in fns.items():
        row[f"{name}_us"] = rotated_us([lambda i=i, fn=fn: fn(i) for i in sets])
    a, b = (fns[k](sets[0]).clone() for k in fns)
    row["rel_diff"] = rel_err(a, b)  # flashmla vs triton_mla_fast on the same inputs
    flops = 2 * w.q_len * w.heads * w.kv_tokens * (w.head_dim + w.v_dim)  # QK^T and PV, every row
    for name in ("flashmla", "triton_mla_fast"):
        row[f"{name}_x_read"] = row[f"{name}_us"] / row["read_us"]
        row[f"{name}_tflops"] = flops / row[f"{name}_us"] / 1e6
    row["read_gbps"] = kv_bytes / row["read_us"] / 1e3
    del sets
    torch.cuda.empty_cache()
    return row


def versions() -> dict:
    def sh(*cmd):
        try:
            return subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=30).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "unknown"

    import triton

    build = extension_dir() / "build.json"
    return {
        "gpu": torch.cuda.get_device_name(),
        "driver": sh("nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "cuda": torch.version.cuda,
        "flashmla_build": json.loads(build.read_text()) if build.exists() else None,
        "method": __doc__.split("\n\n")[1].replace("\n", " "),
    }


def render(rows: list[dict], meta: dict) -> str:
    head = (
        f"{meta['gpu']}, driver {meta['driver']}, torch {meta['torch']}, triton {meta['triton']}, CUDA {meta['cuda']}; "
        f"FlashMLA {(meta['flashmla_build'] or {}).get('flashmla_commit', '?')}\n"
        f"page 64, chain mask, q_len 9, batch 1; {SETS} rotated input sets per CUDA graph, no L2 flush, medians\n\n"
    )
    cols = (
        "ctx",
        "heads",
        "KV MB",
        "read us",
        "read GB/s",
        "FlashMLA us",
        "x read",
        "TFLOP/s",
        "fast us",
        "x read",
        "TFLOP/s",
        "fast/FlashMLA",
        "rel diff",
    )
    lines = ["  ".join(f"{c:>13s}" for c in cols)]
    for r in rows:
        vals = (
            f"{r['ctx_len'] // 1024}k",
            str(r["heads"]),
            f"{r['kv_bytes'] / 1e6:.1f}",
            f"{r['read_us']:.1f}",
            f"{r['read_gbps']:.0f}",
            f"{r['flashmla_us']:.1f}",
            f"{r['flashmla_x_read']:.2f}",
            f"{r['flashmla_tflops']:.0f}",
            f"{r['triton_mla_fast_us']:.1f}",
            f"{r['triton_mla_fast_x_read']:.2f}",
            f"{r['triton_mla_fast_tflops']:.0f}",
            f"{r['triton_mla_fast_us'] / r['flashmla_us']:.2f}",
            f"{r['rel_diff']:.2%}",
        )
        lines.append("  ".join(f"{v:>13s}" for v in vals))
    return head + "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ctx", default="8k,32k,128k")
    parser.add_argument("--heads", default="8,64")
    parser.add_argument("--out", type=Path, required=True, help="path stem: writes STEM.txt and STEM.json")
    args = parser.parse_args()
    problem = get_kernel("flashmla").unavailable()
    if problem:
        raise SystemExit(f"error: flashmla is {problem}")
    rows = []
    for heads in map(int, args.heads.split(",")):
        for ctx in map(parse_ctx_len, args.ctx.split(",")):
            rows.append(point(ctx, heads))
            print(json.dumps(rows[-1]), flush=True)
    meta = versions()
    text = render(rows, meta)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".txt").write_text(text)
    args.out.with_suffix(".json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=2) + "\n")
    print(text)


if __name__ == "__main__":
    main()
