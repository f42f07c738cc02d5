"""The registered kernels `triton_mla_fast` and `triton_mla_fast_graph`: plan the step
(kernels.fast.paths.plan_fast), launch the split path's kernel into partials, merge them by LSE
(kernels/combine.py).
"""

from __future__ import annotations

from collections import OrderedDict
from functools import cache, lru_cache

import torch

from kernels import timeline_layout
from kernels.combine import combine_splits
from kernels.fast.common import FAST_MIN_SPLIT_LEN, ITEM_FIELDS, BatchSchedule
from kernels.fast.paths import FastPlan, plan_fast
from kernels.graph import GraphedKernel
from kernels.inputs import VerifyInputs
from kernels.launch_spec import MERGE_FIELDS, LaunchSpec, device_facts, merge_table
from kernels.plan import code_path
from kernels.spec import check_workload

PART_DTYPES = {"*fp32": torch.float32, "*bf16": torch.bfloat16, "*fp16": torch.float16}


def check_shapes(inp: VerifyInputs) -> None:
    check_workload("triton_mla_fast", inp.workload)  # the check the CLI's model and check run too


def partials(inp: VerifyInputs, split: LaunchSpec) -> tuple[torch.Tensor, torch.Tensor]:
    """Empty (part_o, part_lse) for the split kernel's grid, part_o in the spec's dtype."""
    w = inp.workload
    splits, total_rows = split.grid[1], split.int_args["total_rows"]
    dev = inp.q.device
    part_o = torch.empty(splits, total_rows, w.v_dim, dtype=PART_DTYPES[split.signature["PartO"]], device=dev)
    return part_o, torch.empty(splits, total_rows, dtype=torch.float32, device=dev)


@cache
def _gluon_importable() -> bool:
    try:
        import kernels.fast.gluon  # noqa: F401  # lazy: a Triton without Gluon still runs the portable path
    except (ImportError, AttributeError):
        return False
    return True


def gluon_runs_on(device: torch.device) -> bool:
    """Whether the Gluon split kernels can run on `device`: a CUDA sm_90 GPU and an importable Gluon."""
    return _gluon_runs_on(str(device))


@cache
def _gluon_runs_on(device: str) -> bool:  # asked before every launch: answered once per device
    dev = torch.device(device)
    return dev.type == "cuda" and torch.cuda.get_device_capability(dev)[0] == 9 and _gluon_importable()


@lru_cache(maxsize=64)
def _plan(
    w, arch: str, sm_count: int, device_name: str, split_len, min_split_len: int, path, launch: tuple
) -> FastPlan:
    """plan_fast, remembered: the same step shape is planned once (host time on every launch)."""
    return plan_fast(
        w,
        arch=arch,
        sm_count=sm_count,
        device_name=device_name,
        split_len=split_len,
        min_split_len=min_split_len,
        path=path,
        **dict(launch),
    )


def triton_mla_fast(
    inp: VerifyInputs,
    split_len: int | None = None,
    min_split_len: int = FAST_MIN_SPLIT_LEN,
    path: str | None = None,
    stamps: dict | None = None,
    **launch,
) -> torch.Tensor:
    """Split-KV verify with all query rows of a request sharing each KV tile.

    `path`: "gluon", "hopper" or "portable"; default kernels.plan.code_path for this GPU's architecture.
    Launch parameters (kernels.fast.common.FastConfig): `launch`, else the path's defaults for this GPU
    and architecture (tuned entries in kernels/data/tuned.json, else kernels.fast.common's tables).
    `stamps`: a dict to run the in-kernel timeline with (kernels/fast/timeline.py): its buffers are made in it on
    the first call (`split`, `combine`) with the plan's `kernel`, `grid` and `stamp_tiles`, and reused after.
    """
    check_shapes(inp)
    w = inp.workload
    plan = launch_plan(inp, split_len, min_split_len, path, **launch)
    part_o, part_lse = partials(inp, plan.split)
    out = torch.empty(w.batch * w.q_len, w.heads, w.v_dim, dtype=inp.q.dtype, device=inp.q.device)
    split_kw, combine_kw = ({}, {}) if stamps is None else stamp_buffers(stamps, plan, inp.q.device)
    if plan.schedule is None:  # the uniform schedule
        plan.path.launch(inp, plan.split, part_o, part_lse, **split_kw)
        if plan.combine is None:  # no_combine
            return out
        return combine_splits(part_o, part_lse, out, spec=plan.combine, **combine_kw)
    items, jobs = schedule_tables(plan.schedule, inp.q.device, plan.combine)
    plan.path.launch(inp, plan.split, part_o, part_lse, items, out, **split_kw)
    if plan.combine is not None:  # some request was cut: merge its partials (the others wrote their rows)
        combine_splits(part_o, part_lse, out, spec=plan.combine, jobs=jobs, **combine_kw)
    out._schedule_tables = (items, jobs)  # a CUDA graph that keeps `out` (kernels.graph) keeps the tables it reads
    return out


