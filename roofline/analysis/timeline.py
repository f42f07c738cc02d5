"""Inside the kernel: what the in-kernel timeline (profiler/timeline_reader.py) says. Per role (warpgroup) and
stage: the time per tile and its share of the role's time; how much of each tile's load ran under other work;
where a role waits on another; the split kernel's and the combine's share of the step; the busiest, median and
idlest SM; the step's critical path (every microsecond of the step on the role that ends last); and the stamps' own
cost on the step, as the capture measured it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from profiler.timeline_reader import InKernelCapture

# What each waiting stage waits for (stage name -> the role or thing it waits on).
WAITS_ON = {
    "wait loads": "the loads (TMA/cp.async)",
    "wait tail": "the producer's tail rows",
    "wait P": "the other main warpgroup's P",
    "wait maxima": "the other main warpgroup's maxima",
    "wait buffer": "the main warpgroups (a free buffer)",
}
SM_LABELS = ("busiest", "median", "idlest")


@dataclass(frozen=True)
class StageRow:
    """One stage of one role: µs per tile (mean over programs), share of the role's time, whether it waits."""

    role: str
    stage: str
    us_per_tile: float | None  # None for the prologue and epilogue (once per program)
    us_per_program: float
    share: float
    waits_on: str | None = None


@dataclass(frozen=True)
class SmRow:
    """One SM picked by how long its programs ran (label: busiest, median, idlest)."""

    label: str
    sm: int
    programs: tuple[int, ...]
    start_us: float
    end_us: float
    busy_us: float
    tiles: int


@dataclass(frozen=True)
class LoadOverlap:
    """Each tile's load from its issue to the scorer seeing it landed (in flight), and the part of that the
    scorer spent waiting for it (exposed); hidden = 1 - exposed / in flight, over all tiles."""

    tiles: int
    in_flight_us: float
    exposed_us: float

    @property
    def hidden(self) -> float:
        return 1.0 - self.exposed_us / self.in_flight_us if self.in_flight_us > 0 else 0.0


@dataclass(frozen=True)
class Span:
    """One stage of one lane (a role of a program, or the combine's programs on that SM) over time (µs)."""

    lane: str
    stage: str
    start_us: float
    end_us: float


@dataclass(frozen=True)
class CriticalPath:
    """The step on the role that ends last (the split kernel's end): from the split kernel's first start, the time
    before that role's first program, each program's prologue, its loop by stage (summed over the programs), the
    loop's time between stamps, the epilogues, the gaps between the programs, and the combine's time after the split
    kernel. The parts add up to the step."""

    sm: int
    role: str
    programs: tuple[int, ...]
    tiles: int
    parts: list[tuple[str, float]]  # (part, µs), in the order above; the stages' names as stage_rows gives them
    loop_us: float  # the programs' loops, start to end (stages and the time between stamps)

    @property
    def total_us(self) -> float:
        return sum(us for _, us in self.parts)


@dataclass(frozen=True)
class InKernelTimeline:
    """The in-kernel timeline of one step (times in µs; shares 0-1)."""

    source: str
    kernel: str
    combine_kernel: str | None
    schedule: str
    programs: int
    split_us: float
    combine_us: float | None
    combine_work_us: float | None  # median combine program, from its partials visible to its end
    combine_programs: int
    step_us: float
    stages: list[StageRow]
    sms: list[SmRow]
    loads: LoadOverlap | None
    overhead: dict
    check: dict
    clock_ghz: float
    lanes: dict[str, list[Span]] = field(default_factory=dict)  # per label of `sms`: what ran on that SM
    notes: list[str] = field(default_factory=list)
    critical: CriticalPath | None = None

    @property
    def combine_share(self) -> float | None:
        if self.combine_us is None or self.step_us <= 0:
            return None
        return (self.step_us - self.split_us) / self.step_us

    def top_wait(self) -> StageRow | None:
        waits = [s for s in self.stages if s.waits_on]
        return max(waits, key=lambda s: s.share, default=None)


