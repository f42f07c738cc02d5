"""Named ncu metric presets (`verdict`, `roofline`, `full`), resolved per chip.

    verdict    5 passes   launch attributes (no pass), 4 SM + 4 memory breakdown units, achieved
                          occupancy, PC-sampled stall reasons (the sampling itself takes 2 passes), the
                          SMs' busy cycles (avg, max, min: load imbalance), the L2 hit rate, DRAM bytes, the
                          tensor pipe's instructions by MMA path
    roofline   6 passes   verdict + tensor/FP32 FLOPs and bytes at L1, L2, DRAM with their peaks
    full      38 passes   ncu's `--set full`

Replay passes per launch on the H200 (gh100, Nsight Compute 2025.3.1); `profile --source` adds one. How
they were measured, and what each metric group costs: docs/results/h200-preset-passes.md.

ncu's own SM% and Memory% (`sm__throughput`, `gpu__compute_memory_throughput`) are each the largest of
25 / 26 breakdown units and cost 9 and 6 passes. The `verdict` preset collects the 4 + 4 units that
led SM% and Memory% in every `--set full` capture of tests/fixtures/h200/{full,corpus} (issue slots,
ALU, tensor and LSU pipes; L1 LSU wavefronts, L2 tag sectors, L2-to-crossbar, DRAM cycles), and the
analysis takes SM% and Memory% as their largest (profiler/ncu_tidy.py), saying so. Stall reasons are
the sampled ones (`smsp__pcsamp_warps_issue_stalled_*`): the same ranking and nearly the same
per-issue numbers as the 19 `smsp__average_warps_issue_stalled_*` ratios, for fewer passes.
Theoretical occupancy (`sm__maximum_warps_per_active_cycle_pct`, which no chip lists: ncu derives
it) is derived from `launch__occupancy_limit_*` and the warps per SM.

Where the warps wait, per instruction (profiler/ncu_source.py): the PC-sampled stall reasons above are
instanced per PC in every preset, within its passes. `profile --source` (with_source) adds what ncu's
SourceCounters section adds for reading them: executed instructions per PC (`inst_executed`, instanced,
SASS-patched) and the kernel's source files embedded in the report (`--import-source yes`: each line's
text; no replay pass).

Chips rename metrics: a preset names Hopper (gh100) metrics and `resolve` maps them to the chip's
own names (CHIP_NAMES) or drops what the chip lacks (CHIP_LACKS); the analysis reads either name
(profiler/ncu_tidy.py ALTERNATES). `resolve_preset` does it once per capture, for the chip given or
the device's, and its ResolvedPreset travels to ncu's command line and into the run's records.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.errors import BadInput
from kernels.hardware import CHIPS, HARDWARE_FILE, chip_of  # `ncu --list-chips` names, from the hardware table

STALL_REASONS = (
    "barrier",
    "branch_resolving",
    "dispatch_stall",
    "drain",
    "gmma",
    "imc_miss",
    "lg_throttle",
    "long_scoreboard",
    "math_pipe_throttle",
    "membar",
    "mio_throttle",
    "misc",
    "no_instruction",
    "not_selected",
    "selected",
    "short_scoreboard",
    "sleeping",
    "tex_throttle",
    "wait",
)
# PC sampling names two reasons differently from the stall counters (ncu's sections/CPIStall.py pairs them)
_PCSAMP_NAME = {"no_instruction": "no_instructions", "gmma": "warpgroup_arrive"}
PCSAMP_COUNT = "smsp__pcsamp_sample_count"


def stall_metric(reason: str) -> str:
    """The counter-based stall ratio: warps stalled for `reason` per issue-active cycle."""
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def pcsamp_metric(reason: str) -> str:
    """The PC-sampled stall count for `reason` (samples of warps stalled for it)."""
    return f"smsp__pcsamp_warps_issue_stalled_{_PCSAMP_NAME.get(reason, reason)}"


_E = ".avg.pct_of_peak_sustained_elapsed"
# Launch attributes and device attributes: read from the launch, no replay pass.
LAUNCH = (
    "gpu__time_duration.sum",
    "launch__waves_per_multiprocessor",
    "launch__grid_size",
    "launch__block_size",
    "launch__registers_per_thread",
    "launch__shared_mem_per_block",
    "device__attribute_display_name",
    "device__attribute_multiprocessor_count",
    "launch__occupancy_limit_registers",
    "launch__occupancy_limit_shared_mem",
    "launch__occupancy_limit_warps",
    "launch__occupancy_limit_blocks",
    "device__attribute_max_warps_per_multiprocessor",
)
# The breakdown units that led SM% / Memory% in the H200 --set full captures (see the module doc).
SM_KEY_UNITS = tuple(
    m + _E
    for m in (
        "sm__issue_active",
        "sm__pipe_alu_cycles_active",
        "sm__pipe_tensor_cycles_active",
        "sm__inst_executed_pipe_lsu",
    )
)
MEMORY_KEY_UNITS = tuple(
    m + _E
    for m in ("l1tex__data_pipe_lsu_wavefronts", "lts__t_sectors", "lts__lts2xbar_cycles_active", "dram__cycles_active")
)
ACHIEVED_OCCUPANCY = ("sm__warps_active.avg.pct_of_peak_sustained_active",)
STALL_SAMPLES = (PCSAMP_COUNT,) + tuple(pcsamp_metric(r) for r in STALL_REASONS)
# Hierarchical roofline: FLOPs (tensor, FP32) and bytes at L1, L2, DRAM, and the report's own peaks.
ROOFLINE_COUNTS = (
    "sm__ops_path_tensor_src_bf16_dst_fp32.sum",
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "l1tex__t_bytes.sum",
    "lts__t_bytes.sum",
    "dram__bytes.sum",
    "sm__cycles_elapsed.avg.per_second",
    "l1tex__cycles_elapsed.avg.per_second",
    "lts__cycles_elapsed.avg.per_second",
    "dram__cycles_elapsed.avg.per_second",
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained",
    "l1tex__t_bytes.sum.peak_sustained",
    "lts__t_bytes.sum.peak_sustained",
    "dram__bytes.sum.peak_sustained",
)


@dataclass(frozen=True)
class Preset:
    """What ncu is asked to collect: metrics, sections and sets, with the cost measured on the H200."""

    name: str
    description: str
    metrics: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()
    sets: tuple[str, ...] = ()
    passes_h200: int | None = None  # replay passes per launch, measured (see the module doc)
    options: tuple[str, ...] = ()  # other ncu options (--import-source yes)

    def ncu_args(self) -> list[str]:
        args: list[str] = list(self.options)
        for s in self.sets:
            args += ["--set", s]
        for s in self.sections:
            args += ["--section", s]
        if self.metrics:
            args += ["--metrics", ",".join(self.metrics)]
        return args


# Load imbalance: the busiest, average and idlest SM's cycles with a warp in flight.
SM_BUSY = ("sm__cycles_active.avg", "sm__cycles_active.max", "sm__cycles_active.min")
L2_HIT = ("lts__t_sector_hit_rate.pct",)
# The tensor pipe's instructions by MMA path: mma.sync (HMMA) against warpgroup MMA (HGMMA) on Hopper.
MMA_PATHS = ("sm__inst_executed_pipe_tensor_op_hmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum")
_VERDICT = LAUNCH + SM_KEY_UNITS + MEMORY_KEY_UNITS + ACHIEVED_OCCUPANCY + STALL_SAMPLES + SM_BUSY + L2_HIT
PRESETS = {
    "verdict": Preset(
        "verdict",
        "bound and cause: launch, 4+4 breakdown units, occupancy, sampled stalls, SM busy cycles, L2 hit rate",
        metrics=_VERDICT + ("dram__bytes.sum",) + MMA_PATHS,
        passes_h200=5,
    ),
    "roofline": Preset(
        "roofline",
        "verdict + FLOPs and bytes at L1, L2, DRAM (hierarchical roofline)",
        metrics=_VERDICT + ROOFLINE_COUNTS + MMA_PATHS,
        passes_h200=6,
    ),
    "full": Preset(
        "full", "ncu's --set full (every section, SOLBottleneck rule text included)", sets=("full",), passes_h200=38
    ),
    "pm-sampling": Preset(
        "pm-sampling",
        "verdict + ncu's PM sampling: throughput and warp states over each launch's lifetime (any kernel, no source)",
        metrics=_VERDICT + ("dram__bytes.sum",) + MMA_PATHS,
        sections=("PmSampling", "PmSampling_WarpStates"),
    ),
}
# `profile` default: 6 passes keep DRAM GB/s, the hierarchical roofline and the report charts;
# `--preset verdict` (4 passes) decides bound and cause alone.
DEFAULT_PRESET = "roofline"

# The presets above use gh100's names; CHIP_NAMES and CHIP_LACKS say how each other chip differs.
BASE_CHIP = "gh100"
CHIP_NAMES = {  # chip -> {gh100 name: that chip's name}
    "gb100": {
        "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": "sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
        # mma.sync on the tensor pipe's hmma subpipe; tcgen05 (UTCMMA) on the tc pipe, Blackwell's warpgroup successor
        "sm__inst_executed_pipe_tensor_op_hmma.sum": "sm__inst_executed_pipe_tensor_subpipe_hmma.sum",
        "sm__inst_executed_pipe_tensor_op_gmma.sum": "sm__inst_executed_pipe_tc.sum",
    },
    "gb202": {
        "dram__bytes_read.sum": "dram__bytes_op_read.sum",
        "dram__bytes_write.sum": "dram__bytes_op_write.sum",
        "dram__sectors_read.sum": "dram__sectors_op_read.sum",
        "dram__sectors_write.sum": "dram__sectors_op_write.sum",
        "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained": "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
        "sm__inst_executed_pipe_tensor_op_hmma.sum": "sm__inst_executed_pipe_tensor_subpipe_hmma.sum",
    },
}
_NO_GMMA = frozenset({stall_metric("gmma"), stall_metric("imc_miss"), pcsamp_metric("gmma"), pcsamp_metric("imc_miss")})
# Hopper-only stall reasons; sm_120 has neither warpgroup MMA nor tcgen05 (mma.sync only)
CHIP_LACKS = {"gb100": _NO_GMMA, "gb202": _NO_GMMA | {"sm__inst_executed_pipe_tensor_op_gmma.sum"}}


SOURCE_METRICS = ("inst_executed",)  # executed instructions per PC (instanced), as SourceCounters collects
SOURCE_OPTIONS = ("--import-source", "yes")  # embed the source files: each line's text in the report


def with_source(preset: Preset) -> Preset:
    """The preset plus the source counters and embedded source (module doc); its measured pass count
    no longer applies."""
    metrics = preset.metrics + tuple(m for m in SOURCE_METRICS if m not in preset.metrics) if preset.metrics else ()
    return Preset(
        preset.name,
        preset.description + "; + source counters (--source)",
        metrics,
        preset.sections,
        preset.sets,
        None,
        preset.options + SOURCE_OPTIONS,
    )


class UnknownPreset(BadInput):
    pass


class UnknownChip(BadInput):
    pass


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UnknownPreset(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None


def check_chip(chip: str) -> str:
    if chip not in CHIPS:
        raise UnknownChip(f"unknown chip {chip!r}; known: {', '.join(CHIPS)}")
    return chip


def resolve(preset: str | Preset, chip: str | None = BASE_CHIP) -> Preset:
    """The preset with the chip's own metric names, without those the chip lacks. chip None: as is."""
    p = get_preset(preset) if isinstance(preset, str) else preset
    if chip is None:
        return p
    check_chip(chip)
    names, lacks = CHIP_NAMES.get(chip, {}), CHIP_LACKS.get(chip, frozenset())
    metrics = tuple(dict.fromkeys(names.get(m, m) for m in p.metrics if m not in lacks))
    return Preset(
        p.name, p.description, metrics, p.sections, p.sets, p.passes_h200 if chip == BASE_CHIP else None, p.options
    )


