"""Statistics of timing samples (numpy only; no scipy): within one run, the Mann-Whitney U test and a
bootstrap confidence interval of the ratio of medians; between runs, Welch's t on the log of the
rounds' medians (each round its own process), whose interval holds the run-to-run shift.

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


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """I_x(a, b), the regularized incomplete beta function."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_two_sided_p(t: float, df: float) -> float:
    """P(|T| >= |t|) for Student's t with `df` degrees of freedom."""
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(q: float, df: float) -> float:
    """The `q` quantile (q > 0.5) of Student's t with `df` degrees of freedom (bisection)."""
    lo, hi = 0.0, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if 1.0 - t_two_sided_p(mid, df) / 2.0 < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


@dataclass(frozen=True)
class RoundsTest:
    """Head against base by their rounds' medians: the ratio of their geometric means, Welch's
    interval of it (on the log scale) and the two-sided p-value."""

    ratio: float
    low: float
    high: float
    p_value: float
    df: float
    level: float = 0.95


def welch_rounds(base_medians, head_medians, level: float = 0.95) -> RoundsTest:
    """Welch's t on log(round median): each round is one independent draw of what varies between
    processes (placement, clocks), so the interval holds a shift between runs. Needs 2 rounds a side."""
    b = np.log(_array(base_medians, "base"))
    h = np.log(_array(head_medians, "head"))
    if b.size < 2 or h.size < 2:
        raise ValueError("welch_rounds needs at least 2 rounds a side")
    vb, vh = b.var(ddof=1) / b.size, h.var(ddof=1) / h.size
    diff = float(h.mean() - b.mean())
    se = math.sqrt(vb + vh)
    if se == 0.0:
        return RoundsTest(math.exp(diff), math.exp(diff), math.exp(diff), 0.0 if diff else 1.0, float("inf"), level)
    vb, vh = float(vb), float(vh)
    df = (vb + vh) ** 2 / (vb**2 / (b.size - 1) + vh**2 / (h.size - 1))
    half = t_quantile(0.5 + level / 2.0, df) * se
    p = t_two_sided_p(diff / se, df)
    return RoundsTest(math.exp(diff), math.exp(diff - half), math.exp(diff + half), min(1.0, max(p, 0.0)), df, level)


__all__ = [
    "RatioCI",
    "RoundsTest",
    "UTest",
    "mann_whitney_u",
    "median_ratio_ci",
    "t_quantile",
    "t_two_sided_p",
    "welch_rounds",
]