def in_kernel_timeline(cap: InKernelCapture) -> InKernelTimeline:
    """The timeline's answers for one capture."""
    roles, iv, comb = cap.roles, cap.intervals, cap.combine
    sms = sm_rows(roles)
    split_start = float(roles["start_us"].min()) if not roles.empty else 0.0
    split_end = float(roles["end_us"].max()) if not roles.empty else 0.0
    combine_us = combine_work = None
    step_end = split_end
    if not comb.empty:
        combine_us = float(comb["end_us"].max() - max(comb["start_us"].min(), split_start))
        combine_work = float((comb["end_us"] - comb["waited_us"]).median())
        step_end = max(split_end, float(comb["end_us"].max()))
    return InKernelTimeline(
        source=str(cap.source),
        kernel=cap.meta.get("split_kernel", ""),
        combine_kernel=cap.meta.get("combine_kernel"),
        schedule=cap.schedule,
        programs=int(roles["program"].nunique()) if not roles.empty else 0,
        split_us=split_end - split_start,
        combine_us=combine_us,
        combine_work_us=combine_work,
        combine_programs=len(comb),
        step_us=step_end - split_start,
        stages=stage_rows(roles, iv),
        sms=sms,
        loads=load_overlap(iv, cap.schedule),
        overhead=cap.overhead,
        check=cap.meta.get("check") or {},
        clock_ghz=cap.clock_ghz,
        lanes={s.label: sm_lanes(s.sm, roles, iv, comb) for s in sms},
        notes=list(cap.notes),
        critical=critical_path(roles, iv, split_start, step_end),
    )


def _base(stage: str) -> str:
    """A stage's name without its repeat mark ("value MMA 2" is "value MMA")."""
    return stage[:-2] if stage.endswith(" 2") else stage


def _stage_totals(iv):
    """The time of each stage (by _base's name, in first-seen order) summed over the intervals `iv`."""
    return (iv["end_us"] - iv["start_us"]).groupby(iv["stage"].map(_base), sort=False).sum()


def stage_rows(roles, iv) -> list[StageRow]:
    """Per role and stage: the mean over programs of its time per tile and per program, and its share of the
    role's time (start to end, summed over programs); the prologue and epilogue once per program."""
    if roles.empty:
        return []
    out = []
    for role, rr in roles.groupby("role_name", sort=False):
        span = float((rr["end_us"] - rr["start_us"]).sum())
        n = len(rr)
        tiles = float(rr["n_tiles"].sum())
        pro = float((rr["loop_us"] - rr["start_us"]).sum())
        epi = float((rr["end_us"] - rr["loop_end_us"]).sum())
        out.append(StageRow(role, "prologue", None, pro / n, pro / span))
        for stage, total in _stage_totals(iv[iv["role_name"] == role]).items():
            per_tile = float(total) / tiles if tiles else None
            out.append(StageRow(role, stage, per_tile, float(total) / n, float(total) / span, WAITS_ON.get(stage)))
        out.append(StageRow(role, "epilogue", None, epi / n, epi / span))
    return out


