"""Each kernel's own model: the bytes its algorithm moves (re-reads included), its grid against
the GPU's SMs, and the time that implies. Plain arithmetic on the launches kernels/launch.py
describes for the GPU's architecture (the ones the launchers run and `roofline compile` compiles).

Time model (an estimate, not a bound): the larger of
- all bytes the algorithm moves through the memory system / DRAM bandwidth, and
- the serial work of one program: its bytes / (DRAM bandwidth / SMs / programs resident per SM),
  times the waves (ceil(programs / (SMs x blocks per SM)); blocks per SM from a compile for the
  arch, else 1): each SM streams at its fair share of DRAM bandwidth. A lone SM can draw more than that, and a latency-bound one less (triton_mla on
  the H200 drew 10 GB/s per program against a 34 GB/s share), so compare with a profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from kernels.fast.common import TUNED_REFERENCE
from kernels.fast.paths import plan_fast, ragged
from kernels.launch import ARCHS, launch_specs
from kernels.plan import cdiv, code_path
from kernels.spec import DTYPE_BYTES, VerifyWorkload
from roofline.catalogue.gpus import GpuSpec

PARTIAL_BYTES = 4  # fp32 partial outputs of the split kernels


@dataclass(frozen=True)
class KernelModel:
    kernel: str
    programs: int
    sm_count: int
    waves: float
    moved_bytes: int  # through the memory system, re-reads included
    unique_bytes: int  # the least DRAM traffic it needs (KV once + scratch)
    per_program_bytes: float
    time_ms: float
    limited_by: str  # "bandwidth" or "serial program" (too few programs for the bytes each walks)
    notes: str
    arch: str = ""  # the launch configuration's architecture
    grid: tuple = ()  # of the main launch
    blocks_per_sm: int = 1  # resident programs per SM: from a compile of this arch, else assumed 1
    inputs: tuple = ()  # (name, value, kind, source): kind datasheet | measured | derived | unconfirmed


def _kind(source: str) -> str:
    """How the hardware table labels a number: 'derived', 'lead'/'unconfirmed' (unconfirmed), else datasheet."""
    s = source.lower()
    return "unconfirmed" if ("unconfirmed" in s or "lead" in s) else "derived" if "derived" in s else "datasheet"


def _inputs(kernel: str, gpu: GpuSpec, arch: str, bw, blocks_per_sm: int, compiled: dict | None) -> tuple:
    out = [
        ("sm_count", gpu.sm_count, _kind(gpu.sources.get("sm_count", "")), gpu.sources.get("sm_count", "")),
        ("dram_gbps", bw.value, bw.kind if bw.kind == "measured" else _kind(bw.source), bw.source),
    ]
    if arch != gpu.arch:
        out.append(
            ("launch configuration", arch, "unconfirmed", f"no launch configuration for {gpu.arch}; {arch}'s used")
        )
    elif kernel == "triton_mla_fast" and code_path(kernel, arch) == "gluon":
        out.append(
            (
                "launch configuration",
                arch,
                "measured",
                "the Gluon path's kernels.fast.common.GLUON_CONFIG, measured on the H200 (docs/results/fast-kernel.md)",
            )
        )
    elif kernel == "triton_mla_fast" and arch in TUNED_REFERENCE:
        out.append(
            (
                "launch configuration",
                arch,
                "measured",
                f"tuned on the {TUNED_REFERENCE[arch]} (kernels/data/tuned.json)",
            )
        )
    elif kernel == "triton_mla_fast":
        out.append(
            (
                "launch configuration",
                arch,
                "unconfirmed",
                f"kernels.fast.common.FAST_ARCH_CONFIGS[{arch!r}]: chosen to fit {arch}'s limits, untuned",
            )
        )
    else:
        out.append(("launch configuration", arch, "derived", f"kernels.launch for {arch} (SGLang's shape)"))
    if compiled:
        out.append(
            (
                "blocks_per_sm",
                blocks_per_sm,
                "derived",
                f"compiled for {arch} with triton {compiled['triton']} (roofline compile), limits from the CUDA guide",
            )
        )
    else:
        out.append(("blocks_per_sm", blocks_per_sm, "unconfirmed", "assumed 1; roofline model --compile derives it"))
    return tuple(out)


def kernel_model(
    kernel: str, w: VerifyWorkload, gpu: GpuSpec, compiled: dict | None = None, launch: dict | None = None
) -> KernelModel:
    """`compiled`: roofline.analysis.resources.kernel_resources(kernel, w, gpu.arch, gpu) for blocks per SM; else 1.
    `launch`: triton_mla_fast's launch parameters (e.g. {"schedule": "uniform"}: the grid before the batch
    schedule); its default plan otherwise."""
    arch = gpu.arch if gpu.arch in ARCHS else "sm_90"
    base = kernel.removesuffix("_graph")
    specs = (
        plan_fast(w, arch, gpu.sm_count, **launch).launches
        if launch and base == "triton_mla_fast"
        else launch_specs(kernel, w, arch, gpu.sm_count)
    )
    main = specs[0]
    blocks_per_sm = compiled["launches"][0]["blocks_per_sm"] if compiled else 1
    kv_total, kv_max = w.kv_tokens * w.token_bytes, w.max_kv_len * w.token_bytes  # closed form, any batch
    programs = main.programs
    if kernel == "triton_mla":
        per_req = programs // w.batch
        moved = per_req * kv_total
        unique, per_program = kv_total, kv_max
        notes = (
            f"grid (batch, heads, cdiv(q_len, {main.constexprs['BLOCK_M']})): each program walks its request's "
            f"whole prefix, so the KV is read {per_req}x (once per head)"
        )
    elif kernel == "triton_mla_decode":
        per_row = cdiv(w.heads, main.constexprs["BLOCK_H"])
        splits = main.constexprs["KV_SPLITS"]
        scratch = 2 * splits * w.batch * w.q_len * w.heads * (w.v_dim + 1) * PARTIAL_BYTES
        moved = w.q_len * per_row * kv_total + scratch
        unique, per_program = kv_total + scratch, kv_max / splits
        notes = (
            f"each of the q_len={w.q_len} draft rows re-reads the prefix ({w.q_len * per_row}x the KV), "
            f"{splits} splits per row, fp32 partials merged by a second kernel"
        )
    else:
        moved, unique, per_program, notes = _fast_bytes(w, arch, gpu.sm_count, kv_total, launch or {})
    ceiling = gpu.dram_ceiling()
    bw = ceiling.value * 1e9
    slots = gpu.sm_count * blocks_per_sm
    waves = programs / slots
    # Each SM streams at its fair share of DRAM bandwidth, split among the programs resident on it.
    resident = min(blocks_per_sm, cdiv(programs, gpu.sm_count))
    bandwidth_ms = moved / bw * 1e3
    serial_ms = cdiv(programs, slots) * per_program / (bw / gpu.sm_count / resident) * 1e3
    return KernelModel(
        kernel=kernel,
        programs=programs,
        sm_count=gpu.sm_count,
        waves=waves,
        moved_bytes=moved,
        unique_bytes=unique,
        per_program_bytes=per_program,
        time_ms=max(bandwidth_ms, serial_ms),
        limited_by="bandwidth" if bandwidth_ms >= serial_ms else "serial program",
        notes=notes,
        arch=arch,
        grid=main.grid,
        blocks_per_sm=blocks_per_sm,
        inputs=_inputs(kernel, gpu, arch, ceiling, blocks_per_sm, compiled),
    )


def _fast_bytes(w: VerifyWorkload, arch: str, sm_count: int, kv_total: int, launch: dict):
    """triton_mla_fast's (moved, unique, per-program bytes, notes) under its plan (kernels.fast.paths.plan_fast):
    the uniform schedule, grid (m_blocks, splits, batch), cuts every request at the longest one's split length and
    every program writes a partial; the batch schedule, grid (m_blocks, items, 1), cuts the batch's tokens into
    near-equal items and only the items of the requests it cut write partials (the others write their output)."""
    plan = plan_fast(w, arch, sm_count, **launch)
    split, sched = plan.split, plan.schedule
    m_blocks, block_m = split.grid[0], split.constexprs["BLOCK_M"]
    rows = w.q_len * w.heads  # one request's M rows
    part = PARTIAL_BYTES if split.signature["PartO"] == "*fp32" else DTYPE_BYTES[w.dtype]
    if sched is None:
        splits, split_len = split.grid[1], split.int_args["split_len"]
        partials = splits * w.batch  # every program's partial, read back by the combine
        shape = (
            f"the uniform schedule: every request cut into {splits} splits of {split_len} tokens (the longest "
            "request's)" + (", so a shorter request's programs carry less or nothing" if ragged(w) else "")
        )
    else:
        split_len = sched.split_len
        partials = sum(j[2] for j in sched.jobs)  # only the items of requests that were cut
        whole = (
            f"their {partials} items write partials, the other {len(sched.items) - partials} their output"
            if partials < len(sched.items)
            else "every item writes a partial"
        )
        shape = (
            f"the batch schedule: {len(sched.items)} items of at most {split_len} tokens over the SMs, "
            f"{len(sched.jobs)} of {w.batch} requests cut ({whole})"
        )
    scratch = 2 * partials * rows * (w.v_dim * part + PARTIAL_BYTES)  # written, then read by the combine
    notes = (
        f"{arch} launch: {m_blocks} M block(s) of {block_m} rows share each KV tile (re-reads hit L2 when they "
        f"run together); {shape}; partials + LSE merged after. Assumes the longest program ({split_len} tokens) "
        "sets the pace of its SM"
    )
    return m_blocks * kv_total + scratch, kv_total + scratch, split_len * w.token_bytes, notes


def share_gbps(gpu: GpuSpec) -> float:
    """One SM's fair share of DRAM bandwidth: the per-program rate the serial-program time assumes."""
    return gpu.dram_ceiling().value / gpu.sm_count


