"""What one launch of a Triton kernel is (`LaunchSpec`), in plain Python (no torch, no triton), and
the pieces every kernel's specs share: pointer types by dtype, the architectures compiled for, the
running device's facts, and the combine kernel's spec.

`signature` lists every runtime argument in the jit function's order with the Triton type it gets at
run time (pointers with the workload's dtype); `int_args` holds the values of integer arguments that
follow from the workload (strides, row counts, split lengths), which Triton specializes on (1 becomes
a constant, multiples of 16 get a divisibility hint). Where the jit function takes some of them as one
tuple parameter, `tuples` names them, and the order is the flattened one.
"""

from __future__ import annotations

import re
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
    # A jit parameter that takes a tuple -> the names (of the signature or the constexprs) it holds, in order.
    # Triton flattens a tuple argument in order: the compiled kernel's parameters are the signature's.
    tuples: dict[str, tuple[str, ...]] = field(default_factory=dict)

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
            tuple((param, tuple(names)) for param, names in self.tuples.items()),
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

    def arguments(self, values: dict) -> dict:
        """The jit function's arguments by name: `values` (the runtime ones, by the signature's names) and the
        constexprs, the names of each tuple parameter (`tuples`) gathered into its tuple."""
        flat = {**values, **self.constexprs}
        held = {n for names in self.tuples.values() for n in names}
        named = {k: v for k, v in flat.items() if k not in held}
        return {**named, **{param: tuple(flat[n] for n in names) for param, names in self.tuples.items()}}


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


# The combine's launch shape (kernels/combine.py). A program holds one tile of partials, [splits, rows, BLOCK_D]
# (all of its rows' splits at once, so its loads go out together), at most COMBINE_TILE values: 64 fp32 a thread
# at 4 warps. A tile has a power of two of splits, the most slots rounded up, at most COMBINE_SPLITS (more are
# merged COMBINE_SPLITS at a time); requests with at most COMBINE_SHORT slots get a smaller tile of their own
# (more rows a program) where the longest request has more.
COMBINE_TILE = 8192
COMBINE_BLOCK_D = 128  # the most columns a program (16-byte loads: 4 fp32 a thread)
COMBINE_MIN_BLOCK_D = 32
COMBINE_ROWS = 16  # the most rows a program
COMBINE_SPLITS = 256
COMBINE_SHORT = 16
COMBINE_WARPS = 4
# A row of the batch schedule's merge table (int32): a request that was cut, its first partial slot, its slots,
# and the rows [row0, row0 + rows) of it that one program merges.
MERGE_FIELDS = ("request", "first_slot", "slots", "row0", "rows")


@dataclass(frozen=True)
class CombineShape:
    """The combine's knobs (all powers of two): `block_d` the most columns a program, `warps`, `rows` the most
    rows a program, `splits` the most splits a tile, `short` the most slots of a request that takes the short
    tile, `tile` the most partial values a program holds. Its name lists them (`bd128w4r16s256k16t8192`);
    CombineShape.parse reads a name back, or any part of one (the rest defaults)."""

    block_d: int = COMBINE_BLOCK_D  # bd
    warps: int = COMBINE_WARPS  # w
    rows: int = COMBINE_ROWS  # r
    splits: int = COMBINE_SPLITS  # s
    short: int = COMBINE_SHORT  # k
    tile: int = COMBINE_TILE  # t

    KEYS = {"bd": "block_d", "w": "warps", "r": "rows", "s": "splits", "k": "short", "t": "tile"}

    def __post_init__(self):
        for k, v in self.__dict__.items():
            if v < 1 or v & (v - 1):
                raise ValueError(f"combine shape: {k}={v} is not a power of two")

    @property
    def name(self) -> str:
        return "".join(f"{k}{getattr(self, f)}" for k, f in self.KEYS.items())

    @classmethod
    def parse(cls, text: str) -> CombineShape:
        """`bd64w4` -> CombineShape(block_d=64, warps=4), the rest the defaults; "" or "default": the defaults."""
        if text in ("", "default"):
            return cls()
        parts = re.findall(r"(bd|w|r|s|k|t)(\d+)", text)
        if "".join(k + v for k, v in parts) != text:
            raise ValueError(f"combine shape {text!r}: expected keys {', '.join(cls.KEYS)} each with a number")
        return cls(**{cls.KEYS[k]: int(v) for k, v in parts})


