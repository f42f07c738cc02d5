"""What one launch of a Triton kernel is (`LaunchSpec`), in plain Python (no torch, no triton), and
the pieces every kernel's specs share: pointer types by dtype, the architectures compiled for, the
running device's facts, and the combine kernel's spec.

`signature` lists every runtime argument in the jit function's order with the Triton type it gets at
run time (pointers with the workload's dtype); `int_args` holds the values of integer arguments that
follow from the workload (strides, row counts, split lengths), which Triton specializes on (1 becomes
a constant, multiples of 16 get a divisibility hint).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from importlib import import_module

from kernels.hardware import ARCHS as ARCHS  # compiled for: the architectures with limits in the hardware table
from kernels.hardware import reference_gpu
from kernels.plan import cdiv, normalise_arch

INTERPRETER_ARCH = "sm_90"  # the CPU interpreter is sized as this architecture's reference GPU (the H200)
POINTER = {"bf16": "*bf16", "fp16": "*fp16", "fp32": "*fp32"}


@dataclass(frozen=True)
class LaunchSpec:
    name: str  # the @triton.jit function's name, as ncu reports it
    target: str  # "module:attribute" of the jit function (imported only to compile or run it)
    grid: tuple[int, ...]
    signature: dict[str, str]  # runtime arguments in order -> Triton type ("*bf16", "i32", "fp32")
    constexprs: dict[str, int | str]
    num_warps: int
    num_stages: int
    int_args: dict[str, int] = field(default_factory=dict)

    def key(self) -> tuple:
        """Everything that decides the compiled code and the grid, as a hashable tuple."""
        return (
            self.target,
            self.grid,
            tuple(self.signature.items()),
            tuple(sorted(self.constexprs.items())),
            tuple(sorted(self.int_args.items())),
            self.num_warps,
            self.num_stages,
        )

    def __hash__(self) -> int:
        return hash(self.key())

    @property
    def programs(self) -> int:
        n = 1
        for g in self.grid:
            n *= g
        return n

    @property
    def threads(self) -> int:
        return 32 * self.num_warps

    def load(self):
        module, attr = self.target.split(":")
        return getattr(import_module(module), attr)


def next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def device_facts(device) -> tuple[str, int, str]:
    """(name, SM count, "sm_XY") of a torch device, the one place a launcher asks torch which GPU it
    runs on; the CPU interpreter is sized as INTERPRETER_ARCH's reference GPU (132 SMs)."""
    return _device_facts(str(device))


@cache
def _device_facts(device: str) -> tuple[str, int, str]:
    import torch  # lazy: only a launcher calls this, with torch already loaded

    dev = torch.device(device)
    if dev.type != "cuda":
        return "cpu", reference_gpu(INTERPRETER_ARCH).sm_count, INTERPRETER_ARCH
    props = torch.cuda.get_device_properties(dev)
    return props.name, props.multi_processor_count, f"sm_{props.major}{props.minor}"


def pdl_arch(arch: str) -> bool:
    """Whether `arch` has programmatic dependent launch (sm_90 and later)."""
    try:
        return int(normalise_arch(arch).removeprefix("sm_")) >= 90
    except ValueError:
        return False


# The combine's shapes (kernels/combine.py): BLOCK_D columns a program (16-byte loads: 4 fp32 a thread, 32 threads
# a warp), rows with at least COMBINE_LONG partials merged one at a time with that many splits a step, rows with
# fewer COMBINE_ROWS at a time.
COMBINE_BLOCK_D = 128
COMBINE_LONG = 32
COMBINE_ROWS = 16
# A row of the batch schedule's merge table (int32): a request that was cut, its first partial slot, its slots,
# and the rows [row0, row0 + rows) of it that one program merges.
MERGE_FIELDS = ("request", "first_slot", "slots", "row0", "rows")


def combine_spec(
    splits: int,
    rows: int,
    v_dim: int,
    block_d: int | None = None,
    part_o: str = "*fp32",
    num_warps: int = 4,
    pdl: bool = False,
) -> LaunchSpec:
    """kernels/combine.py over `splits` partials of `rows` rows: grid (programs, v_dim / BLOCK_D), a program
    merging one row where splits >= COMBINE_LONG, else COMBINE_ROWS rows; part_o: the partials' type.
    pdl: launched as a programmatic dependent launch (the launcher drops it where the device has none)."""
    block_d = min(block_d or COMBINE_BLOCK_D, v_dim)
    per = 1 if splits >= COMBINE_LONG else COMBINE_ROWS
    return LaunchSpec(
        name="_combine_kernel",
        target="kernels.combine:_combine_kernel",
        grid=(cdiv(rows, per), cdiv(v_dim, block_d)),
        signature={"PartO": part_o, "PartLse": "*fp32", "Out": "*bf16", "total_rows": "i32", "num_splits": "i32"},
        constexprs=dict(
            D=v_dim, BLOCK_D=block_d, LONG=COMBINE_LONG, ROWS=COMBINE_ROWS, PDL=pdl, Merges=None, JOB_ROWS=0
        ),
        num_warps=num_warps,
        num_stages=1,
        int_args={"total_rows": rows, "num_splits": splits},
    )


def merge_table(jobs, job_rows: int) -> list[tuple[int, int, int, int, int]]:
    """The combine's programs over the batch schedule's `jobs` (request, first slot, slots; kernels.fast.common
    BatchSchedule.jobs), `job_rows` rows a request: one program per row of a request with at least COMBINE_LONG
    slots, one per COMBINE_ROWS rows of the others; rows of MERGE_FIELDS, the most slots first (the GPU starts
    a grid's programs in order: the longest merges start first)."""
    table = []
    for b, first, slots in jobs:
        per = 1 if slots >= COMBINE_LONG else COMBINE_ROWS
        table += [(b, first, slots, r0, min(per, job_rows - r0)) for r0 in range(0, job_rows, per)]
    table.sort(key=lambda t: (-t[2], t[0], t[3]))
    return table


def combine_jobs_spec(
    jobs, job_rows: int, v_dim: int, part_o: str = "*fp32", num_warps: int = 4, pdl: bool = False
) -> LaunchSpec:
    """kernels/combine.py over the fast kernel's batch schedule: one program per row of merge_table(jobs,
    job_rows) and BLOCK_D columns, `jobs` the requests that were cut (request, first slot, slots), `job_rows`
    rows each."""
    table = merge_table(jobs, job_rows)
    base = combine_spec(max(j[2] for j in jobs), job_rows, v_dim, part_o=part_o, num_warps=num_warps, pdl=pdl)
    constexprs = {k: v for k, v in base.constexprs.items() if k != "Merges"}
    return LaunchSpec(
        name=base.name,
        target=base.target,
        grid=(len(table), base.grid[1]),
        signature={**base.signature, "Merges": "*i32"},
        constexprs={**constexprs, "JOB_ROWS": job_rows},
        num_warps=num_warps,
        num_stages=base.num_stages,
        int_args={"total_rows": job_rows, "num_splits": base.int_args["num_splits"]},
    )


def with_out_dtype(spec: LaunchSpec, dtype: str) -> LaunchSpec:
    return LaunchSpec(**{**spec.__dict__, "signature": {**spec.signature, "Out": POINTER[dtype]}})
