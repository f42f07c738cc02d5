"""`roofline bench` as an API: time kernels over a grid of workloads against the ceilings measured in
the same run (needs a GPU), or re-read a saved bench.json (no GPU). Returns a BenchRun; the CLI only
parses options and prints reports.text.render_bench of it."""

from __future__ import annotations

import dataclasses
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from kernels.batches import SERVING, SERVING_MASK, SERVING_PAGE_SIZE, BenchPoint, drawn, make_workload
from kernels.errors import RooflineError
from kernels.hardware import NoLocalGpu, local_gpu
from kernels.spec import VerifyWorkload
from profiler.checks import number_problem, strict_json
from profiler.clocks import CLOCK_COLUMNS, ClockSampler
from profiler.errors import ReportError, refuse_special
from profiler.staging import Staged
from roofline.analysis.bench_table import at_size_columns, bench_table
from roofline.analysis.scaling import ScalingFit, scaling_fits
from roofline.catalogue.gpus import match_gpu

META_NEEDS = {"device", "read_gbps", "copy_gbps", "matmul_tflops"}
ROW_KEYS = ("kernel", "ctx_len", "page_size", "heads", "q_len", "batch", "mask")  # one row per point
ROW_NEEDS = {
    "kernel",
    "ctx_len",
    "page_size",
    "heads",
    "q_len",
    "batch",
    "median_ms",
    "kv_bytes",
    "tflops",
    "eff_gbps",
    "floor_ms",
    "gap",
    "speedup_vs_triton_mla",
}
# The numbers of a row as bench_table writes them: each checked where it is read (profiler/checks.py);
# TIMED ones must be there unless the row records an error, POSITIVE ones above 0 (times, sizes, rates).
INTEGERS = {"ctx_len", "page_size", "heads", "q_len", "batch", "kv_bytes"}
TIMED = {"median_ms", "kv_bytes", "eff_gbps", "floor_ms", "gap"}
POSITIVE = INTEGERS | TIMED | {"at_size_ms", "gap_at_size", "speedup_vs_triton_mla", "x_read"}
CLOCKS = set(CLOCK_COLUMNS) - {"throttled"}  # each row's GPU clocks while timed; null where not read
NUMBERS = POSITIVE | CLOCKS | {"tflops", "pct_of_read_bw", "pct_of_matmul"}


@dataclass
class BenchRun:
    """A benchmark: its meta (GPU, driver, versions, the ceilings measured with it, the timing method),
    one row per point (bench_table's columns) and the time = fixed + bytes / rate fits."""

    meta: dict
    table: pd.DataFrame
    fits: list[ScalingFit] = field(default_factory=list)

    def to_json(self) -> str:
        """bench.json: strict JSON (null where a number is unknown, never NaN)."""
        return (
            strict_json(
                {
                    "meta": self.meta,
                    "rows": json.loads(self.table.to_json(orient="records")),
                    "scaling": [dataclasses.asdict(f) for f in self.fits],
                }
            )
            + "\n"
        )

    def save(self, out: Path | Staged, force: bool = False) -> list[Path]:
        """bench.json and bench.csv in the folder `out` (or the outputs `bench_outputs` claimed before the
        timing began), put in place together; an earlier bench there is refused unless `force`."""
        staged = out if isinstance(out, Staged) else bench_outputs(Path(out), force)
        with staged:
            self.table.to_csv(staged.path(staged.finals[1]), index=False)
            staged.path(staged.finals[0]).write_text(self.to_json())
            return staged.commit()


def bench_outputs(out: Path, force: bool = False) -> Staged:
    """bench.json and bench.csv in the folder `out`, claimed before any timing (profiler/staging.py): an
    earlier bench there is refused now unless `force`, not after minutes on the GPU."""
    return Staged(
        [Path(out) / "bench.json", Path(out) / "bench.csv"],
        force=force,
        hint="pass --force to replace it, or choose another --out",
        keep=True,
    )


