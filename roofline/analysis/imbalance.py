"""Load imbalance: a few SMs carry the launch while the rest idle (ncu's `sm__cycles_active` max against avg).

`sm__cycles_active` counts the cycles an SM had a warp resident; its .max over its .avg says how much longer the
busiest SM worked than the average one, and 1 - avg / max is the share of the SMs' time in the launch spent idle.
Part of that spread is the grid's shape, whatever the blocks do: a grid of fewer blocks than SMs leaves SMs
without a block (equal blocks: max / avg = SMs / blocks), and a partial last wave leaves some SMs one block more
than others (equal blocks: ceil(waves) / waves, up to 2). `expected` is that part; `excess` = ratio / expected is
what the blocks' own work adds: equal blocks give ~1, blocks of unequal work give more.

The threshold, from every committed H200 capture that holds the counters (tests/fixtures/h200: the corpus,
probes, presets, runs; docs/results/h200-serving-g1 and h200-serving):
- balanced kernels: excess 1.00-1.16 (cuBLAS and cuDNN 1.03-1.04, elementwise and reductions 1.00-1.05,
  FlashMLA's split kernel on the skewed batch 1.03, the fast kernel's split kernel at batch 1 1.02-1.05,
  its batch schedule 1.03-1.08 on the serving rows, the combine kernels 1.07-1.16);
- a partial last wave of equal blocks: the old 64-head fast kernel's 135 blocks on 132 SMs, ratio 1.89,
  excess 0.97 (its grid's shape: a wave tail, not uneven blocks);
- unequal blocks: the fast kernel's uniform grid on a ragged batch of 32 requests (1k-32k), 1.54; on one 128k
  request among fifteen of 2k, 9.6; FlashMLA's combine on that batch, 8.3.
IMBALANCE_EXCESS = 1.3 sits above every balanced capture (1.16) with room for run-to-run spread and below the
smallest uneven one (1.54): past it the blocks' work differs enough that at least 23% of the SMs' time idles
beyond what the grid's shape explains.

A small grid comes first (roofline/analysis/verdict.py): fewer blocks than half the SMs, short launches, and a
grid under SMALL_WAVES waves, where every SM that got a block could hold at least one more: launching more,
smaller blocks is the first fix there and also splits the long ones (FlashMLA's combine on the skewed batch:
128 blocks at 0.19 waves, excess 8.3: "small grid", with the imbalance in its evidence). A pipelined kernel
(one block per SM by design, 0.97 waves on the skewed batch) gets load imbalance before its pipeline cause.

For the project's fast kernel with a known workload, `plan_tail` names the requests whose programs carry the
most, from its launch plan (kernels.fast.paths.plan_fast): the schedule the capture launched is told from its
grid (grid z = the batch: the uniform schedule, (m_blocks, splits, batch); z = 1 on a ragged batch: the batch
schedule, (m_blocks, items, 1)), each program's tokens from the plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass

from kernels.fast.paths import SPLIT_PATHS, plan_fast
from kernels.spec import VerifyWorkload

IMBALANCE_EXCESS = 1.3  # the busiest SM past what the grid's shape explains (module doc: from the captures)
SMALL_WAVES = 0.5  # under this, a grid whose blocks differ is a small grid first (module doc)

ADVICE = (
    "balance the work per block: split the long blocks' work into more, shorter pieces, give every block "
    "near-equal work, or a persistent schedule (one block per SM pulling work items from a queue)"
)
ATTENTION_ADVICE = (
    "balance the splits over the SMs: cut long requests into more splits and give every program near-equal "
    "tokens, not equal splits per request (a schedule computed once per batch, as FlashMLA's get_mla_metadata), "
    "or a persistent kernel pulling work items from a queue"
)
FAST_ADVICE = (
    "launch the batch schedule (schedule='batch', triton_mla_fast's default): the batch's tokens "
    "cut into near-equal items over the SMs, the combine only for the requests it cut"
)


def _num(x) -> float | None:
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


@dataclass(frozen=True)
class Imbalance:
    """How unevenly one launch kept its SMs busy, and how much of it the grid's shape explains."""

    busy_max: float  # cycles the busiest SM had a warp resident
    busy_avg: float
    busy_min: float | None
    sm_count: float | None
    grid: float | None
    waves: float | None
    ratio: float  # busy_max / busy_avg
    expected: float  # the ratio equal blocks give on this grid (module doc)
    excess: float  # ratio / expected: what the blocks' own work adds
    idle_share: float  # 1 - avg / max: the SMs' time in the launch spent idle

    @property
    def uneven(self) -> bool:
        return self.excess >= IMBALANCE_EXCESS

    @property
    def small_grid(self) -> bool:
        """Under SMALL_WAVES waves: a small grid first (module doc)."""
        return self.waves is not None and self.waves < SMALL_WAVES

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        low = f", the idlest {self.busy_min:,.0f}" if self.busy_min is not None else ""
        return (
            f"load imbalance: the busiest SM was busy {self.busy_max:,.0f} cycles, {self.ratio:.1f}x the average "
            f"SM's {self.busy_avg:,.0f}{low} (sm__cycles_active): {100 * self.idle_share:.0f}% of the SMs' time "
            "in this launch is idle"
        )

    def grid_line(self) -> str:
        shape = (
            f"grid of {self.grid:.0f} blocks on {self.sm_count:.0f} SMs"
            if self.grid is not None and self.sm_count is not None
            else "this grid"
        )
        waves = f" ({self.waves:.2f} waves)" if self.waves is not None else ""
        return (
            f"{shape}{waves}: equal blocks would leave the busiest SM {self.expected:.2f}x the average; "
            f"the blocks' own work makes it {self.excess:.1f}x that"
        )


