"""The fast kernel's combine on the serving rows, on the GPU machine, in one call.

    python benchmarks/combine_bench.py --out DIR [--old OLD_COMBINE.py] [--rows skew16,...] [--cuts skew16]
        [--variants default,bd64,t4096,...]

1. check: triton_mla_fast (as it ships) against torch_ref at full size, bf16, on each row (kernels.check).
2. time, per row, on one set of rotated inputs (profiler.bench.rotated_input_sets), by the bench's rotated method
   (profiler.bench.rotated_samples_ms, the median of 30 samples): `read` (a bare read of the row's KV bytes),
   `split` (the split launch alone), `step` (split + this tree's combine), and with --old the step with the
   combine of OLD_COMBINE.py (an earlier kernels/combine.py, launched as it was: one program per row and
   BLOCK_D columns, BLOCK_S splits a step); `combine` and `old combine`: the merge alone, CUDA-graph replays of
   its one launch over the partials one split run wrote (warm in the L2, as after the split kernel).
3. --cuts ROWS: the step with each removal switch (no_mma, no_softmax, no_gather, both of the first two, and
   no_combine: the step without its merge launch), timed as `step`.
4. --variants: the combine in other launch shapes (kernels.launch_spec.CombineShape names: `bd64w4` is 64
   columns a program at 4 warps; keys bd, w, r, s, k, t; `default` the shipping shape), per row: each checked
   first against a torch merge of the same partials in fp32 (`err`, the max abs error) and against the shipping
   combine's output (`vs default`), then timed as `combine` (the merge alone) and `step` (split + this combine);
   `+split` is step - split, what the merge adds to the step.

Writes DIR/combine.json and prints a table last (the variants' table after the rows').
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path

import torch

from kernels.batches import SERVING, SERVING_MASK, SERVING_PAGE_SIZE
from kernels.check import check_kernel
from kernels.fast.common import FAST_MIN_SPLIT_LEN
from kernels.fast.run import _plan, partials, schedule_tables, triton_mla_fast
from kernels.launch_spec import CombineShape, LaunchSpec, device_facts, next_power_of_2, reshaped_combine
from kernels.plan import cdiv
from kernels.reference import lse_merge
from profiler.bench import graph_replay_ms, read_kv, rotated_input_sets, rotated_samples_ms

ROWS = {r.name: r.workload(SERVING_PAGE_SIZE, SERVING_MASK) for r in SERVING}
CUTS = {
    "no-mma": dict(no_mma=True),
    "no-softmax": dict(no_softmax=True),
    "no-gather": dict(no_gather=True),
    "loads-only": dict(no_mma=True, no_softmax=True),
    "no-combine": dict(no_combine=True),
}


def median_us(call, sets) -> float:
    return statistics.median(rotated_samples_ms(call, sets).samples_ms) * 1000


def plan_of(inp, **launch):
    w = inp.workload
    name, sm_count, arch = device_facts(inp.q.device)
    return _plan(w, arch, sm_count, name, None, FAST_MIN_SPLIT_LEN, "gluon", tuple(sorted(launch.items())))


def split_launch(inp, **launch):
    """The split launch as triton_mla_fast makes it: (plan, part_o, part_lse, out)."""
    w = inp.workload
    plan = plan_of(inp, **launch)
    part_o, part_lse = partials(inp, plan.split)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    if plan.schedule is None:
        plan.path.launch(inp, plan.split, part_o, part_lse)
    else:
        items, _ = schedule_tables(plan.schedule, inp.q.device, plan.combine)
        plan.path.launch(inp, plan.split, part_o, part_lse, items, out)
    return plan, part_o, part_lse, out


class OldCombine:
    """An earlier kernels/combine.py's kernel, launched as its combine_spec / combine_jobs_spec shaped it."""

    def __init__(self, path: Path):
        spec = importlib.util.spec_from_file_location("old_combine", path)
        self.module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.module)
        self._jobs: dict = {}

    def merge(self, plan, part_o, part_lse, out):
        d = part_o.shape[-1]
        if plan.schedule is None:
            splits, rows = plan.split.grid[1], part_o.shape[1]
            extra, job_rows, n_rows = {}, 0, rows
        else:
            if not plan.schedule.jobs:
                return out
            splits, rows = plan.schedule.max_slots, plan.split.int_args["total_rows"]
            key = id(plan.schedule)
            if key not in self._jobs:
                self._jobs[key] = torch.tensor(plan.schedule.jobs, dtype=torch.int32, device=part_o.device)
            extra, job_rows, n_rows = {"Jobs": self._jobs[key]}, rows, len(plan.schedule.jobs) * rows
        block_s = min(next_power_of_2(splits), 256)
        block_d = min(max(16, min(64, 8192 // block_s)), d)
        self.module._combine_kernel[(n_rows, cdiv(d, block_d))](
            part_o,
            part_lse,
            out,
            rows,
            splits,
            D=d,
            BLOCK_D=block_d,
            BLOCK_S=block_s,
            PDL=part_o.is_cuda,  # as its combine_splits launched it on the H200 (the interpreter has no PDL)
            JOB_ROWS=job_rows,
            num_warps=4,
            num_stages=3,
            **({"launch_pdl": True} if part_o.is_cuda else {}),
            **extra,
        )
        return out

    def step(self, inp):
        plan, part_o, part_lse, out = split_launch(inp)
        return self.merge(plan, part_o, part_lse, out)


def new_merge(plan, part_o, part_lse, out, inp, spec: LaunchSpec | None = None):
    """This tree's combine over the partials, in the plan's launch shape or `spec`'s (a reshaped_combine of it)."""
    from kernels.combine import combine_splits

    spec = spec or plan.combine
    if spec is None:
        return out
    if plan.schedule is None:
        return combine_splits(part_o, part_lse, out, spec=spec)
    _, merges = schedule_tables(plan.schedule, inp.q.device, spec)
    return combine_splits(part_o, part_lse, out, spec=spec, jobs=merges)


def torch_merge(plan, part_o, part_lse, out) -> tuple[torch.Tensor, torch.Tensor]:
    """(the merged rows in fp32 by torch, their row numbers in `out` viewed as [rows, v_dim]): every row under
    the uniform schedule, the cut requests' rows under the batch schedule."""
    d = part_o.shape[-1]
    if plan.schedule is None:
        return lse_merge(part_o, part_lse), torch.arange(part_lse.shape[1], device=part_o.device)
    job_rows = plan.combine.constexprs["JOB_ROWS"]
    o, lse = part_o.reshape(-1, job_rows, d), part_lse.reshape(-1, job_rows)
    merged, rows = [], []
    for b, first, slots in plan.schedule.jobs:
        merged.append(lse_merge(o[first : first + slots], lse[first : first + slots]))
        rows.append(torch.arange(b * job_rows, (b + 1) * job_rows, device=part_o.device))
    return torch.cat(merged), torch.cat(rows)


def merge_alone_us(merge) -> float:
    """µs per CUDA-graph replay of the one merge launch `merge()` (its partials already written)."""
    return graph_replay_ms(merge) * 1000


def time_row(name: str, old: OldCombine | None, cuts: bool, log) -> tuple[dict, dict | None]:
    """One row's numbers (µs), and with `cuts` the removal switches' steps."""
    w = ROWS[name]
    sets = rotated_input_sets(w)
    row = dict(row=name, read=median_us(read_kv, sets))
    row["split"] = median_us(lambda inp: split_launch(inp)[3], sets)
    row["step"] = median_us(triton_mla_fast, sets)
    inp = sets[0]
    plan, part_o, part_lse, out = split_launch(inp)
    row["combine"] = merge_alone_us(lambda: new_merge(plan, part_o, part_lse, out, inp))
    row["combine_grid"] = list(plan.combine.grid) if plan.combine else None
    row["partials_mb"] = part_o.numel() * part_o.element_size() / 1e6
    if old is not None:
        old.step(inp)  # compiled, and its job table made, outside the timing's graph capture
        torch.cuda.synchronize()
        row["old_step"] = median_us(old.step, sets)
        row["old_combine"] = merge_alone_us(lambda: old.merge(plan, part_o, part_lse, out))
        a = old.merge(plan, part_o, part_lse, out.clone()).float()
        b = new_merge(plan, part_o, part_lse, out.clone(), inp).float()
        row["old_new_max_diff"] = float((a - b).abs().max())
    log(" ".join(f"{k}={v:.1f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    if not cuts:
        return row, None
    cut = dict(row=name, full=row["step"], read=row["read"], kernel=plan_of(inp, no_mma=True).split.name)
    for variant, kw in CUTS.items():
        cut[variant] = median_us(lambda inp, kw=kw: triton_mla_fast(inp, **kw), sets)
        log(f"cut {name} {variant}: {cut[variant]:.1f} us")
    return row, cut


def time_variants(name: str, shapes: dict[str, CombineShape], log) -> list[dict]:
    """One row's combine in each of `shapes` (by the names asked for): checked (against torch and the shipping
    shape), then timed alone and in the step (µs)."""
    w = ROWS[name]
    sets = rotated_input_sets(w)
    split = median_us(lambda inp: split_launch(inp)[3], sets)
    inp = sets[0]
    plan, part_o, part_lse, out = split_launch(inp)
    if plan.combine is None:
        return []
    jobs = plan.schedule.jobs if plan.schedule is not None else None
    want, rows = torch_merge(plan, part_o, part_lse, out)
    shipped = new_merge(plan, part_o, part_lse, out.clone(), inp).view(-1, part_o.shape[-1])[rows].float()
    res = []
    for label, shape in shapes.items():
        spec = reshaped_combine(plan.combine, shape, jobs)
        got = new_merge(plan, part_o, part_lse, out.clone(), inp, spec).view(-1, part_o.shape[-1])[rows].float()
        err, vs_default = float((got - want).abs().max()), float((got - shipped).abs().max())
        ok = err <= 2e-2 + 2e-2 * float(want.abs().max())  # the output's bf16 rounding, as kernels.check allows

        def step(inp, spec=spec):
            p, o, lse, out = split_launch(inp)
            return new_merge(p, o, lse, out, inp, spec)

        c = spec.constexprs
        r = dict(
            row=name,
            variant=label,
            shape=shape.name,
            grid=list(spec.grid),
            programs=spec.programs,
            warps=spec.num_warps,
            tiles={k: c[k] for k in ("BLOCK_D", "SPLITS", "ROWS", "SHORT", "SHORT_ROWS")},
            err=err,
            vs_default=vs_default,
            ok=ok,
            combine=merge_alone_us(lambda spec=spec: new_merge(plan, part_o, part_lse, out, inp, spec)),
            step=median_us(step, sets),
            split=split,
        )
        r["plus_split"] = r["step"] - split
        res.append(r)
        log(
            f"variant {name} {label} ({shape.name}): grid {tuple(spec.grid)} err {err:.1e} vs default {vs_default:.1e} "
            f"{'ok' if ok else 'FAIL'} combine {r['combine']:.1f} step {r['step']:.1f} +split {r['plus_split']:.1f}"
        )
    return res


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--old", type=Path, help="an earlier kernels/combine.py to time beside this tree's")
    ap.add_argument("--rows", default="skew16,ragged32,even16,b1h8,b1h64,ragged8")
    ap.add_argument("--check", default="skew16,ragged32,even16,b1h8,b1h64")
    ap.add_argument("--cuts", default="skew16")
    ap.add_argument(
        "--variants",
        default="",
        help="combine shapes to time per row instead of the rows' table (kernels.launch_spec.CombineShape names, "
        "comma-separated; `default` the shipping one)",
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    doc = dict(device=torch.cuda.get_device_name(), torch=torch.__version__, checks=[], rows=[], cuts=[], variants=[])
    import triton

    doc["triton"] = triton.__version__
    shapes = {v: CombineShape.parse(v) for v in args.variants.split(",") if v}  # a bad name fails before any work

    def log(msg):
        print(f"[{time.time() - t0:6.1f}s] {msg}", flush=True)

    def save():
        (args.out / "combine.json").write_text(json.dumps(doc, indent=1) + "\n")

    old = OldCombine(args.old) if args.old else None
    for name in [n for n in args.check.split(",") if n]:
        r = check_kernel("triton_mla_fast", ROWS[name], device="cuda", dtype="bf16")
        doc["checks"].append(dict(row=name, rel_err=r.rel_err, unwritten=r.unwritten, ok=r.ok))
        log(f"check {name:9s} rel_err {r.rel_err:.2e} unwritten {r.unwritten} {'ok' if r.ok else 'FAIL'}")
        torch.cuda.empty_cache()
    save()
    for name in [n for n in args.rows.split(",") if n]:
        if shapes:
            doc["variants"] += time_variants(name, shapes, log)
        else:
            row, cut = time_row(name, old, name in args.cuts.split(","), log)
            doc["rows"].append(row)
            if cut:
                doc["cuts"].append(cut)
        save()
        torch.cuda.empty_cache()
    if doc["rows"]:
        cols = ["read", "split", "step", "combine", "old_step", "old_combine"]
        print("row        " + " ".join(f"{c:>11}" for c in cols) + "  (us, median; combine: the merge alone)")
        for r in doc["rows"]:
            print(f"{r['row']:10s} " + " ".join(f"{r[c]:>11.1f}" if c in r else f"{'-':>11}" for c in cols))
    for c in doc["cuts"]:
        print(c)
    if doc["variants"]:
        print(
            f"{'row':9s} {'variant':16s} {'grid':>10s} {'tiles (BD,S,R,SHORT,SR)':>24s} {'err':>8s} {'vs dflt':>8s} "
            f"{'check':>5s} {'combine':>8s} {'step':>7s} {'split':>7s} {'+split':>7s}  (us, median)"
        )
        for r in doc["variants"]:
            tiles = ",".join(str(v) for v in r["tiles"].values())
            grid = "x".join(str(g) for g in r["grid"])
            print(
                f"{r['row']:9s} {r['variant']:16s} {grid:>10s} {tiles:>24s} {r['err']:8.1e} {r['vs_default']:8.1e} "
                f"{'ok' if r['ok'] else 'FAIL':>5s} {r['combine']:8.1f} {r['step']:7.1f} {r['split']:7.1f} "
                f"{r['plus_split']:7.1f}"
            )
    log("done")
    return 0 if all(c["ok"] for c in doc["checks"]) and all(v["ok"] for v in doc["variants"]) else 1


if __name__ == "__main__":
    sys.exit(main())
