"""Serving batches: the per-request prefix lengths of a ragged verify step, from a short text.

    4k,128k,2k                 one prefix per request, as listed (the batch is their count)
    uniform:1k-32k             `batch` prefixes drawn uniformly from 1k..32k (inclusive), seeded
    mix:1x128k,15x2k           counts of lengths: a skewed mix (one long request among short ones)
    file:lens.txt              one length per line (`#` comments), e.g. taken from a serving trace

Lengths take the same forms as `--ctx` (`131072`, `128k`, `1m`). Drawn batches depend only on the text,
the batch and the seed (Python's `random.Random(seed).random()`, stable across versions), so a run's
spec.json, which records the lengths themselves, and the command that drew them agree.
"""

from __future__ import annotations

import random
from pathlib import Path

from kernels.spec import WorkloadError, ctx_text, parse_ctx_len

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
