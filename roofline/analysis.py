"""Per-kernel summary of a launch table: grouped launches, verdict, gap to the workload floor."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import pandas as pd

from kernels.spec import VerifyWorkload
from roofline.floor import WorkloadFloor, workload_floor
from roofline.gpus import GpuSpec, match_gpu
from roofline.hierarchy import hierarchical_roofline
from roofline.verdict import agrees_with_ncu, classify, num, top_stalls

GROUP_KEYS = ["kernel", "grid_size", "block_size"]
FIELDS = ["duration_ms", "dram_throughput_pct", "sm_throughput_pct", "memory_throughput_pct",
          "l2_hit_rate_pct", "dram_gbps", "dram_peak_gbps", "waves_per_sm", "achieved_occupancy_pct",
          "theoretical_occupancy_pct", "registers_per_thread", "sm_count"]


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
    advice: str | None = None
    ncu_rule: str | None = None
    agrees_with_ncu: bool | None = None
    gap_to_floor: float | None = None
    hierarchy: dict | None = None


@dataclass
class Analysis:
    gpu: dict
    kernels: list[KernelSummary]
    workload: dict | None = None
    floor: dict | None = None
    step: dict | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return _clean(dataclasses.asdict(self))

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


def summarize(launches: pd.DataFrame, workload: VerifyWorkload | None = None,
              iterations: int | None = None, gpu: GpuSpec | None = None) -> Analysis:
    """Group launches by kernel and launch configuration; median of each metric; one verdict each."""
    device = next((d for d in launches.get("device", pd.Series(dtype=object)).dropna()), None)
    gpu = gpu or match_gpu(device)
    rules = launches.attrs.get("rules", {})
    floor: WorkloadFloor | None = workload_floor(workload, gpu) if (workload and gpu) else None

    kernels = []
    keyed = launches.assign(**{k: launches[k].fillna(-1) for k in GROUP_KEYS if k != "kernel"})
    for key, group in keyed.groupby(GROUP_KEYS, sort=False, dropna=False):
        med = group.median(numeric_only=True).to_dict()
        stalls = [{"reason": r, "cycles_per_issue": v} for r, v in top_stalls(med)]
        verdict = classify(med)
        first = int(group["launch"].iloc[0])
        rule = ncu_rule_text(rules.get(first, []))
        values = {f: num(med.get(f)) for f in FIELDS}
        duration = values["duration_ms"]
        kernels.append(KernelSummary(
            kernel=key[0], launches=len(group),
            grid_size=num(group["grid_size"].iloc[0]) if key[1] != -1 else None,
            block_size=num(group["block_size"].iloc[0]) if key[2] != -1 else None,
            **{f: values[f] for f in FIELDS if f != "sm_count"},
            top_stalls=stalls, bound=verdict.bound, cause=verdict.cause, evidence=verdict.evidence,
            roof=verdict.roof, advice=verdict.advice, ncu_rule=rule,
            agrees_with_ncu=agrees_with_ncu(verdict.bound, rule),
            gap_to_floor=(duration / floor.floor_ms) if (floor and duration) else None,
            hierarchy=hierarchical_roofline(med),
        ))

    step = None
    notes = []
    if floor is not None and iterations:
        total_ms = float(launches["duration_ms"].sum()) / iterations
        step = {"kernel_ms_per_step": total_ms, "floor_ms": floor.floor_ms,
                "gap": total_ms / floor.floor_ms}
    if workload is not None and gpu is None:
        notes.append(f"device {device!r} is not in the GPU catalogue: no floor")
    missing = launches.attrs.get("missing_metrics", [])
    if missing:
        notes.append(f"{len(missing)} metrics absent from the report: {', '.join(missing[:6])}"
                     + (" ..." if len(missing) > 6 else ""))
    gpu_info = {"name": device, "catalogue": gpu.short_name if gpu else None,
                "sm_count": num(launches["sm_count"].dropna().iloc[0]) if launches["sm_count"].notna().any() else None}
    return Analysis(gpu=gpu_info, kernels=kernels,
                    workload=dataclasses.asdict(workload) if workload else None,
                    floor=dataclasses.asdict(floor) if floor else None, step=step, notes=notes)