def read_bench(path: Path) -> BenchRun:
    """A bench.json that `roofline bench` wrote, checked field by field (ReportError naming the file)."""
    refuse_special(path)
    try:
        data = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReportError(f"{path}: not a bench.json from `roofline bench` ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) or not isinstance(data.get("rows"), list):
        raise ReportError(f"{path}: not a bench.json from `roofline bench` (no 'meta' and 'rows')")
    meta = data["meta"]
    if missing := sorted(META_NEEDS - set(meta)):
        raise ReportError(f"{path}: its 'meta' lacks {', '.join(missing)}")
    for key in ("read_gbps", "copy_gbps", "matmul_tflops"):  # the fits divide by them
        if problem := number_problem(meta[key], maximum=1e6):
            raise ReportError(f"{path}: meta.{key} {problem}")
    if not data["rows"]:
        raise ReportError(f"{path}: no rows: the bench it saved timed nothing")
    if not all(isinstance(r, dict) for r in data["rows"]):
        raise ReportError(f"{path}: its rows must be JSON objects")
    table = pd.DataFrame(data["rows"])
    if missing := sorted(ROW_NEEDS - set(table.columns)):
        raise ReportError(f"{path}: its rows lack {', '.join(missing)}")
    table["error"] = table["error"].fillna("") if "error" in table.columns else ""
    for col in ("row", "lens", "ctx_lens", "throttled"):  # text columns absent from benches before them
        table[col] = table[col].fillna("").astype(str) if col in table.columns else ""
    for i, row in enumerate(data["rows"]):  # every number where it is read: a time of -1 ms is no time
        for col in sorted(set(row) & NUMBERS):
            timed = not row.get("error") and col in TIMED
            if problem := number_problem(row[col], positive=col in POSITIVE, integer=col in INTEGERS, null=not timed):
                raise ReportError(f"{path}: rows[{i}].{col} {problem}")
    keys = [k for k in (*ROW_KEYS, "row", "ctx_lens") if k in table.columns]  # a ragged row is its lengths too
    twice = table.duplicated(keys, keep=False)
    if twice.any():
        rows = [int(i) for i in table.index[twice]]
        point = ", ".join(f"{k}={table.loc[rows[0], k]}" for k in keys if table.loc[rows[0], k] != "")
        raise ReportError(f"{path}: rows {rows[0]} and {rows[1]} time the same point ({point}): keep one")
    for col in sorted(ROW_NEEDS - {"kernel"}):  # JSON wrote NaN (no baseline row, say) as null
        table[col] = pd.to_numeric(table[col], errors="coerce")
    if bad := [i for i, r in table.iterrows() if not _lens_ok(r)]:
        raise ReportError(
            f"{path}: rows[{bad[0]}].ctx_lens must be {table.batch[bad[0]]:.0f} comma-separated prefix lengths, "
            f"got {json.dumps(table.ctx_lens[bad[0]])}"
        )
    if "at_size_ms" not in table.columns:  # saved before the at-size floor: from the catalogue's fit
        table = at_size_columns(table, match_gpu(meta["device"]))
    return BenchRun(meta, table, scaling_fits(table, meta["read_gbps"], meta["matmul_tflops"]))


def grid_points(
    ctx_lens: list[int],
    page_sizes: list[int],
    heads: list[int],
    masks: tuple[str, ...] = ("tree",),
    q_lens: Sequence[int] = (9,),
    batch: int = 1,
) -> list[BenchPoint]:
    """Every ctx x page size x heads x mask x q_len, mask-major (the order bench_grid times them in), `batch` equal
    requests each."""
    return [
        BenchPoint(VerifyWorkload(ctx_len=c, heads=h, q_len=q, page_size=p, batch=batch, tree_mask=m))
        for m, q, h, p, c in itertools.product(masks, q_lens, heads, page_sizes, ctx_lens)
    ]


def lens_points(
    lens: list[str],
    batch: int | None,
    seed: int,
    page_sizes: list[int],
    heads: list[int],
    masks: tuple[str, ...] = ("tree",),
    q_lens: Sequence[int] = (9,),
) -> list[BenchPoint]:
    """Each ragged batch (kernels/batches.py's text; `batch` and `seed` draw a uniform one) x page size x heads x
    mask x q_len. WorkloadError (one line) for a batch that cannot be made."""
    return [
        BenchPoint(
            make_workload(
                lens=text,
                batch=batch if drawn(text) else None,
                seed=seed,
                heads=h,
                q_len=q,
                page_size=p,
                tree_mask=m,
            ),
            "",
            text,
        )
        for text in lens
        for m, q, h, p in itertools.product(masks, q_lens, heads, page_sizes)
    ]


def serving_points(page_size: int = SERVING_PAGE_SIZE, mask: str = SERVING_MASK) -> list[BenchPoint]:
    """The serving rows (kernels.batches.SERVING), each a named point."""
    return [BenchPoint(r.workload(page_size, mask), r.name, r.lens) for r in SERVING]


def _lens_ok(r) -> bool:
    """A row's ctx_lens is empty (equal requests) or its batch's lengths, each a whole number of tokens."""
    text = r["ctx_lens"]
    if not text:
        return True
    parts = text.split(",")
    return all(p.strip().isdigit() and int(p) > 0 for p in parts) and len(parts) == r["batch"]


def run_bench(
    kernels: list[str],
    ctx_lens: list[int] | None = None,
    page_sizes: list[int] | None = None,
    heads: list[int] | None = None,
    masks: tuple[str, ...] = ("tree",),
    q_lens: Sequence[int] = (9,),
    method: str = "rotated",
    progress: Callable[[str], None] | None = None,
    points: list[BenchPoint] | None = None,
) -> BenchRun:
    """Measure the ceilings (4 GiB copy and read, a large bf16 matmul), then time every kernel on every point
    by `method` (profiler/bench.py): `points` (grid_points, lens_points, serving_points), or the grid of
    ctx_lens x page_sizes x heads x masks. Needs a CUDA GPU."""
    if points is None:
        if not (ctx_lens and page_sizes and heads):
            raise ValueError("run_bench needs points, or ctx_lens, page_sizes and heads")
        points = grid_points(ctx_lens, page_sizes, heads, masks, q_lens)
    import torch  # lazy: only a GPU run needs torch and triton
    import triton  # lazy, as above

    from profiler.bench import bench_points, measure_ceilings  # lazy: imports torch at module level

    say = progress or (lambda msg: None)
    if not torch.cuda.is_available():
        raise RooflineError("roofline bench needs a CUDA GPU (torch sees none)")  # exit 1, as calibrate
    say("measuring ceilings: 4 GiB copy and read, 8192^3 bf16 matmul")
    ceil = measure_ceilings()
    gpu = match_gpu(ceil.device)
    if gpu is None:
        raise ReportError(f"{ceil.device!r} is not in the hardware table (kernels/data/hardware.json)")
    meta = {
        **ceil.__dict__,
        "driver": _driver(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "method": method,
    }
    clocks = ClockSampler()
    times = bench_points(kernels, points, progress=say, method=method, clocks=clocks)
    meta["clocks"] = "nvml" if clocks.why is None else f"unavailable ({clocks.why})"
    table = bench_table(
        times, gpu, ceil.read_gbps, ceil.matmul_tflops, source=f"measured by roofline bench on this {ceil.device}"
    )
    return BenchRun(meta, table, scaling_fits(table, ceil.read_gbps, ceil.matmul_tflops))


def _driver() -> str:
    """The local driver's version (kernels.hardware.local_gpu), "unknown" when nvidia-smi gives none."""
    try:
        return local_gpu().driver or "unknown"
    except NoLocalGpu:
        return "unknown"
