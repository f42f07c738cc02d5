"""Student's t (roofline/analysis/stats.py, numpy only) against printed tables, and Welch on rounds."""

import pytest

from roofline.analysis.stats import t_quantile, t_two_sided_p, welch_rounds


@pytest.mark.parametrize(("df", "q975"), [(1, 12.706), (2, 4.303), (4, 2.776), (10, 2.228), (30, 2.042), (1e6, 1.960)])
def test_t_quantiles_match_the_table(df, q975):
    assert t_quantile(0.975, df) == pytest.approx(q975, abs=1e-3)


def test_two_sided_p_values():
    assert t_two_sided_p(2.0, 5) == pytest.approx(0.1019, abs=1e-4)
    assert t_two_sided_p(0.0, 3) == pytest.approx(1.0)
    assert t_two_sided_p(10.0, 6) < 1e-4


def test_welch_on_round_medians():
    t = welch_rounds([1.0, 1.01, 0.99, 1.0], [1.03, 1.04, 1.02, 1.035])
    assert 1.01 < t.low < t.ratio < t.high < 1.05 and t.p_value < 0.01 and 5 < t.df < 7
    same = welch_rounds([1.0, 1.0], [1.0, 1.0])
    assert same.ratio == same.low == same.high == 1.0 and same.p_value == 1.0
    with pytest.raises(ValueError, match="at least 2 rounds a side"):
        welch_rounds([1.0], [1.0, 1.1])