@dataclass(frozen=True)
class ResolvedPreset:
    """A preset resolved once for one chip (resolve_preset): what ncu collects, and the (name, chip)
    a run records."""

    name: str
    chip: str
    ncu: Preset  # the chip's own metric names, without those it lacks (+ the source counters with --source)
    note: str | None = None  # said when the chip is a guess (an unknown device gets the gh100 names)

    @property
    def metrics(self) -> tuple[str, ...]:
        return self.ncu.metrics

    def ncu_args(self) -> list[str]:
        return self.ncu.ncu_args()


def resolve_preset(
    name: str | None = None, chip: str | None = None, device_name: str | None = None, source: bool = False
) -> ResolvedPreset:
    """`name` (default DEFAULT_PRESET) for `chip` if given, else for the chip of `device_name` (the
    hardware table); an unknown device gets the gh100 names and a note saying so (absent metrics come
    back n/a, never as wrong numbers). `source`: with_source. Unknown names are UnknownPreset/UnknownChip."""
    preset = get_preset(name or DEFAULT_PRESET)
    note = None
    if chip is None:
        chip = chip_of(device_name)
        if chip is None:
            note = (
                f"device {device_name!r} has no ncu chip in {HARDWARE_FILE}: using {BASE_CHIP} metric names"
                if device_name
                else f"no GPU name from nvidia-smi: using {BASE_CHIP} metric names"
            )
            chip = BASE_CHIP
    ncu = resolve(preset, check_chip(chip))
    return ResolvedPreset(preset.name, chip, with_source(ncu) if source else ncu, note)


def alternates(metric: str) -> tuple[str, ...]:
    """Every chip's name for a gh100 metric (itself first)."""
    return tuple(dict.fromkeys([metric] + [names[metric] for names in CHIP_NAMES.values() if metric in names]))
