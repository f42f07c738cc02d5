"""Per-kernel summary of a launch table: grouped launches, verdict, gap to the workload floor."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import pandas as pd

from kernels.registry import project_kernel_of
from kernels.spec import VerifyWorkload
from profiler.launch_table import LaunchTable, PcSamples
from profiler.metrics import CHIP_NAMES, PRESETS
from profiler.ncu_tidy import DRAM_BYTES_FROM
from profiler.nsys_summary import busy_ns, overlaps
from roofline.analysis.floor import Floor, Step, workload_floor
from roofline.analysis.hierarchy import hierarchical_roofline, useful_flops_per_launch, with_useful_work
from roofline.analysis.imbalance import FAST_ADVICE, measure, plan_tail
from roofline.analysis.labels import distinct_labels
from roofline.analysis.mma_path import register_blocked
from roofline.analysis.pipelined import memory_facts
from roofline.analysis.useful import UsefulWork, padding_clause, useful_line
from roofline.analysis.values import num
from roofline.analysis.verdict import agrees_with_ncu, classify, top_stalls
from roofline.analysis.waits import WarpWaits, warp_waits
from roofline.catalogue.gpus import GpuSpec, match_gpu

GROUP_KEYS = ["kernel", "mangled_name", "grid_size", "block_size"]
TIMELINE_ONLY = (
    "an Nsight Systems timeline: each launch's time, grid and block, no hardware counters, so no bound or cause"
)
FIELDS = [
    "duration_ms",
    "dram_throughput_pct",
    "sm_throughput_pct",
    "memory_throughput_pct",
    "l2_hit_rate_pct",
    "dram_gbps",
    "dram_peak_gbps",
    "waves_per_sm",
    "achieved_occupancy_pct",
    "theoretical_occupancy_pct",
    "registers_per_thread",
    "sm_count",
]


@dataclass
class KernelSummary:
    kernel: str
    launches: int
    grid_size: float | None
    block_size: float | None
    duration_ms: float | None
    dram_throughput_pct: float | None
    sm_throughput_pct: float | None
    memory_throughput_pct: float | None
    l2_hit_rate_pct: float | None
    dram_gbps: float | None
    dram_peak_gbps: float | None
    waves_per_sm: float | None
    achieved_occupancy_pct: float | None
    theoretical_occupancy_pct: float | None
    registers_per_thread: float | None
    top_stalls: list[dict]
    bound: str
    cause: str | None
    evidence: list[str]
    roof: str | None = None
    unit: str | None = None  # the busiest unit with its %
    advice: str | None = None
    ncu_rule: str | None = None
    agrees_with_ncu: bool | None = None
    ncu_rule_note: str | None = None  # why there is no ncu rule to compare with
    gap_to_floor: float | None = None  # only when this kernel is the whole step
    share_of_step: float | None = None  # fraction of the step's kernel time
    hierarchy: dict | None = None
    label: str = ""  # a name no other row shares (kernel + what tells it apart)
    source: str | None = None  # the report file, when the launches came from several
    mangled_name: str | None = None
    project_kernel: str | None = None  # the registered kernel that launches it, if any
    waits: WarpWaits | None = None  # where the warps wait (PC samples), when the capture has them
    imbalance: dict | None = None  # the SMs' busy cycles, max against avg (roofline/analysis/imbalance.py)
    dram_from: str | None = None  # the metrics its DRAM bytes and GB/s came from (a foreign capture's say)


@dataclass(frozen=True)
class DeviceInfo:
    """The GPU a capture ran on: the name the tool recorded, its hardware-table entry, its SM count."""

    name: str | None = None
    catalogue: str | None = None  # kernels/data/hardware.json's short name; None when not in the table
    sm_count: float | None = None


@dataclass
class Analysis:
    gpu: DeviceInfo
    kernels: list[KernelSummary]
    workload: VerifyWorkload | None = None
    floor: Floor | None = None
    step: Step | None = None
    notes: list[str] = field(default_factory=list)
    missing_metrics: list[str] = field(default_factory=list)  # ncu metrics the report lacks

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["step"] = self.step.to_dict() if self.step else None
        return _clean(d)

    @staticmethod
    def clean(obj):
        return _clean(obj)


def _clean(obj):
    """NaN -> None, numpy scalars -> Python, recursively (JSON-safe)."""
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_clean(v) for v in obj]
    if hasattr(obj, "item") and not isinstance(obj, (str, bytes)):
        obj = obj.item()
    if isinstance(obj, float) and math.isnan(obj):
        return None
    return obj


def ncu_rule_text(rules: list[dict]) -> str | None:
    """ncu's own SOLBottleneck message for a launch, when the report carries it."""
    for rule in rules or []:
        if rule.get("rule_identifier") == "SOLBottleneck":
            msg = rule.get("rule_message") or {}
            title, text = (msg.get("title") or "").strip(), (msg.get("message") or "").strip()
            return f"{title}: {text}" if title else (text or None)
    return None


