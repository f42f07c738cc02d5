"""The statistics compare gates on: the Mann-Whitney U test and the bootstrap interval of a ratio of
medians, on synthetic sample arrays with known answers."""

import itertools
import math

import numpy as np
import pytest

from roofline.analysis.stats import mann_whitney_u, median_ratio_ci


def test_u_test_matches_the_textbook_example():
    # scipy.stats.mannwhitneyu's documented example (Conover, "Practical Nonparametric Statistics"):
    # ages of male and female workers; U1 = 17, method="asymptotic" p = 0.11134688653314041
    t = mann_whitney_u([19, 22, 16, 29, 24], [20, 11, 17, 12])
    assert t.u == 17.0
    assert t.p_value == pytest.approx(0.11134688653314041, rel=1e-12)


def _exact_null(x, y):
    """U's mean and variance over every way of splitting the pooled values into groups of len(x)
    and len(y): the exact permutation distribution, ties counted one half."""
    pooled = list(x) + list(y)
    us = []
    for idx in itertools.combinations(range(len(pooled)), len(x)):
        a = [pooled[i] for i in idx]
        b = [pooled[i] for i in range(len(pooled)) if i not in idx]
        us.append(sum((ai > bj) + 0.5 * (ai == bj) for ai in a for bj in b))
    return float(np.mean(us)), float(np.var(us))


@pytest.mark.parametrize("x, y", [([1, 2, 2, 3], [2, 3, 3, 4, 5]), ([5, 5, 5, 1], [5, 1, 1, 2, 5, 7])])
def test_tie_correction_is_the_exact_permutation_variance(x, y):
    t = mann_whitney_u(x, y)
    mean, var = _exact_null(x, y)
    u = max(t.u, len(x) * len(y) - t.u)
    assert t.u == sum((a > b) + 0.5 * (a == b) for a in x for b in y)
    assert t.z == pytest.approx((u - mean - 0.5) / math.sqrt(var), rel=1e-12)


def test_u_test_edges():
    assert mann_whitney_u([1.0] * 5, [1.0] * 7).p_value == 1.0  # all tied: no evidence at all
    a, b = [3.1, 2.7, 5.0, 4.4, 3.9], [1.0, 2.2, 2.9, 3.0]
    assert mann_whitney_u(a, b).p_value == pytest.approx(mann_whitney_u(b, a).p_value)  # two-sided
    # 10 against 10, fully separated: z = (100 - 50 - 0.5) / sqrt(175)
    t = mann_whitney_u(range(10, 20), range(10))
    assert t.z == pytest.approx(49.5 / math.sqrt(175)) and t.p_value == pytest.approx(1.8267e-4, rel=1e-4)
    with pytest.raises(ValueError, match="finite"):
        mann_whitney_u([1.0, float("nan")], [1.0])


def test_ci_of_constant_samples_is_the_ratio_itself():
    ci = median_ratio_ci([2.0] * 10, [3.0] * 12)
    assert (ci.ratio, ci.low, ci.high) == (1.5, 1.5, 1.5)


def test_ci_is_the_percentiles_of_the_bootstrap_and_reproducible():
    base, head = [1.0, 1.0, 1.0, 2.0, 2.0], [2.0] * 5
    ci = median_ratio_ci(base, head)
    # the resampled base median is 1 or 2, so the ratio of medians is 2 or 1 and nothing else
    assert ci.ratio == 2.0 and ci.low == 1.0 and ci.high == 2.0
    assert median_ratio_ci(base, head) == ci


def test_ci_covers_a_known_ratio_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    covered = 0
    trials = 100
    for _ in range(trials):
        base = 0.07 * rng.lognormal(0.0, 0.01, 30)  # true median 0.07 ms
        head = 0.07 * 1.03 * rng.lognormal(0.0, 0.01, 30)  # true ratio 1.03
        ci = median_ratio_ci(base, head, resamples=1000)
        covered += ci.low <= 1.03 <= ci.high
    assert 85 <= covered <= 100


def test_ci_refuses_a_non_positive_base():
    with pytest.raises(ValueError, match="base"):
        median_ratio_ci([0.0, 0.0], [1.0, 1.0])
