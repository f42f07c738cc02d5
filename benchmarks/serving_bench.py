"""The fast kernel on serving batches: the batch schedule against the uniform one, FlashMLA and
a bare read of the batch's bytes, on the GPU machine, in one call.

    python benchmarks/serving_bench.py --out DIR [--search] [--budget-s 400] [--only ROW,...]
    ncu --clock-control none --metrics sm__cycles_active.max,sm__cycles_active.avg -k regex:gluon \
        python benchmarks/serving_bench.py --one ROW,...        # each row's step twice, nothing else

1. check: triton_mla_fast (the batch schedule, the default) against torch_ref at full size on every row below and
   on tree-mask and page-1 variants of the serving rows (kernels.check.check_kernel: fresh random inputs).
2. time: per row one set of rotated inputs (profiler.bench.rotated_input_sets: at least 4 sets, together at
   least 4x the L2) shared by every reader, each timed by the bench's rotated method
   (profiler.bench.rotated_samples_ms: a CUDA graph runs the reader on every set in turn, replayed back to back,
   no L2 flush; 30 samples, the median per step): `read` (profiler.bench.read_kv: a bare read of the batch's KV
   bytes, what time_read times), `flashmla` (chain mask, page 64), `uniform` (triton_mla_fast,
   schedule="uniform": the schedule before, grid (m_blocks, splits, batch) from the longest request), `batch`
   (triton_mla_fast as it ships), and `batch split` (the batch schedule's split launch alone: the rest of
   `batch` is the combine).
3. --search: the batch schedule's knobs (item_cost, max_waves, min_split_len) at the serving rows, each distinct
   schedule timed on the same inputs.

Writes DIR/serving.json (every number, the schedules' item counts and estimates) and prints a short table last.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import sys
import time
from pathlib import Path

import torch

from kernels.check import check_kernel
from kernels.fast.common import FAST_MIN_SPLIT_LEN
from kernels.fast.paths import plan_fast
from kernels.fast.run import _plan, partials, schedule_tables, triton_mla_fast
from kernels.flashmla import flashmla, unavailable, unsupported
from kernels.launch_spec import device_facts
from kernels.plan import cdiv
from kernels.spec import VerifyWorkload
from profiler.bench import read_kv, rotated_input_sets, rotated_samples_ms


def uniform_lens(seed: int, n: int, lo: int, hi: int) -> tuple[int, ...]:
    """`n` prefixes drawn uniformly from [lo, hi] (random.Random(seed)), as the rows below are made."""
    rng = random.Random(seed)
    return tuple(rng.randint(lo, hi) for _ in range(n))


def workload(ctx_lens, heads: int, q_len: int, page_size: int = 64, mask: str = "chain") -> VerifyWorkload:
    ctx_lens = tuple(ctx_lens)
    return VerifyWorkload(
        ctx_len=ctx_lens[0],
        batch=len(ctx_lens),
        ctx_lens=ctx_lens if len(ctx_lens) > 1 else None,
        heads=heads,
        q_len=q_len,
        page_size=page_size,
        tree_mask=mask,
    )


# The rows (chain mask, page 64), then batch 1 as the README's bench runs it.
ROWS = {
    "b32-h16-q2-1k-32k": workload(uniform_lens(1, 32, 1024, 32768), 16, 2),
    "b8-h8-q9-4k-128k": workload(uniform_lens(2, 8, 4096, 131072), 8, 9),
    "b16-h16-q4-skewed": workload((131072,) + (2048,) * 15, 16, 4),
    "b1-h8-q9-128k": workload((131072,), 8, 9),
    "b1-h64-q9-128k": workload((131072,), 64, 9),
    "b1-h8-q9-8k": workload((8192,), 8, 9),
    "b1-h16-q2-32k": workload((32768,), 16, 2),
}
# Other launches of the batch schedule timed beside the default, per row (triton_mla_fast keywords): the ring or
# the seesaw for padded rows (the default there: the staggered schedule at page 64), bf16 partials, the other
# schedules of whole 64-row blocks.
VARIANTS = {
    "b32-h16-q2-1k-32k": {  # the ring (ring_padded) and the seesaw, against the default stagger
        "ring_padded": dict(stagger=False),
        "seesaw": dict(stagger=False, ring_padded=False),
        "bf16 partials": dict(partials="input"),
    },
    "b8-h8-q9-4k-128k": {"bf16 partials": dict(partials="input")},
    "b16-h16-q4-skewed": {
        "ring_whole": dict(stagger=False),
        "seesaw": dict(ring=False, stagger=False),
        "bf16 partials": dict(partials="input"),
        "ring_whole bf16": dict(stagger=False, partials="input"),
    },
    "b1-h8-q9-8k": {"ring_padded": dict(ring_padded=True), "seesaw": dict(stagger=False)},
    "b1-h16-q2-32k": {"seesaw": dict(stagger=False)},
}
SERVING = ("b32-h16-q2-1k-32k", "b8-h8-q9-4k-128k", "b16-h16-q4-skewed")
# Full-size checks: every row, and the serving rows with the tree mask at page 1 and page 64 ("all"); the
# variants' launches, tree mask, pages 1 and 64 ("variants"). (workload, triton_mla_fast keywords)
CHECKS = {
    **{k: (w, {}) for k, w in ROWS.items()},
    **{f"{k}-tree-p1": (dataclasses.replace(ROWS[k], tree_mask="tree", page_size=1), {}) for k in SERVING},
    **{f"{k}-tree-p64": (dataclasses.replace(ROWS[k], tree_mask="tree"), {}) for k in SERVING},
}
VARIANT_CHECKS = {
    f"{row}-{label}-tree-p{page}": (dataclasses.replace(ROWS[row], tree_mask="tree", page_size=page), kw)
    for row, variants in VARIANTS.items()
    for label, kw in variants.items()
    for page in (1, 64)
}
SEARCH = dict(item_cost=(0.0, 0.5, 1.0, 2.0, 4.0, 8.0), max_waves=(1.0, 2.0, 4.0, 8.0), min_split_len=(128, 256, 512))
SEARCH_SPLIT_LEN = (512, 1024, 2048, 4096)  # pieces of one fixed length (plan_batch's split_len), every request


def median_us(call, sets) -> float:
    return statistics.median(rotated_samples_ms(call, sets).samples_ms) * 1000


def split_only(inp, **launch):
    """The batch schedule's split launch of triton_mla_fast alone (its partials and direct rows; no combine), as
    triton_mla_fast plans it (the same cached plan, so the same item table, made before the capture)."""
    w = inp.workload
    name, sm_count, arch = device_facts(inp.q.device)
    plan = _plan(w, arch, sm_count, name, None, FAST_MIN_SPLIT_LEN, "gluon", tuple(sorted(launch.items())))
    part_o, part_lse = partials(inp, plan.split)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    items, _ = schedule_tables(plan.schedule, inp.q.device)
    plan.path.launch(inp, plan.split, part_o, part_lse, items, out)
    return out


def schedule_facts(w: VerifyWorkload, **launch) -> dict:
    name, sm_count, arch = device_facts("cuda")
    plan = plan_fast(w, arch, sm_count, name, **launch)
    s = plan.schedule
    facts = dict(kernel=plan.split.name, grid=list(plan.split.grid), split_len=plan.split.int_args["split_len"])
    if s is not None:
        slots = sm_count // plan.split.grid[0]
        facts.update(
            items=len(s.items),
            jobs=len(s.jobs),
            max_slots=s.max_slots,
            makespan_tiles=s.makespan,
            ideal_tiles=sum(cdiv(n, 64) for n in w.kv_lens) / slots + plan.config.item_cost,
            min_item=min(hi - lo for _, lo, hi, _, _ in s.items),
            max_item=max(hi - lo for _, lo, hi, _, _ in s.items),
        )
    return facts


def check_all(log, checks: dict) -> list[dict]:
    out = []
    for name, (w, kw) in checks.items():
        r = check_kernel("triton_mla_fast", dataclasses.replace(w, seed=21), device="cuda", **kw)
        out.append(dict(row=name, rel_err=r.rel_err, unwritten=r.unwritten, ok=r.ok))
        log(f"check {name:34s} rel_err {r.rel_err:.2e} unwritten {r.unwritten} {'ok' if r.ok else 'FAIL'}")
        torch.cuda.empty_cache()
    return out


def time_row(name: str, w: VerifyWorkload, log, search: bool, deadline: float) -> dict:
    sets = rotated_input_sets(w)
    row = dict(
        row=name,
        workload=w.to_dict(),
        kv_bytes=w.kv_tokens * w.token_bytes,
        input_sets=len(sets),
        schedule=schedule_facts(w),
        uniform=schedule_facts(w, schedule="uniform"),
    )
    readers = {"read": read_kv}
    if unavailable() is None and unsupported(w) is None:
        readers["flashmla"] = flashmla
    readers["uniform"] = lambda inp: triton_mla_fast(inp, schedule="uniform")
    readers["batch"] = triton_mla_fast
    readers["batch split"] = split_only
    for label, kw in VARIANTS.get(name, {}).items():
        readers[label] = lambda inp, kw=kw: triton_mla_fast(inp, **kw)
    for reader, call in readers.items():
        try:
            row[f"{reader}_us"] = median_us(call, sets)
        except Exception as exc:  # keep the table: one failing reader must not lose the rest
            row[f"{reader}_us"] = float("nan")
            row[f"{reader}_error"] = f"{type(exc).__name__}: {exc}"[:300]
        log(f"time {name:22s} {reader:12s} {row[f'{reader}_us']:9.1f} us")
    if search and name in SERVING:
        row["search"] = search_row(w, sets, log, deadline)
    del sets
    torch.cuda.empty_cache()
    return row


def search_row(w: VerifyWorkload, sets, log, deadline: float) -> list[dict]:
    """Each distinct batch schedule the knobs give, timed on the row's inputs (the default's knobs first)."""
    _, sm_count, arch = device_facts("cuda")
    seen, out = {}, []
    combos = [
        dict(item_cost=c, max_waves=m, min_split_len=s)
        for s in SEARCH["min_split_len"]
        for c in SEARCH["item_cost"]
        for m in SEARCH["max_waves"]
    ] + [dict(split_len=n) for n in SEARCH_SPLIT_LEN]
    for kw in combos:
        sched = plan_fast(w, arch, sm_count, **kw).schedule
        key = sched.items
        if key in seen:
            seen[key]["knobs"].append(kw)
            continue
        entry = dict(
            knobs=[kw],
            items=len(sched.items),
            jobs=len(sched.jobs),
            split_len=sched.split_len,
            makespan_tiles=sched.makespan,
            us=float("nan"),
        )
        seen[key] = entry
        out.append(entry)
        if time.monotonic() > deadline:
            entry["skipped"] = "past the time budget"
            continue
        entry["us"] = median_us(lambda inp, kw=kw: triton_mla_fast(inp, **kw), sets)
        log(f"search {w.batch}x h{w.heads}: {kw} items {entry['items']} -> {entry['us']:.1f} us")
    return out


def spills(log) -> list[dict]:
    """Registers and spills of every split and combine kernel this run compiled (the JIT caches of
    kernels/fast/*.py and kernels/combine.py, as the machine's Triton built them: no extra compile), with the
    constexprs that tell them apart (ITEMS: the batch schedule)."""
    from kernels.combine import _combine_kernel
    from kernels.fast import hopper, portable

    fns = [portable._fast_split_kernel, hopper._hopper_split_kernel, _combine_kernel]
    try:
        from kernels.fast import ring, seesaw

        fns += [seesaw._gluon_seesaw_kernel, ring._gluon_ring_kernel]
    except ImportError:
        pass
    keep = ("HEADS", "Q_LEN", "PAGE_SIZE", "TAIL_M", "STAGGER", "ASYNC_GATHER", "ITEMS", "BLOCK_S", "JOB_ROWS")
    out = []
    for fn in fns:
        for cache in getattr(fn, "device_caches", {}).values():
            for kernel in (cache[0] if isinstance(cache, tuple) else cache).values():
                try:
                    kernel._init_handles()
                except Exception:  # noqa: BLE001 (already loaded, or an API of another release)
                    pass
                src, consts = getattr(kernel, "src", None), {}
                raw = getattr(src, "constexprs", None) or getattr(src, "constants", None) or {}
                names = list(getattr(getattr(src, "fn", None), "arg_names", []))
                for k, v in dict(raw).items():
                    idx = k[0] if isinstance(k, tuple) and k else k
                    name = names[idx] if isinstance(idx, int) and idx < len(names) else str(idx)
                    if name in keep:
                        consts[name] = v if isinstance(v, (int, float, bool, str, type(None))) else str(v)
                entry = dict(
                    kernel=kernel.name,
                    registers=getattr(kernel, "n_regs", None),
                    spills=getattr(kernel, "n_spills", None),
                    constexprs=consts,
                )
                out.append(entry)
                log(f"spills {entry['kernel']:22s} {entry['registers']} regs, {entry['spills']} spills, {consts}")
    return out


def table(rows: list[dict]) -> str:
    head = (
        f"{'row':22s} {'KV MB':>7s} {'read':>7s} {'flashmla':>8s} {'uniform':>8s} {'batch':>7s} {'split':>7s} "
        f"{'b/fmla':>6s} {'b/read':>6s} {'u/b':>5s} {'items':>5s} {'est/ideal':>9s}"
    )
    lines = [head]
    for r in rows:
        s = r["schedule"]
        fm = r.get("flashmla_us", float("nan"))
        lines.append(
            f"{r['row']:22s} {r['kv_bytes'] / 1e6:7.1f} {r['read_us']:7.1f} {fm:8.1f} {r['uniform_us']:8.1f} "
            f"{r['batch_us']:7.1f} {r['batch split_us']:7.1f} {r['batch_us'] / fm:6.2f} "
            f"{r['batch_us'] / r['read_us']:6.2f} {r['uniform_us'] / r['batch_us']:5.2f} {s.get('items', 0):5d} "
            f"{s.get('makespan_tiles', 0) / max(s.get('ideal_tiles', 1), 1e-9):9.2f}"
        )
    for r in rows:
        for label in VARIANTS.get(r["row"], {}):
            lines.append(
                f"variant {r['row']}: {label} {r.get(label + '_us', float('nan')):.1f} us (default {r['batch_us']:.1f})"
            )
    for r in rows:
        best = min((e for e in r.get("search", []) if e["us"] == e["us"]), key=lambda e: e["us"], default=None)
        if best:
            lines.append(
                f"search {r['row']}: best {best['us']:.1f} us at {best['knobs'][0]} ({best['items']} items); "
                f"default {r['batch_us']:.1f} us; {len(r['search'])} schedules"
            )
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--one", help="rows (comma-separated) each run twice on one input set, nothing else: for ncu")
    ap.add_argument("--search", action="store_true", help="time the batch schedule's knobs at the serving rows")
    ap.add_argument("--check", choices=("all", "variants", "none"), default="all", help="which full-size checks")
    ap.add_argument("--spills", action="store_true", help="compile each row's split launch (both schedules) for sm_90")
    ap.add_argument("--only", help="comma-separated rows (default: all)")
    ap.add_argument("--budget-s", type=float, default=420.0, help="the search stops past this many seconds")
    args = ap.parse_args(argv)
    if args.one:
        from kernels.inputs import build_inputs

        for name in args.one.split(","):
            inp = build_inputs(ROWS[name], device="cuda")
            for _ in range(2):
                triton_mla_fast(inp)
            torch.cuda.synchronize()
            del inp
        return 0
    if args.out is None:
        ap.error("--out is required")
    t0 = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)

    def log(msg: str) -> None:
        print(f"[{time.monotonic() - t0:6.1f}s] {msg}", flush=True)

    result = dict(device=device_facts("cuda")[0], torch=torch.__version__, min_split_len=FAST_MIN_SPLIT_LEN)
    import triton

    result["triton"] = triton.__version__
    checks = {"all": {**CHECKS, **VARIANT_CHECKS}, "variants": VARIANT_CHECKS, "none": {}}[args.check]
    names = args.only.split(",") if args.only else list(ROWS)
    if args.only:  # the checks of the rows asked for (a check's name starts with its row's)
        checks = {k: v for k, v in checks.items() if any(k.startswith(n) for n in names)}
    result["checks"] = check_all(log, checks)
    result["rows"] = []
    for name in names:
        result["rows"].append(time_row(name, ROWS[name], log, args.search, t0 + args.budget_s))
        (args.out / "serving.json").write_text(json.dumps(result, indent=1))
    if args.spills:
        try:
            result["spills"] = spills(log)
        except Exception as exc:  # noqa: BLE001 (a report, never the run's end)
            log(f"spills: {type(exc).__name__}: {exc}")
        (args.out / "serving.json").write_text(json.dumps(result, indent=1))
    text = table(result["rows"])
    (args.out / "serving.txt").write_text(text + "\n")
    failed = [c["row"] for c in result["checks"] if not c["ok"]]
    print(text)
    print(
        f"checks: {len(result['checks']) - len(failed)} ok, failed: {failed or 'none'}; {time.monotonic() - t0:.0f} s"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
