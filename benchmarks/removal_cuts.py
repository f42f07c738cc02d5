"""Where each verify kernel's time goes: the kernel as shipped against itself with one part of its work
compiled out (its NO_MMA, NO_SOFTMAX, NO_GATHER switches; the results are wrong on purpose, the loads
stay), each timed as one CUDA-graph replay of the whole step (split + combine). Needs a CUDA GPU (sm_90
for ring, seesaw and hopper).

    PYTHONPATH=. python benchmarks/removal_cuts.py [--kernel ring,seesaw,hopper,portable,triton_mla]
        [--ctx 131072] [--heads 8,64] [--page-size 64,1] [--out DIR]

Kernels: ring (`_gluon_ring_kernel`, path gluon, ring=True: only where there is a tail warpgroup, 8
heads x 9 tokens = 64 + 8 rows), seesaw (`_gluon_seesaw_kernel`, path gluon, ring=False: the default at
64 heads), hopper and portable (the Triton split kernels, path="hopper"/"portable"; hopper needs whole
pages per tile) and triton_mla (`_verify_extend_kernel`). A kernel is timed at each workload whose plan
launches it; the others are named and skipped.

Variants: full (as shipped), no-mma (every MMA), no-softmax (the online softmax: P = the raw scores, O
not rescaled), no-gather (the gathered tiles' copies; where a kernel gathers besides its whole-tile
loads), loads-only (no MMA and no softmax), each where the kernel has the switches; and per workload a
bare read of the same KV bytes (kernels.stream.stream_read), timed the same way. --out DIR: one
roofline-removal/1 file per kernel, `<kernel as ncu names it>.json` (`roofline analyze RUN --removal FILE`).
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

import torch

from kernels.fast.paths import HOPPER, PORTABLE, RING, SEESAW, plan_fast
from kernels.fast.run import triton_mla_fast
from kernels.inputs import build_inputs
from kernels.launch_spec import device_facts
from kernels.spec import VerifyWorkload, WorkloadError, parse_ctx_len
from kernels.stream import stream_read
from kernels.triton_mla import triton_mla
from profiler.bench import graph_replay_ms
from roofline.removal import FORMAT

VARIANTS = {
    "full": {},
    "no-mma": dict(no_mma=True),
    "no-softmax": dict(no_softmax=True),
    "no-gather": dict(no_gather=True),
    "loads-only": dict(no_mma=True, no_softmax=True),
}
READ = "read"  # the bare read of the workload's KV bytes


@dataclass(frozen=True)
class Subject:
    """One kernel to cut: its registered launcher, how it is asked for, the cuts it has."""

    kernel: str  # as ncu names it
    registered: str
    cuts: tuple[str, ...]
    launch: dict = field(default_factory=dict)  # triton_mla_fast's path and schedule

    def skip_reason(self, w: VerifyWorkload, device_name: str, sm_count: int, arch: str) -> str | None:
        """Why this kernel does not run at `w` (its plan launches another kernel, or none), else None."""
        if self.registered != "triton_mla_fast":
            return None
        try:
            plan = plan_fast(w, arch, sm_count, device_name, **self.launch)
        except ValueError as exc:
            return str(exc)
        return None if plan.split.name == self.kernel else f"the plan launches {plan.split.name}"

    def step(self, inp, cut: dict):
        """The whole step with `cut` on, as a callable for graph_replay_ms."""
        if self.registered == "triton_mla":
            return lambda: triton_mla(inp, **cut)
        return lambda: triton_mla_fast(inp, **self.launch, **cut)


SUBJECTS = {
    "ring": Subject(RING.kernel, "triton_mla_fast", RING.cuts, dict(path="gluon", ring=True)),
    "seesaw": Subject(SEESAW.kernel, "triton_mla_fast", SEESAW.cuts, dict(path="gluon", ring=False)),
    "hopper": Subject(HOPPER.kernel, "triton_mla_fast", HOPPER.cuts, dict(path="hopper")),
    "portable": Subject(PORTABLE.kernel, "triton_mla_fast", PORTABLE.cuts, dict(path="portable")),
    "triton_mla": Subject("_verify_extend_kernel", "triton_mla", ("no_mma", "no_softmax")),
}


def variants(subject: Subject) -> dict[str, dict]:
    """The variants whose switches the kernel has."""
    return {name: cut for name, cut in VARIANTS.items() if set(cut) <= set(subject.cuts)}


def _int_list(option: str, text: str, parse=int) -> list[int]:
    try:
        values = [parse(v) for v in text.split(",") if v.strip()]
    except (ValueError, WorkloadError) as exc:
        raise SystemExit(f"removal_cuts: {option} {text!r}: {exc}") from None
    if not values or min(values) <= 0:
        raise SystemExit(f"removal_cuts: {option} {text!r}: a comma list of positive integers expected")
    return values


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel", default=",".join(SUBJECTS), help=f"comma list of {', '.join(SUBJECTS)} (default all)")
    ap.add_argument("--ctx", default="131072", help="ctx_len, comma list (default 131072; 128k works)")
    ap.add_argument("--heads", default="8,64", help="comma list (default 8,64)")
    ap.add_argument("--page-size", default="64,1", help="comma list (default 64,1)")
    ap.add_argument("--out", type=Path, help="write <kernel>.json (roofline-removal/1) per kernel into this folder")
    args = ap.parse_args(argv)
    args.kernel = [k.strip() for k in args.kernel.split(",") if k.strip()]
    unknown = [k for k in args.kernel if k not in SUBJECTS]
    if unknown or not args.kernel:
        raise SystemExit(f"removal_cuts: --kernel {','.join(unknown) or '(none)'}: known: {', '.join(SUBJECTS)}")
    args.ctx = _int_list("--ctx", args.ctx, parse_ctx_len)
    args.heads = _int_list("--heads", args.heads)
    args.page_size = _int_list("--page-size", args.page_size)
    if args.out and args.out.exists() and not args.out.is_dir():
        raise SystemExit(f"removal_cuts: --out {args.out}: not a folder")
    return args


def measure(args) -> dict[str, list[dict]]:
    """{kernel --kernel name: rows}, printing each row as it is timed."""
    device = torch.device("cuda")
    device_name, sm_count, arch = device_facts(device)
    rows: dict[str, list[dict]] = {k: [] for k in args.kernel}
    for ctx_len in args.ctx:
        for page_size in args.page_size:
            read_ms = None
            for heads in args.heads:
                w = VerifyWorkload(ctx_len=ctx_len, heads=heads, page_size=page_size)
                inp = build_inputs(w, device="cuda")
                if read_ms is None:  # the KV bytes do not depend on heads (one latent cache)
                    kv = inp.kv_cache.view(-1)[: w.kv_tokens * w.head_dim]
                    read_ms = graph_replay_ms(lambda kv=kv: stream_read(kv))
                point = dict(ctx_len=ctx_len, heads=heads, page_size=page_size)
                for name in args.kernel:
                    subject = SUBJECTS[name]
                    reason = subject.skip_reason(w, device_name, sm_count, arch)
                    if reason:
                        print(f"{ctx_len:>8} h{heads:<3} p{page_size:<4} {name:10} skipped: {reason}", flush=True)
                        continue
                    for variant, cut in variants(subject).items():
                        ms = graph_replay_ms(subject.step(inp, cut))
                        rows[name].append(dict(point, variant=variant, graph_ms=ms))
                        print(
                            f"{ctx_len:>8} h{heads:<3} p{page_size:<4} {name:10} {variant:11} {ms:.4f} ms", flush=True
                        )
                    rows[name].append(dict(point, variant=READ, graph_ms=read_ms))
                del inp
                torch.cuda.empty_cache()
    return rows


def removal_doc(subject: Subject, rows: list[dict], device: str, made_by: str) -> dict:
    """One kernel's roofline-removal/1 document (roofline/removal.py reads it)."""
    w = VerifyWorkload()
    return dict(
        format=FORMAT,
        kernel=subject.kernel,
        registered=subject.registered,
        device=device,
        method="CUDA-graph replays of the whole step, medians (read: a bare stream_read of the same KV bytes)",
        made_by=made_by,
        workload=dict(batch=w.batch, q_len=w.q_len, tree_mask=w.tree_mask),
        rows=rows,
    )