def rule_absent(preset: str | None) -> str:
    """Why a launch has no SOLBottleneck rule: the preset collects no SpeedOfLight section."""
    return (
        f"ncu rule not collected (preset {preset})"
        if preset
        else "ncu rule not collected (the report has no SpeedOfLight section)"
    )


@dataclass(frozen=True)
class _Inputs:
    """What every kernel's summary reads besides its own launches: the capture and the workload around it."""

    table: LaunchTable
    workload: VerifyWorkload | None
    gpu: GpuSpec | None
    device: str | None
    floor: Floor | None
    preset: str | None
    pc_samples: PcSamples | None
    plan: dict | None = None  # the launch plan the run recorded (roofline/analysis/imbalance.py plan_tail)


@dataclass(frozen=True)
class _Grouping:
    """The launches grouped by kernel and launch configuration (and by file, for a folder of reports)."""

    groups: list
    by_source: bool  # a folder of reports: the same kernel from two files stays two rows, each naming its file
    per_source: dict  # each file's kernel time: files of a folder are separate programs, each its own step
    total_ms: float  # the launches' GPU time (gpu_ms: overlaps once; NaN durations count as none)

    @property
    def whole_step(self) -> bool:
        return len(self.groups) == 1


def summarize(
    table: LaunchTable,
    workload: VerifyWorkload | None = None,
    iterations: int | None = None,
    gpu: GpuSpec | None = None,
    preset: str | None = None,
    pc_samples: PcSamples | None = None,
    useful: UsefulWork | None = None,
    plan: dict | None = None,
) -> Analysis:
    """Group launches by kernel and launch configuration; median of each metric; one verdict each.

    `preset`: the metric preset the report was captured with (profiler/metrics.py), when known.
    `pc_samples`: the report's PC samples (profiler/ncu_source.py, launch numbers as in `table`):
    where each kernel's warps wait, and its SASS traits for the pipelined-kernel verdict.
    Attention-specific advice goes to the project's registered kernels (kernels/registry.py) and to
    any kernel of a run whose verify workload is known; every other kernel gets general advice.
    `useful`: the useful work of one step of a capture with no workload (the user's: FLOPs and bytes), so
    executed against useful is named for a foreign kernel too. `plan`: the launch plan the harness recorded in the
    run (plan.json), which names the requests behind a load imbalance's tail.
    """
    launches = table.frame
    device = next((d for d in launches.get("device", pd.Series(dtype=object)).dropna()), None)
    gpu = gpu or match_gpu(device)
    floor: Floor | None = workload_floor(workload, gpu) if (workload and gpu) else None
    inputs = _Inputs(table, workload, gpu, device, floor, preset, pc_samples, plan)
    if "mangled_name" not in launches:
        launches = launches.assign(mangled_name=launches["kernel"])
    grouping = _group(launches)
    memory = memory_facts(gpu)
    kernels, facts = [], []  # facts: (median metrics, SASS traits, waits) per kernel, for the verdicts below
    for key, group in grouping.groups:
        kernel, fact = _kernel_summary(key, group, grouping, inputs, memory)
        kernels.append(kernel)
        facts.append(fact)
    for k, label in zip(kernels, distinct_labels(kernels)):
        k.label = label
    _add_useful_work(kernels, floor, iterations, grouping.whole_step, useful)
    _finish_verdicts(kernels, facts, gpu, workload)
    step = Step.of(grouping.total_ms / iterations, floor) if floor is not None and iterations else None
    return Analysis(
        gpu=DeviceInfo(
            name=device,
            catalogue=gpu.short_name if gpu else None,
            sm_count=num(launches["sm_count"].dropna().iloc[0]) if launches["sm_count"].notna().any() else None,
        ),
        kernels=kernels,
        workload=workload,
        floor=floor,
        step=step,
        notes=_notes(inputs) + _overlap_note(launches, grouping.total_ms, iterations),
        missing_metrics=list(table.missing_metrics),
    )