def launch_plan(
    inp: VerifyInputs,
    split_len: int | None = None,
    min_split_len: int = FAST_MIN_SPLIT_LEN,
    path: str | None = None,
    **launch,
) -> FastPlan:
    """The plan triton_mla_fast launches on `inp` (its device and workload; the arguments as triton_mla_fast's)."""
    w = inp.workload
    device_name, sm_count, arch = device_facts(inp.q.device)
    if path is None:
        path = code_path("triton_mla_fast", arch, w.page_size, w.max_kv_len)
        if path == "gluon" and not gluon_runs_on(inp.q.device):
            path = "portable"  # the interpreter, or a Triton without Gluon: the portable kernel
    elif path == "gluon" and not gluon_runs_on(inp.q.device):
        raise ValueError("the gluon path needs an sm_90 GPU and a Triton with Gluon (not the interpreter)")
    return _plan(w, arch, sm_count, device_name, split_len, min_split_len, path, tuple(sorted(launch.items())))


def plan_record(inp: VerifyInputs) -> dict:
    """The default plan of triton_mla_fast on `inp` as JSON (what the harness records in a run's plan.json)."""
    return plan_json(launch_plan(inp))


def plan_json(plan: FastPlan) -> dict:
    """A FastPlan as JSON: the split path, the schedule and its split length, each launch's grid, and the batch
    schedule's work items (request, lo, hi, ctx_len, slot), in launch order."""
    return {
        "path": plan.path.path,
        "schedule": "uniform" if plan.schedule is None else "batch",
        "split_len": plan.split.int_args["split_len"] if plan.schedule is None else plan.schedule.split_len,
        "launches": [
            {"kernel": s.name, "grid": list(s.grid), "num_warps": s.num_warps, "int_args": dict(s.int_args)}
            for s in plan.launches
        ],
        "items": [list(item) for item in plan.schedule.items] if plan.schedule is not None else None,
    }


def stamp_buffers(stamps: dict, plan: FastPlan, device: torch.device) -> tuple[dict, dict]:
    """The split and combine launches' keywords for the in-kernel timeline, its buffers made in `stamps` once
    (zeros: a slot left at zero was not written). Only the Gluon paths stamp; the others run as they are."""
    if "split" not in stamps:
        split, schedule = plan.split, plan.schedule
        longest = schedule.split_len if schedule is not None else split.int_args["split_len"]
        q_len = split.constexprs.get("Q_LEN", 0)  # the draft tokens past a split's prefix tokens
        tiles = timeline_layout.stamp_tiles_for(-(-(longest + q_len) // split.constexprs["BLOCK_N"]) + 1)
        stamps.update(
            kernel=split.name,
            schedule="stagger-ahead"
            if split.constexprs.get("SCORES_AHEAD")
            else timeline_layout.SCHEDULE_KERNELS.get(split.name),
            grid=tuple(split.grid),
            stamp_tiles=tiles,
            split=torch.zeros(
                split.programs, timeline_layout.ROLES, timeline_layout.slots(tiles), dtype=torch.int64, device=device
            ),
            combine_kernel=plan.combine.name if plan.combine is not None else None,
            combine_grid=tuple(plan.combine.grid) if plan.combine is not None else None,
            combine=torch.zeros(
                plan.combine.programs if plan.combine is not None else 1,
                timeline_layout.COMBINE_SLOTS,
                dtype=torch.int64,
                device=device,
            ),
        )
    gluon = plan.path.path == "gluon"
    split_kw = {"stamps": (stamps["split"], stamps["stamp_tiles"])} if gluon else {}
    return split_kw, {"stamps": stamps["combine"]}


_TABLES: OrderedDict = OrderedDict()


def schedule_tables(
    schedule: BatchSchedule, device: torch.device, combine: LaunchSpec | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The batch schedule's item table and its combine's merge table (int32; kernels.launch_spec.merge_table of its
    jobs for the `combine` launch: None, none) on `device`, made once per schedule and combine tiles (the first
    call, outside any CUDA graph capture) and kept for the last 256: a step that is replayed or captured again
    finds them, as FlashMLA's metadata is computed once per batch. (A graph that outlives the cache entry still
    has them: triton_mla_fast hangs them on the output it returns, which kernels.graph keeps.)"""
    tiles = () if combine is None else tuple(sorted(combine.constexprs.items()))
    key = (id(schedule), str(device), tiles)  # the planned schedule object (_plan is cached): no hash of its items
    hit = _TABLES.get(key)
    if hit is None or hit[0] is not schedule:
        same = (schedule, str(device), tiles)  # another plan of the same batch: its tables (no copy during a capture)
        hit = _TABLES.get(same)
        if hit is None:
            items = torch.tensor(schedule.items, dtype=torch.int32).reshape(-1, len(ITEM_FIELDS))
            merged = combine is not None and combine.constexprs.get("JOB_ROWS") and schedule.jobs
            merges = merge_table(schedule.jobs, combine) if merged else [(0,) * len(MERGE_FIELDS)]
            jobs = torch.tensor(merges, dtype=torch.int32).reshape(-1, len(MERGE_FIELDS))
            hit = _TABLES[same] = (schedule, items.to(device), jobs.to(device))
        _TABLES[key] = hit  # (holding the schedule keeps its id)
        while len(_TABLES) > 256:
            _TABLES.popitem(last=False)
    else:
        _TABLES.move_to_end(key)
    return hit[1], hit[2]


triton_mla_fast_graph = GraphedKernel(triton_mla_fast)
triton_mla_fast_graph.__doc__ = "triton_mla_fast with split + combine replayed as one CUDA graph (one launch per step)."