def assumption_note(model: KernelModel, gpu: GpuSpec) -> str:
    """What the model's time assumes, and how `analyze --gpu` differs, in one sentence."""
    if model.limited_by != "serial program":
        return (
            "assumes the bytes it moves stream at the full DRAM bandwidth; `roofline analyze RUN "
            "--gpu GPU` instead scales a measured time by the measured bound"
        )
    return (
        f"assumes each program streams its {model.per_program_bytes / 1e6:.1f} MB at one SM's share of "
        f"DRAM bandwidth ({share_gbps(gpu):.1f} GB/s on {gpu.short_name}); a latency-bound program draws "
        "only what its own loads in flight allow, which tracks the SM clock, not the bandwidth, so "
        "`roofline analyze RUN --gpu GPU` (measured time x SM clock ratio) is the number to "
        "trust for a profiled kernel"
    )


def compare_with_measurement(
    kernel: str, w: VerifyWorkload, source: GpuSpec, target: GpuSpec, measured_ms: float, projected_ms: float | None
) -> dict:
    """The kernel model against a profile of the same kernel and its projection: where they differ, why."""
    src, tgt = kernel_model(kernel, w, source), kernel_model(kernel, w, target)
    out = {
        "kernel": kernel,
        "model_ms_source": src.time_ms,
        "measured_ms_source": measured_ms,
        "model_ms_target": tgt.time_ms,
        "projected_ms_target": projected_ms,
        "limited_by": tgt.limited_by,
    }
    text = (
        f"kernel model (`roofline model --kernel {kernel}`): {src.time_ms:.3f} ms on {source.short_name} "
        f"against {measured_ms:.3f} ms measured, {tgt.time_ms:.3f} ms on {target.short_name}"
        + (f" against {projected_ms:.3f} ms projected" if projected_ms is not None else "")
    )
    if src.limited_by == "serial program":
        drawn = src.per_program_bytes / (measured_ms * 1e-3) / 1e9
        text += (
            f". The model assumes each program streams at one SM's share of DRAM bandwidth "
            f"({share_gbps(source):.1f} GB/s on {source.short_name}, {share_gbps(target):.1f} GB/s on "
            f"{target.short_name}); measured, each program drew {drawn:.1f} GB/s: it is latency-bound, "
            "so the projection scales the measured time by the SM clock instead, and the projection "
            "is the number to trust"
        )
    else:
        text += (
            ". The model streams the bytes at full DRAM bandwidth; the projection keeps the measured "
            "fraction of the roof"
        )
    out["explanation"] = text
    return out