def measure(m: Mapping) -> Imbalance | None:
    """The launch's imbalance from its tidy metrics (sm_busy_cycles_*, grid_size, sm_count, waves_per_sm); None
    where the capture has no busy cycles (reports from before the presets asked for them)."""
    high, avg = _num(m.get("sm_busy_cycles_max")), _num(m.get("sm_busy_cycles_avg"))
    if high is None or avg is None or avg <= 0 or high <= 0:
        return None
    grid, sms, waves = _num(m.get("grid_size")), _num(m.get("sm_count")), _num(m.get("waves_per_sm"))
    ratio = high / avg
    return Imbalance(
        busy_max=high,
        busy_avg=avg,
        busy_min=_num(m.get("sm_busy_cycles_min")),
        sm_count=sms,
        grid=grid,
        waves=waves,
        ratio=ratio,
        expected=(exp := expected_ratio(grid, sms, waves)),
        excess=ratio / exp,
        idle_share=1 - avg / high,
    )


def expected_ratio(grid: float | None, sms: float | None, waves: float | None) -> float:
    """max / avg of SM busy cycles for a grid of equal blocks: SMs over the SMs it reaches under one wave
    (every block resident at once, one SM each at most), ceil(waves) / waves from one wave on (a partial last
    wave: some SMs run one block more); 1 where the grid is not known."""
    if waves is not None and waves >= 1:
        return math.ceil(waves - 1e-9) / waves
    if grid is None or sms is None or grid <= 0:
        return 1.0
    return sms / min(grid, sms)


@dataclass(frozen=True)
class LoadImbalance:
    """Load imbalance as a kernel's latency cause: its evidence and advice."""

    cause: str
    evidence: list[str]
    advice: str
    imbalance: Imbalance