def sm_rows(roles) -> list[SmRow]:
    """The busiest, median and idlest SM by the time their programs ran (first role start to last role end)."""
    if roles.empty:
        return []
    prog = roles.groupby("program").agg(sm=("sm", "first"), start=("start_us", "min"), end=("end_us", "max"))
    prog["tiles"] = roles[roles["role"] == 0].set_index("program")["n_tiles"].reindex(prog.index).fillna(0)
    prog["busy"] = prog["end"] - prog["start"]
    by_sm = (
        prog.reset_index()
        .groupby("sm")
        .agg(
            busy=("busy", "sum"),
            start=("start", "min"),
            end=("end", "max"),
            tiles=("tiles", "sum"),
            programs=("program", tuple),
        )
    )
    order = by_sm.sort_values("busy", ascending=False)
    picks = [order.index[0], order.index[len(order) // 2], order.index[-1]]
    return [
        SmRow(
            label,
            int(sm),
            tuple(int(p) for p in order.loc[sm, "programs"]),
            float(order.loc[sm, "start"]),
            float(order.loc[sm, "end"]),
            float(order.loc[sm, "busy"]),
            int(order.loc[sm, "tiles"]),
        )
        for label, sm in zip(SM_LABELS, picks, strict=True)
    ]


def critical_path(roles, iv, split_start: float, step_end: float) -> CriticalPath | None:
    """CriticalPath of the role that ends last, over every program of that role on its SM. None without stamps, and
    where two of those programs overlap in time (programs sharing the SM: no one lane of time to account)."""
    if roles.empty:
        return None
    last = roles.loc[roles["end_us"].idxmax()]
    lane = roles[(roles["sm"] == last["sm"]) & (roles["role"] == last["role"])].sort_values("start_us")
    gaps = lane["start_us"].iloc[1:].to_numpy() - lane["end_us"].iloc[:-1].to_numpy()
    if (gaps < 0).any():
        return None
    stages = _stage_totals(iv[iv["program"].isin(lane["program"]) & (iv["role"] == last["role"])])
    loop = float((lane["loop_end_us"] - lane["loop_us"]).sum())
    parts = [("before its first program", float(lane["start_us"].iloc[0]) - split_start)]
    parts.append(("prologue", float((lane["loop_us"] - lane["start_us"]).sum())))
    parts += [(str(stage), float(us)) for stage, us in stages.items()]
    parts.append(("loop, between stamps", loop - float(stages.sum())))
    parts.append(("epilogue", float((lane["end_us"] - lane["loop_end_us"]).sum())))
    if len(lane) > 1:
        parts.append(("between its programs", float(gaps.sum())))
    parts.append(("the combine, after the split kernel", step_end - float(lane["end_us"].iloc[-1])))
    return CriticalPath(
        int(last["sm"]),
        str(last["role_name"]),
        tuple(int(p) for p in lane["program"]),
        int(lane["n_tiles"].sum()),
        parts,
        loop,
    )


def sm_lanes(sm: int, roles, iv, comb) -> list[Span]:
    """What ran on SM `sm`: each role's prologue, stages and epilogue, then the combine programs there (their
    wait for the split kernel's writes, then their work)."""
    spans = []
    for r in roles[roles["sm"] == sm].itertuples():
        lane = r.role_name
        spans.append(Span(lane, "prologue", r.start_us, r.loop_us))
        mine = iv[(iv["program"] == r.program) & (iv["role"] == r.role)]
        spans += [Span(lane, _base(s.stage), s.start_us, s.end_us) for s in mine.itertuples()]
        spans.append(Span(lane, "epilogue", r.loop_end_us, r.end_us))
    for c in comb[comb["sm"] == sm].itertuples():
        spans.append(Span("combine", "combine wait", c.start_us, c.waited_us))
        spans.append(Span("combine", "combine", c.waited_us, c.end_us))
    return spans


def load_overlap(iv, schedule: str) -> LoadOverlap | None:
    """Each main warpgroup's tile: from its load's issue to the end of its wait for it (ring: the producer
    issues tile t at tile t - 2; stagger: pair j + 1's halves are issued during pair j, whose slot holds the
    wait for them), and that wait itself."""
    main = iv[iv["role_name"].str.startswith("main")]
    waits = main[main["stage"] == "wait loads"]
    issues = iv[iv["stage"].str.startswith("issue loads")]
    if waits.empty or issues.empty:
        return None
    if schedule == "ring":
        issue_at = issues.assign(tile=issues["tile"] + 2).groupby(["program", "tile"])["start_us"].min()
    else:
        issue_at = issues.groupby(["program", "tile"])["start_us"].min()
    key = list(zip(waits["program"], waits["tile"], strict=True))
    start = issue_at.reindex(key).to_numpy()
    ok = ~(start != start)  # NaN: the first tiles, issued in the prologue
    flight = waits["end_us"].to_numpy()[ok] - start[ok]
    exposed = (waits["end_us"] - waits["start_us"]).to_numpy()[ok]
    return LoadOverlap(
        int(ok.sum()), float(flight.mean()) if ok.any() else 0.0, float(exposed.mean()) if ok.any() else 0.0
    )


def why_line(tl: InKernelTimeline) -> str:
    """One line for the verdict's evidence: where the split kernel's roles wait, the loads hidden, the combine
    (none where no role stamped)."""
    if not tl.programs:
        return ""
    parts = []
    top = tl.top_wait()
    if top is not None:
        per = f", {top.us_per_tile:.2f} us a tile" if top.us_per_tile is not None else ""
        parts.append(f"{top.role} waits {top.share:.0%} of its time on {top.waits_on} ('{top.stage}'{per})")
    if tl.loads is not None:
        parts.append(f"{tl.loads.hidden:.0%} of each tile's load runs under other work")
    if tl.combine_share is not None:
        parts.append(f"the combine holds {tl.combine_share:.0%} of the step after the split kernel")
    return "in-kernel timeline: " + "; ".join(parts) if parts else ""


def apply_in_kernel(analysis, tl: InKernelTimeline) -> None:
    """Cite the timeline in the evidence of the split kernel's rows of `analysis` (summary.Analysis)."""
    line = why_line(tl)
    if not line:
        return
    for k in analysis.kernels:
        if k.kernel == tl.kernel and line not in k.evidence:
            k.evidence = [*k.evidence, line]