def combine_tiles(slots, v_dim: int, shape: CombineShape | None = None) -> dict[str, int]:
    """The combine's tiles for merges of `slots` partials (one count per request, or the one split count):
    BLOCK_D, and the long tile (SPLITS splits, ROWS rows) and the short one (SHORT, SHORT_ROWS) as constexprs.
    The long tile sets BLOCK_D (its SPLITS x BLOCK_D within the tile budget, at least COMBINE_MIN_BLOCK_D); each
    tile then takes as many rows as fit, at most shape.rows. Without requests of at most shape.short slots beside
    longer ones the short tile is the long one."""
    shape = shape or CombineShape()
    longest = max(slots)
    splits = min(next_power_of_2(longest), shape.splits)
    small = [n for n in slots if n <= shape.short]
    short = next_power_of_2(max(small)) if small and longest > shape.short else splits
    short = min(short, splits)
    block_d = min(shape.block_d, next_power_of_2(v_dim), max(COMBINE_MIN_BLOCK_D, shape.tile // splits))

    def rows(s: int) -> int:
        return max(1, min(shape.rows, shape.tile // (s * block_d)))

    return dict(BLOCK_D=block_d, SPLITS=splits, ROWS=rows(splits), SHORT=short, SHORT_ROWS=rows(short))


def rows_per_program(constexprs: dict, slots: int) -> int:
    """How many rows one program of the combine merges for a request of `slots` partials (its tile's rows)."""
    short = constexprs["SHORT"] < constexprs["SPLITS"] and slots <= constexprs["SHORT"]
    return constexprs["SHORT_ROWS"] if short else constexprs["ROWS"]


def combine_spec(
    splits: int,
    rows: int,
    v_dim: int,
    part_o: str = "*fp32",
    pdl: bool = False,
    shape: CombineShape | None = None,
) -> LaunchSpec:
    """kernels/combine.py over `splits` partials of `rows` rows: grid (programs, v_dim / BLOCK_D), a program
    merging a tile's rows (combine_tiles; `shape`: the knobs, default CombineShape()); part_o: the partials'
    type. pdl: launched as a programmatic dependent launch (the launcher drops it where the device has none)."""
    shape = shape or CombineShape()
    tiles = combine_tiles([splits], v_dim, shape)
    grid = (cdiv(rows, rows_per_program(tiles, splits)), cdiv(v_dim, tiles["BLOCK_D"]))
    return _combine_launch(grid, tiles, v_dim, part_o, pdl, shape, {"total_rows": rows, "num_splits": splits})


def _combine_launch(grid, tiles, v_dim, part_o, pdl, shape, int_args, job_rows: int = 0) -> LaunchSpec:
    """The combine's LaunchSpec: `tiles` (combine_tiles) over `grid`; with `job_rows`, each program's work a row of
    the batch schedule's merge table (Merges), else rows of the one partials array."""
    signature = {"PartO": part_o, "PartLse": "*fp32", "Out": "*bf16", "total_rows": "i32", "num_splits": "i32"}
    work = {"JOB_ROWS": job_rows} if job_rows else {"Merges": None, "JOB_ROWS": 0}
    if job_rows:
        signature["Merges"] = "*i32"
    return LaunchSpec(
        name="_combine_kernel",
        target="kernels.combine:_combine_kernel",
        grid=grid,
        signature=signature,
        constexprs=dict(D=v_dim, **tiles, PDL=pdl, **work),
        num_warps=shape.warps,
        num_stages=1,
        int_args=int_args,
    )


def merge_table(jobs, combine: LaunchSpec) -> list[tuple[int, int, int, int, int]]:
    """The programs of the `combine` launch (combine_jobs_spec) over the batch schedule's `jobs` (request, first
    slot, slots; kernels.fast.common BatchSchedule.jobs), its JOB_ROWS rows a request: one program per
    rows_per_program rows of a request; rows of MERGE_FIELDS, the most slots first (the GPU starts a grid's
    programs in order: the longest merges start first)."""
    job_rows = combine.constexprs["JOB_ROWS"]
    table = []
    for b, first, slots in jobs:
        per = rows_per_program(combine.constexprs, slots)
        table += [(b, first, slots, r0, min(per, job_rows - r0)) for r0 in range(0, job_rows, per)]
    table.sort(key=lambda t: (-t[2], t[0], t[3]))
    return table


def combine_jobs_spec(
    jobs, job_rows: int, v_dim: int, part_o: str = "*fp32", pdl: bool = False, shape: CombineShape | None = None
) -> LaunchSpec:
    """kernels/combine.py over the fast kernel's batch schedule: one program per row of merge_table and BLOCK_D
    columns, `jobs` the requests that were cut (request, first slot, slots), `job_rows` rows each."""
    shape = shape or CombineShape()
    tiles = combine_tiles([j[2] for j in jobs], v_dim, shape)
    programs = sum(cdiv(job_rows, rows_per_program(tiles, j[2])) for j in jobs)
    int_args = {"total_rows": job_rows, "num_splits": max(j[2] for j in jobs)}
    return _combine_launch(
        (programs, cdiv(v_dim, tiles["BLOCK_D"])), tiles, v_dim, part_o, pdl, shape, int_args, job_rows
    )


def reshaped_combine(spec: LaunchSpec, shape: CombineShape, jobs=None) -> LaunchSpec:
    """The combine launch `spec` (combine_spec or combine_jobs_spec, with its output type) in another `shape`;
    `jobs`: the batch schedule's, where `spec` merges by job."""
    d, pdl, part_o = spec.constexprs["D"], bool(spec.constexprs["PDL"]), spec.signature["PartO"]
    if spec.constexprs["JOB_ROWS"]:
        new = combine_jobs_spec(jobs, spec.constexprs["JOB_ROWS"], d, part_o=part_o, pdl=pdl, shape=shape)
    else:
        rows, splits = spec.int_args["total_rows"], spec.int_args["num_splits"]
        new = combine_spec(splits, rows, d, part_o=part_o, pdl=pdl, shape=shape)
    return LaunchSpec(**{**new.__dict__, "signature": {**new.signature, "Out": spec.signature["Out"]}})


def with_out_dtype(spec: LaunchSpec, dtype: str) -> LaunchSpec:
    return LaunchSpec(**{**spec.__dict__, "signature": {**spec.signature, "Out": POINTER[dtype]}})