def load_imbalance(m: Mapping, attention: bool = False) -> LoadImbalance | None:
    """Load imbalance as the cause, when the busiest SM runs past what the grid's shape explains by
    IMBALANCE_EXCESS and the grid is not small (SMALL_WAVES); None otherwise. The caller (verdict.classify) has
    already ruled out the causes that come first (a grid of fewer blocks than half the SMs, short launches)."""
    found = measure(m)
    if found is None or not found.uneven or found.small_grid:
        return None
    return LoadImbalance(
        "load imbalance", [found.line(), found.grid_line()], ATTENTION_ADVICE if attention else ADVICE, found
    )


def small_grid_note(m: Mapping) -> str | None:
    """For a small grid whose blocks also differ (SMALL_WAVES), the imbalance as evidence beside its cause."""
    found = measure(m)
    if found is None or not found.uneven or not found.small_grid:
        return None
    return (
        f"its blocks' work differs too: the busiest SM was busy {found.ratio:.1f}x the average "
        f"(equal blocks on this grid: {found.expected:.2f}x; {100 * found.idle_share:.0f}% of the SMs' time idle): "
        "more, smaller blocks would also split the long ones"
    )


# --- the tail of the project's fast kernel, from its launch plan -------------------------------------------

SPLIT_KERNELS = {p.kernel: p.path for p in SPLIT_PATHS}  # as ncu names them -> the path plan_fast takes


@dataclass(frozen=True)
class RequestLoad:
    """One request's share of the split launch: its tokens, its programs, the longest program's tokens."""

    request: int
    tokens: int  # prefix + draft tokens
    programs: int
    longest: int


@dataclass(frozen=True)
class PlanTail:
    """The captured split launch as the plan gives it: the schedule, each request's programs, and the tail."""

    schedule: str  # "uniform" or "batch"
    grid: tuple[int, int, int]
    split_len: int
    programs: int
    empty: int  # programs that carry no tokens (splits past their request's end)
    average: float  # tokens per program
    longest: int
    tail: list[RequestLoad]  # the requests whose longest program carries at least half the longest's tokens
    rest_longest: int  # the longest program of every other request (0: none)
    recorded: bool = False  # the plan is the run's plan.json (the harness's); False: re-planned by today's code

    def to_dict(self) -> dict:
        return asdict(self)

    def line(self) -> str:
        how = (
            f"the uniform schedule, grid {self.grid}: each request cut into {self.grid[1]} splits of "
            f"{self.split_len:,} tokens (the longest request's)"
            if self.schedule == "uniform"
            else f"the batch schedule, grid {self.grid}: {self.grid[1]} items of at most {self.split_len:,} tokens"
        )
        names = ", ".join(f"{r.request} ({r.tokens:,} tokens, {r.programs} programs)" for r in self.tail[:4])
        more = f" and {len(self.tail) - 4} more" if len(self.tail) > 4 else ""
        rest = f"; every other request's longest program carries {self.rest_longest:,}" if self.rest_longest else ""
        empty = f"; {self.empty} of {self.programs} programs carry none" if self.empty else ""
        which = "request" if len(self.tail) == 1 else "requests"
        replanned = "" if self.recorded else f"; {REPLANNED}"
        return (
            f"the tail, by the launch plan ({how}): the longest programs carry {self.longest:,} tokens, "
            f"{self.longest / self.average:.1f}x the average program's {self.average:,.0f}: {which} {names}{more}"
            f"{rest}{empty}{replanned}"
        )


REPLANNED = "the capture records no launch plan (plan.json): re-planned by today's code for its grid"


def plan_tail(
    kernel: str, w: VerifyWorkload, m: Mapping, arch: str, device_name: str | None, recorded: dict | None = None
) -> PlanTail | str | None:
    """The tail of triton_mla_fast's split launch `kernel` (as ncu names it) on `w`: the plan the harness
    `recorded` in the run (plan.json) where it launched this kernel, else the plan of today's code whose grid is the
    captured one (either schedule, and the line says it was re-planned); each program's tokens, the requests that
    carry the most. A line saying why not where no plan gives the captured grid; None for a kernel this does not
    plan (the combine, others')."""
    path = SPLIT_KERNELS.get(kernel)
    if path is None:
        return None
    launch = next((x for x in (recorded or {}).get("launches", []) if x.get("kernel") == kernel), None)
    if launch is not None:
        items = recorded.get("items")
        grid = tuple(launch["grid"])
        return _tail(recorded["schedule"], grid, recorded["split_len"], items, w, recorded=True)
    return _replan(kernel, path, w, m, arch, device_name)


