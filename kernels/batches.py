"""Serving batches: the per-request prefix lengths of a ragged verify step, from a short text.

    4k,128k,2k                 one prefix per request, as listed (the batch is their count)
    uniform:1k-32k             `batch` prefixes drawn uniformly from 1k..32k (inclusive), seeded
    mix:1x128k,15x2k           counts of lengths: a skewed mix (one long request among short ones)
    file:lens.txt              one length per line (`#` comments), e.g. taken from a serving trace

Lengths take the same forms as `--ctx` (`131072`, `128k`, `1m`). Drawn batches depend only on the text,
the batch and the seed (Python's `random.Random(seed).random()`, stable across versions), so a run's
spec.json, which records the lengths themselves, and the command that drew them agree. `lens_text` writes
a batch's lengths back as a text that gives exactly them, in order (what a report's Reproduce section shows),
`make_workload` builds the workload every command and the API take, and `SERVING` names the serving rows
(`roofline bench --serving`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
import statistics
from dataclasses import dataclass
from pathlib import Path

from kernels.spec import VerifyWorkload, WorkloadError, ctx_text, parse_ctx_len

KINDS = ("list", "uniform", "mix", "file")
MAX_BATCH = 4096  # requests in one verify step; a larger number is a typo, not a serving batch


def _length(text: str, where: str) -> int:
    try:
        return parse_ctx_len(text.strip())
    except WorkloadError as exc:
        raise WorkloadError(f"{where}: {exc}") from None


def _check_batch(n: int, where: str) -> None:
    if not 1 <= n <= MAX_BATCH:
        raise WorkloadError(f"{where}: a batch of {n} requests (1 to {MAX_BATCH})")


def _uniform(body: str, batch: int | None, seed: int, where: str) -> tuple[int, ...]:
    low_high = body.split("-")
    if len(low_high) != 2:
        raise WorkloadError(f"{where}: uniform needs a range LOW-HIGH, e.g. uniform:1k-32k")
    low, high = (_length(t, where) for t in low_high)
    if low > high:
        raise WorkloadError(f"{where}: the range's low end {ctx_text(low)} is above its high end {ctx_text(high)}")
    if batch is None:
        raise WorkloadError(f"{where}: a drawn batch needs its size (--batch N)")
    _check_batch(batch, where)
    rng = random.Random(seed)
    span = high - low + 1
    return tuple(low + min(span - 1, int(rng.random() * span)) for _ in range(batch))


def _mix(body: str, where: str) -> tuple[int, ...]:
    lens: list[int] = []
    for part in body.split(","):
        count, sep, length = part.strip().partition("x")
        if not sep or not count.strip().isdigit() or int(count) < 1:
            raise WorkloadError(f"{where}: mix parts are COUNTxLENGTH (e.g. mix:1x128k,15x2k), got {part.strip()!r}")
        lens += [_length(length, where)] * int(count)
    _check_batch(len(lens), where)
    return tuple(lens)


def _file(body: str, where: str) -> tuple[int, ...]:
    path = Path(body)
    if not path.is_file():
        raise WorkloadError(f"{where}: {path} is not a file (one prefix length per line)")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise WorkloadError(f"{where}: cannot read {path}: {exc}") from None
    lens = []
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            lens.append(_length(line, f"{path}:{n}"))
    if not lens:
        raise WorkloadError(f"{where}: {path} holds no lengths")
    _check_batch(len(lens), where)
    return tuple(lens)


def parse_lens(text: str, batch: int | None = None, seed: int = 0) -> tuple[int, ...]:
    """The prefix lengths `text` describes (module doc); `batch` sizes a drawn batch and must match a
    listed one when given. One-line WorkloadError for anything else."""
    where = f"prefix lengths {text!r}"
    kind, sep, body = str(text).partition(":")
    kind = kind.strip().lower()
    if not sep:
        lens = tuple(_length(t, where) for t in str(text).split(",")) if str(text).strip() else ()
        if not lens:
            raise WorkloadError(f"{where}: no lengths")
        _check_batch(len(lens), where)
    elif kind == "uniform":
        lens = _uniform(body, batch, seed, where)
    elif kind == "mix":
        lens = _mix(body, where)
    elif kind == "file":
        lens = _file(body, where)
    else:
        raise WorkloadError(
            f"{where}: unknown kind {kind!r}; known: 4k,128k (a list), uniform:LOW-HIGH, mix:NxLEN,..., file:PATH"
        )
    if batch is not None and kind != "uniform" and batch != len(lens):
        raise WorkloadError(f"{where}: {len(lens)} lengths for --batch {batch} (leave --batch out for a list)")
    return lens


def drawn(text: str) -> bool:
    """Whether a batch text is drawn (uniform:LOW-HIGH, sized by --batch) rather than listed."""
    return str(text).partition(":")[0].strip().lower() == "uniform" and ":" in str(text)


def lens_text(ctx_lens) -> str:
    """The shortest text parse_lens reads back as exactly these lengths, in order: a list (`4k,128k,2k`), or
    runs of equal lengths as a mix (`mix:1x128k,15x2k`) where that is shorter."""
    lens = [int(c) for c in ctx_lens]
    listed = ",".join(ctx_text(c) for c in lens)
    runs: list[list[int]] = []
    for c in lens:
        if runs and runs[-1][1] == c:
            runs[-1][0] += 1
        else:
            runs.append([1, c])
    mixed = "mix:" + ",".join(f"{n}x{ctx_text(c)}" for n, c in runs)
    return mixed if len(mixed) < len(listed) else listed


def lens_tag(ctx_lens) -> str:
    """A short name for a ragged batch: its shortest and longest prefix and 6 hex digits of its lengths
    (`2k-128k-1f3a9c`), so two batches of the same heads and size get different run and point names."""
    lens = [int(c) for c in ctx_lens]
    digest = hashlib.sha256(",".join(map(str, lens)).encode()).hexdigest()[:6]
    return f"{ctx_text(min(lens))}-{ctx_text(max(lens))}-{digest}"


@dataclass(frozen=True)
class BatchShape:
    """What a report says of a batch's prefixes: how many, the shortest, the median and the longest."""

    count: int
    min: int
    median: float
    max: int
    tokens: int  # the prefixes' sum

    @classmethod
    def of(cls, ctx_lens) -> BatchShape:
        lens = [int(c) for c in ctx_lens]
        return cls(len(lens), min(lens), float(statistics.median(lens)), max(lens), sum(lens))

    def describe(self) -> str:
        """`16 requests, prefixes 2k / 2k / 128k (min / median / max)`."""
        med = ctx_text(int(self.median)) if self.median == int(self.median) else f"{self.median:g}"
        return (
            f"{self.count} request{'s' if self.count != 1 else ''}, prefixes {ctx_text(self.min)} / {med} / "
            f"{ctx_text(self.max)} (min / median / max)"
        )