def _group(launches: pd.DataFrame) -> _Grouping:
    keyed = launches.assign(**{k: launches[k].fillna(-1) for k in GROUP_KEYS if k != "kernel"})
    by_source = "source" in launches and launches["source"].nunique() > 1
    return _Grouping(
        groups=list(keyed.groupby(GROUP_KEYS + (["source"] if by_source else []), sort=False, dropna=False)),
        by_source=by_source,
        per_source={s: gpu_ms(g) for s, g in launches.groupby("source")} if by_source else {},
        total_ms=gpu_ms(launches),
    )


def gpu_ms(launches: pd.DataFrame) -> float:
    """The time the launches kept the GPU running: where the capture has each launch's start and end (an nsys
    timeline), the union of their intervals, so that launches that overlap (a programmatic dependent launch
    starts before the kernel it waits for ends; kernels on two streams) count once; else (ncu replays each launch
    alone) their times summed. NaN durations count as none."""
    if (
        {"start_ns", "end_ns"} <= set(launches)
        and len(launches)
        and launches[["start_ns", "end_ns"]].notna().all(axis=None)
    ):
        return busy_ns(launches["start_ns"].to_numpy(), launches["end_ns"].to_numpy()) / 1e6
    return float(launches["duration_ms"].sum())


def _overlap_note(launches: pd.DataFrame, total_ms: float, iterations: int | None) -> list[str]:
    """Where the launches overlap in time, how the step counts them (once) and what a kernel's own time holds."""
    summed = float(launches["duration_ms"].sum())
    if not total_ms or not overlaps(summed, total_ms):
        return []
    per = iterations or 1
    return [
        f"launches overlap in time (a programmatic dependent launch starts before the kernel it waits for ends, "
        f"or kernels share the GPU from two streams): the step counts the {(summed - total_ms) / per:.4g} ms they "
        f"overlap once ({total_ms / per:.4g} ms per step, where their own times sum to {summed / per:.4g} ms); a "
        f"kernel's own time includes any wait for the one before it"
    ]


def _kernel_summary(key: tuple, group: pd.DataFrame, grouping: _Grouping, inputs: _Inputs, memory) -> tuple:
    """One group's row: the median of each metric, its waits, its verdict (with a load imbalance's tail), ncu's
    rule beside it, its gap and share of the step; and the facts the later verdict steps read."""
    table, workload = inputs.table, inputs.workload
    med = group.median(numeric_only=True).to_dict()
    project = project_kernel_of(key[0])
    waits = traits = None
    if inputs.pc_samples is not None and not inputs.pc_samples.frame.empty:
        samples = inputs.pc_samples.frame
        waits = warp_waits(samples[samples["launch"].isin(group["launch"])])
        traits = inputs.pc_samples.functions.get(key[0])
    verdict = classify(
        med, attention=project is not None or workload is not None, waits=waits, traits=traits, memory=memory
    )
    verdict, imbalance = _with_tail(verdict, key[0], project, workload, med, inputs.gpu, inputs.device, inputs.plan)
    if not table.counters:  # an nsys timeline: said in its own words, not as metrics ncu failed to give
        verdict = dataclasses.replace(verdict, evidence=[TIMELINE_ONLY])
    rule = ncu_rule_text(table.rules.get(int(group["launch"].iloc[0]), []))
    values = {f: num(med.get(f)) for f in FIELDS}
    duration, floor = values["duration_ms"], inputs.floor
    timed = group["duration_ms"].notna().any()  # a kernel with no time has no share of the step, not 0
    whole = grouping.per_source.get(key[4], grouping.total_ms) if grouping.by_source else grouping.total_ms
    share = float(group["duration_ms"].sum()) / whole if (whole > 0 and timed) else None
    summary = KernelSummary(
        kernel=key[0],
        launches=len(group),
        grid_size=num(group["grid_size"].iloc[0]) if key[2] != -1 else None,
        block_size=num(group["block_size"].iloc[0]) if key[3] != -1 else None,
        **{f: values[f] for f in FIELDS if f != "sm_count"},
        top_stalls=[{"reason": r, "cycles_per_issue": v} for r, v in top_stalls(med)],
        **dataclasses.asdict(verdict),  # bound, cause, evidence, roof, unit, advice
        ncu_rule=rule,
        agrees_with_ncu=agrees_with_ncu(verdict.bound, rule),
        ncu_rule_note=None if rule or not table.counters else rule_absent(inputs.preset),
        gap_to_floor=(duration / floor.floor_ms) if (floor and duration and grouping.whole_step) else None,
        share_of_step=share if (share is not None and not math.isnan(share)) else None,
        hierarchy=hierarchical_roofline(med),
        mangled_name=key[1],
        project_kernel=project,
        source=key[4] if grouping.by_source else (group["source"].iloc[0] if "source" in group else None),
        waits=waits,
        imbalance=imbalance,
        dram_from=dram_from(med),
    )
    return summary, (med, traits, waits)


