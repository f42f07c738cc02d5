"""Statistics of timing samples: the Mann-Whitney U test and a bootstrap confidence interval of the
ratio of medians (numpy only; no scipy).

The U test is the one asv and Google Benchmark's compare.py gate on: two-sided, normal
approximation with the tie correction and a 0.5 continuity correction (scipy's
`mannwhitneyu(method="asymptotic")` gives the same p-values).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 0  # fixed: the same samples give the same interval on every machine


@dataclass(frozen=True)
class UTest:
    u: float  # U of the first sample: pairs (x, y) with x > y, ties counted one half
    z: float
    p_value: float  # two-sided


@dataclass(frozen=True)
class RatioCI:
    """median(head) / median(base) with its bootstrap interval (percentile method)."""

    ratio: float
    low: float
    high: float
    level: float = 0.95


def _array(values, name: str) -> np.ndarray:
    a = np.asarray(values, dtype=float).ravel()
    if a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: needs at least one sample, all finite numbers")
    return a


def _ranks(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based; tied values share the mean of their ranks) and the tie group sizes."""
    order = np.argsort(values, kind="mergesort")
    ordered = values[order]
    _, first, counts = np.unique(ordered, return_index=True, return_counts=True)
    mean_rank = first + (counts + 1) / 2.0  # ranks first+1 .. first+count, averaged
    ranks = np.empty(values.size)
    ranks[order] = np.repeat(mean_rank, counts)
    return ranks, counts


def mann_whitney_u(x, y) -> UTest:
    """Two-sided Mann-Whitney U test of x against y (normal approximation, tie and continuity
    corrected). All values equal: p = 1."""
    x, y = _array(x, "x"), _array(y, "y")
    n1, n2 = x.size, y.size
    ranks, ties = _ranks(np.concatenate([x, y]))
    u1 = float(ranks[:n1].sum() - n1 * (n1 + 1) / 2.0)
    n = n1 + n2
    mu = n1 * n2 / 2.0
    tie_term = float((ties**3 - ties).sum()) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    if var <= 0:
        return UTest(u1, 0.0, 1.0)
    u = max(u1, n1 * n2 - u1)
    z = (u - mu - 0.5) / math.sqrt(var)
    p = min(1.0, math.erfc(z / math.sqrt(2.0)))  # 2 * P(Z > z)
    return UTest(u1, z, max(p, 0.0))


def median_ratio_ci(
    base, head, level: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES, seed: int = BOOTSTRAP_SEED
) -> RatioCI:
    """median(head) / median(base), and the `level` percentile interval of that ratio over
    `resamples` bootstrap resamples of each side (drawn independently, with replacement)."""
    base, head = _array(base, "base"), _array(head, "head")
    if np.median(base) <= 0:
        raise ValueError("base: the median must be positive")
    rng = np.random.default_rng(seed)
    b = np.median(rng.choice(base, size=(resamples, base.size)), axis=1)
    h = np.median(rng.choice(head, size=(resamples, head.size)), axis=1)
    ratios = h / b
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return RatioCI(float(np.median(head) / np.median(base)), float(low), float(high), level)


__all__ = ["RatioCI", "UTest", "mann_whitney_u", "median_ratio_ci"]
