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


def combine_spec(
    splits: int,
    rows: int,
    v_dim: int,
    block_d: int | None = None,
    block_s: int | None = None,
    part_o: str = "*fp32",
    num_warps: int = 4,
    pdl: bool = False,
) -> LaunchSpec:
    """kernels/combine.py: one program per (row, BLOCK_D columns); part_o: the partials' type.
    BLOCK_S splits are read per step (default: all of them, up to 256, so one round trip to memory),
    BLOCK_D columns (default: 64, fewer past 128 splits so that a step holds 8,192 values).
    pdl: launched as a programmatic dependent launch (the launcher drops it where the device has none)."""
    block_s = block_s or min(next_power_of_2(splits), 256)
    block_d = min(block_d or max(16, min(64, 8192 // block_s)), v_dim)
    return LaunchSpec(
        name="_combine_kernel",
        target="kernels.combine:_combine_kernel",
        grid=(rows, cdiv(v_dim, block_d)),
        signature={"PartO": part_o, "PartLse": "*fp32", "Out": "*bf16", "total_rows": "i32", "num_splits": "i32"},
        constexprs=dict(D=v_dim, BLOCK_D=block_d, BLOCK_S=block_s, PDL=pdl, Jobs=None, JOB_ROWS=0),
        num_warps=num_warps,
        num_stages=3,
        int_args={"total_rows": rows, "num_splits": splits},
    )


def combine_jobs_spec(
    jobs: int, job_rows: int, max_slots: int, v_dim: int, part_o: str = "*fp32", num_warps: int = 4, pdl: bool = False
) -> LaunchSpec:
    """kernels/combine.py over the fast kernel's batch schedule: one program per (row of a request that was
    cut, BLOCK_D columns), `jobs` such requests of `job_rows` rows each, at most `max_slots` partials a request
    (BLOCK_S and BLOCK_D as combine_spec sizes them for that many splits)."""
    base = combine_spec(max_slots, job_rows, v_dim, part_o=part_o, num_warps=num_warps, pdl=pdl)
    constexprs = {k: v for k, v in base.constexprs.items() if k != "Jobs"}
    return LaunchSpec(
        name=base.name,
        target=base.target,
        grid=(jobs * job_rows, base.grid[1]),
        signature={**base.signature, "Jobs": "*i32"},
        constexprs={**constexprs, "JOB_ROWS": job_rows},
        num_warps=num_warps,
        num_stages=base.num_stages,
        int_args={"total_rows": job_rows, "num_splits": max_slots},
    )


def with_out_dtype(spec: LaunchSpec, dtype: str) -> LaunchSpec:
    return LaunchSpec(**{**spec.__dict__, "signature": {**spec.signature, "Out": POINTER[dtype]}})