def make_workload(
    ctx: int | str | None = None,
    lens: str | None = None,
    batch: int | None = None,
    seed: int = 0,
    **fields,
) -> VerifyWorkload:
    """The workload of the CLI's options and the API's arguments: `ctx` (128k, 131072; or `ctx_len`) for
    `batch` equal requests (default 1), or `lens` (parse_lens' text, drawn with `seed`), which replaces `ctx`.
    Lengths that are all equal give the same workload as `ctx` and `batch` (no per-request list: the kernels
    launch it alike). One-line WorkloadError for what cannot describe a verify step."""
    if "ctx_len" in fields:  # the CLI's --ctx (its default too, which a --lens batch replaces)
        ctx_len = fields.pop("ctx_len")
        if ctx is not None and parse_ctx_len(ctx) != parse_ctx_len(ctx_len):
            raise WorkloadError(f"two context lengths: ctx={ctx!r} and ctx_len={ctx_len!r}")
        ctx = ctx_len
    if lens is not None:
        ctx_lens = parse_lens(lens, batch, seed)
        ragged = len(set(ctx_lens)) > 1
        return VerifyWorkload(
            ctx_len=max(ctx_lens), batch=len(ctx_lens), ctx_lens=ctx_lens if ragged else None, seed=seed, **fields
        )
    ctx_len = parse_ctx_len(128 * 1024 if ctx is None else ctx)
    return VerifyWorkload(ctx_len=ctx_len, batch=1 if batch is None else batch, seed=seed, **fields)


def workload_args(w: VerifyWorkload) -> list[str]:
    """The workload options (`roofline profile`, `check`, `model`, ...) that give exactly `w`: a ragged
    batch as lens_text of its lengths, so a report reproduces it without the draw or the file it came from."""
    if w.ctx_lens is not None:
        size = ["--lens", lens_text(w.ctx_lens)]
    else:
        size = ["--ctx", ctx_text(w.ctx_len)] + (["--batch", str(w.batch)] if w.batch != 1 else [])
    out = size + ["--heads", str(w.heads), "--q-len", str(w.q_len), "--page-size", str(w.page_size)]
    out += ["--mask", w.tree_mask] + (["--seed", str(w.seed)] if w.seed else [])
    return out


@dataclass(frozen=True)
class ServingRow:
    """One of the serving rows: a batch (parse_lens' text, drawn with `seed`; one length: batch 1), its
    heads and draft rows."""

    name: str
    lens: str
    batch: int | None
    heads: int
    q_len: int
    seed: int = 0

    def workload(self, page_size: int = 64, tree_mask: str = "chain") -> VerifyWorkload:
        """The row's workload: its fields but its name are make_workload's keywords."""
        row = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "name"}
        return make_workload(**row, page_size=page_size, tree_mask=tree_mask)


@dataclass(frozen=True)
class BenchPoint:
    """One workload `roofline bench` times every kernel on (profiler.bench.bench_points): a grid point, or a
    named row (SERVING) with the batch text it was drawn from."""

    workload: VerifyWorkload
    row: str = ""  # the row's name; "" for a grid point
    lens: str = ""  # the batch as given (parse_lens' text), "" for equal requests


# The serving rows (page 64, chain mask: the shape FlashMLA runs). even16 is skew16's bytes in a
# batch of equal requests ((131072 + 15 x 2048) / 16 = 10112 tokens each): the ground truth that the skewed batch's
# loss is its schedule, not its bytes. The drawn rows take seed 0, the draw
# docs/results/h200-serving-g1/ timed.
SERVING = (
    ServingRow("ragged32", "uniform:1k-32k", 32, 16, 2),
    ServingRow("ragged8", "uniform:4k-128k", 8, 8, 9),
    ServingRow("skew16", "mix:1x128k,15x2k", None, 16, 4),
    ServingRow("even16", "mix:16x10112", None, 16, 4),
    ServingRow("b1h8", "128k", None, 8, 9),
    ServingRow("b1h64", "128k", None, 64, 9),
)
SERVING_PAGE_SIZE, SERVING_MASK = 64, "chain"