def _add_useful_work(
    kernels: list[KernelSummary],
    floor: Floor | None,
    iterations: int | None,
    whole_step: bool,
    useful: UsefulWork | None,
) -> None:
    """The useful FLOPs beside ncu's executed ones (padded MMA rows and all): the workload's, from its floor,
    when the launches make up known steps; else a foreign capture's, given by the user, with a line saying so."""
    if floor is not None and (iterations or whole_step):
        total, given = floor.flops, None
    elif useful is not None:
        total, given = useful.flops or 0, useful
    else:
        return
    flops = useful_flops_per_launch(
        [(k.hierarchy or {}).get("tensor_flops") for k in kernels],
        [k.launches for k in kernels],
        total,
        iterations or kernels[0].launches,
    )
    for k, f in zip(kernels, flops):
        k.hierarchy = with_useful_work(k.hierarchy, f, k.duration_ms)
        line = useful_line(k, given, len(kernels)) if given is not None else None
        if line:
            k.evidence = [*k.evidence, line]


def _finish_verdicts(kernels: list[KernelSummary], facts: list[tuple], gpu: GpuSpec | None, workload) -> None:
    """What needs the useful work: the DRAM bytes line of a capture without ncu's throughput %, the
    register-blocked MMA path (mma_path.py), else the padding clause of the advice."""
    arch = gpu.arch if gpu else None
    for k, (med, traits, waits) in zip(kernels, facts):
        line = bytes_line(k, med, gpu)
        if line:
            k.evidence = [*k.evidence, line]
        blocked = register_blocked(med, traits, waits, arch, k.hierarchy, k.bound, k.cause, k.unit)
        if blocked is not None:
            k.cause = blocked.cause or k.cause
            k.advice = blocked.advice or k.advice
            k.evidence = [*k.evidence, *blocked.evidence]
        elif k.advice:
            k.advice += padding_clause(k, workload.q_len if workload else None)


def _notes(inputs: _Inputs) -> list[str]:
    """What the analysis could not do and why: what the source could not hold (e.g. ncu CSV: no rules), no PC
    samples, a GPU outside the catalogue, metrics the preset did not ask for or the report lacks."""
    preset = inputs.preset
    notes = list(inputs.table.notes)
    if inputs.pc_samples is not None and inputs.pc_samples.frame.empty:
        notes.append(
            "no PC samples in this capture (smsp__pcsamp_*): no per-instruction breakdown of where the warps wait"
        )
    if inputs.workload is not None and inputs.gpu is None:
        notes.append(f"device {inputs.device!r} is not in the GPU catalogue: no floor")
    missing = inputs.table.missing_metrics
    shown = _unexpectedly_missing(missing, preset)
    if len(shown) < len(missing):
        skipped = [m for m in missing if m not in shown]
        notes.append(
            f"preset {preset} does not ask for {len(skipped)} metrics the analysis can use"
            + (" (no DRAM bytes, FLOP or byte counts: no hierarchical roofline)" if preset == "verdict" else "")
            + f": {', '.join(skipped[:4])}"
            + (" ..." if len(skipped) > 4 else "")
            + "; `profile --preset full` collects them"
        )
    if shown:
        notes.append(
            f"{len(shown)} metrics absent from the report: {', '.join(shown[:6])}"
            + (
                f" and {len(shown) - 6} more (all listed under missing_metrics in --format json)"
                if len(shown) > 6
                else ""
            )
        )
    return notes