def table(rows: dict[str, list[dict]]) -> str:
    """Kernel x workload, ms per variant (- where it has none)."""
    cols = [*VARIANTS, READ]
    lines = [f"{'kernel':22} {'ctx_len':>8} {'heads':>5} {'page':>4} " + " ".join(f"{c:>10}" for c in cols)]
    for name, kernel_rows in rows.items():
        points: dict[tuple, dict[str, float]] = {}
        for r in kernel_rows:
            points.setdefault((r["ctx_len"], r["heads"], r["page_size"]), {})[r["variant"]] = r["graph_ms"]
        for (ctx_len, heads, page_size), ms in points.items():
            cells = " ".join(f"{ms[c]:>10.4f}" if c in ms else f"{'-':>10}" for c in cols)
            lines.append(f"{SUBJECTS[name].kernel:22} {ctx_len:>8} {heads:>5} {page_size:>4} {cells}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not torch.cuda.is_available():
        raise SystemExit("removal_cuts: needs a CUDA GPU (sm_90 for ring, seesaw and hopper); torch sees none")
    rows = measure(args)
    if args.out:  # the format `roofline analyze --removal FILE` reads (roofline/removal.py)
        args.out.mkdir(parents=True, exist_ok=True)
        device = torch.cuda.get_device_name()
        made_by = "PYTHONPATH=. python " + " ".join(sys.argv)
        for name, kernel_rows in rows.items():
            if kernel_rows:
                path = args.out / f"{SUBJECTS[name].kernel}.json"
                doc = removal_doc(SUBJECTS[name], kernel_rows, device, made_by)
                path.write_text(json.dumps(doc, indent=1) + "\n")
                print(f"wrote {path}")
    print(table(rows))


if __name__ == "__main__":
    main()