def _replan(kernel: str, path: str, w: VerifyWorkload, m: Mapping, arch: str, device_name: str | None):
    """plan_tail for a capture without its plan: today's plans of both schedules, the one whose grid is captured."""
    sms = _num(m.get("sm_count"))
    if sms is None:
        return None
    dims = tuple(_num(m.get(f"grid_{a}")) for a in "xyz")
    captured = tuple(int(d) for d in dims) if None not in dims else None
    size = _num(m.get("grid_size"))
    tried, found = [], []
    for schedule in ("batch", "uniform"):
        try:
            plan = plan_fast(w, arch, int(sms), device_name=device_name, path=path, schedule=schedule)
        except (ValueError, TypeError):
            continue
        grid = tuple(plan.split.grid)
        tried.append(grid)
        if plan.split.name == kernel and (grid == captured if captured else math.prod(grid) == size):
            found.append((grid, plan))
    if len({g for g, _ in found}) > 1:  # only the size is known, and both schedules' grids have it
        return (
            f"both schedules launch {size:.0f} blocks here ({found[0][0]} and {found[1][0]}) and the capture holds "
            "no grid dimensions (ncu's launch__grid_dim_x/y/z) to tell which ran: the requests behind the tail "
            "are not named"
        )
    if found:
        plan = found[0][1]
        if plan.schedule is None:
            return _tail("uniform", tuple(plan.split.grid), plan.split.int_args["split_len"], None, w)
        return _tail("batch", tuple(plan.split.grid), plan.schedule.split_len, plan.schedule.items, w)
    shown = captured or (f"{size:.0f} blocks" if size is not None else "unknown")
    return (
        f"no launch plan of today gives the captured grid {shown} (plans: {', '.join(map(str, dict.fromkeys(tried)))}): "
        "the kernel's plan has changed since this capture, so the requests behind the tail are not named"
    )


def _tail(schedule: str, grid: tuple, split_len: int, items, w: VerifyWorkload, recorded: bool = False) -> PlanTail:
    """The programs' tokens of a split launch of `grid`: the uniform schedule (every request cut into grid[1]
    splits of `split_len`) or the batch schedule's `items` (request, lo, hi, ctx_len, slot)."""
    m_blocks = grid[0]
    kv_lens = w.kv_lens
    per_request: dict[int, list[int]] = {b: [] for b in range(w.batch)}
    if schedule == "uniform":
        for b, n in enumerate(kv_lens):
            per_request[b] = [max(0, min(split_len, n - s * split_len)) for s in range(grid[1])]
    else:
        for request, lo, hi, *_ in items:
            per_request[request].append(hi - lo)
    programs = [t for ts in per_request.values() for t in ts] * m_blocks
    longest = max(programs)
    loads = [RequestLoad(b, kv_lens[b], m_blocks * len(ts), max(ts, default=0)) for b, ts in per_request.items()]
    tail = sorted((r for r in loads if 2 * r.longest >= longest), key=lambda r: (-r.longest, -r.tokens, r.request))
    rest = max((r.longest for r in loads if 2 * r.longest < longest), default=0)
    return PlanTail(
        schedule=schedule,
        grid=tuple(grid),
        split_len=split_len,
        programs=len(programs),
        empty=sum(1 for t in programs if t == 0),
        average=sum(programs) / len(programs),
        longest=longest,
        tail=tail,
        rest_longest=rest,
        recorded=recorded,
    )