def _with_tail(verdict, kernel, project, workload, med, gpu, device, plan: dict | None = None) -> tuple:
    """The verdict, with the requests behind a load imbalance's tail where the kernel is the project's fast kernel
    and the workload is known (roofline/analysis/imbalance.py plan_tail: the run's recorded `plan`, else re-planned),
    and the imbalance's numbers (None without busy cycles)."""
    found = measure(med)
    numbers = found.to_dict() if found else None
    if verdict.cause != "load imbalance" or project is None or workload is None or gpu is None:
        return verdict, numbers
    tail = plan_tail(kernel, workload, med, gpu.arch, device, plan)
    if tail is None:
        return verdict, numbers
    at = next(i for i, e in enumerate(verdict.evidence) if e.startswith("load imbalance:")) + 2
    line = tail if isinstance(tail, str) else tail.line()
    evidence = verdict.evidence[:at] + [line] + verdict.evidence[at:]
    advice = FAST_ADVICE if not isinstance(tail, str) and tail.schedule == "uniform" and workload.batch > 1 else None
    numbers["tail"] = tail if isinstance(tail, str) else tail.to_dict()
    return dataclasses.replace(verdict, evidence=evidence, advice=advice or verdict.advice), numbers


def bytes_line(k: KernelSummary, m, gpu: GpuSpec | None) -> str | None:
    """For a capture without ncu's DRAM throughput % (a foreign one: bytes and a time alone), the DRAM GB/s
    its bytes give, the metrics they came from and the GPU's datasheet peak beside them."""
    if k.dram_throughput_pct is not None or not k.dram_gbps:
        return None
    moved, read, write = (num(m.get(c)) for c in ("dram_bytes", "dram_bytes_read", "dram_bytes_write"))
    split = f"{read / 1e9:,.3f} GB read + {write / 1e9:,.3f} GB written" if read and write is not None else None
    line = f"DRAM {k.dram_gbps:,.0f} GB/s" + (f" ({split or f'{moved / 1e9:,.3f} GB'} a launch)" if moved else "")
    line += f" from {k.dram_from}" if k.dram_from else ""
    if gpu is not None and gpu.dram_gbps:
        line += f": {100 * k.dram_gbps / gpu.dram_gbps:.0f}% of the {gpu.name} datasheet's {gpu.dram_gbps:,.0f} GB/s"
    return line


def dram_from(m) -> str | None:
    """The metrics a kernel's DRAM GB/s came from (profiler/ncu_tidy.py DRAM_BYTES_FROM), None without any."""
    if num(m.get("dram_gbps")) is None:
        return None
    if num(m.get("dram_gbps_from_rate")):
        return "dram__bytes.sum.per_second (ncu's own rate)"
    how = num(m.get("dram_bytes_from"))
    return f"{DRAM_BYTES_FROM[int(how)]}, over gpu__time_duration.sum" if how in DRAM_BYTES_FROM else None


def _unexpectedly_missing(missing: list[str], preset: str | None) -> list[str]:
    """The absent metrics that the capture's preset asked for (all of them when the preset is unknown
    or is an ncu set): a verdict-preset run is not short of the roofline counters it never asked for."""

    p = PRESETS.get(preset) if preset else None
    if p is None or p.sets or not p.metrics:
        return list(missing)
    asked = set(p.metrics) | {alt for names in CHIP_NAMES.values() for base, alt in names.items() if base in p.metrics}
    return [m for m in missing if m in asked]
