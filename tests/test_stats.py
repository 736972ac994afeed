"""jbandits.analysis.stats against scipy and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats as sp

from jbandits.analysis import metrics, stats

RNG = np.random.default_rng(3)


def test_z95_is_the_two_sided_95_percent_normal_quantile():
    assert sp.norm.ppf(0.975) == stats.Z95
    assert metrics.Z95 is stats.Z95


@pytest.mark.parametrize("n", [2, 7, 50])
def test_standard_error_is_scipy_sem(n):
    x = RNG.normal(size=(n, 3))
    np.testing.assert_allclose(stats.standard_error(x), sp.sem(x, axis=0), rtol=1e-14)
    np.testing.assert_allclose(
        stats.standard_error(x.T, axis=1), sp.sem(x, axis=0), rtol=1e-14
    )
    assert isinstance(stats.standard_error(x[:, 0]), float)


def test_standard_error_of_one_replication_is_the_single_value():
    assert math.isnan(stats.standard_error([4.0]))
    assert stats.standard_error([4.0], single=0.0) == 0.0
    assert stats.standard_error(np.ones((1, 3)), single=0.0).shape == (3,)


def test_paired_is_the_one_sample_t_statistic_on_the_differences_with_normal_ci():
    a = RNG.normal(size=40)
    b = a + RNG.normal(0.3, 0.5, size=40)  # common noise: cancels in a - b
    p = stats.paired(a, b)
    t = sp.ttest_rel(a, b)
    assert p.mean / p.se == pytest.approx(t.statistic, rel=1e-12)
    assert p.mean == pytest.approx(np.mean(a - b), rel=1e-14)
    assert (p.lo, p.hi) == (p.mean - stats.Z95 * p.se, p.mean + stats.Z95 * p.se)
    assert p.z == pytest.approx(t.statistic, rel=1e-12)
    assert p.sign == -1 and p.lower and not p.higher and p.significant
    # the difference given directly is the same statement
    assert stats.paired(a - b) == p


def test_paired_along_an_axis_gives_arrays_per_comparison():
    a = RNG.normal(size=(30, 4))
    b = a + np.array([-1.0, 0.0, 1.0, 0.0]) + 0.1 * RNG.normal(size=(30, 4))
    p = stats.paired(a, b)
    np.testing.assert_allclose(p.se, sp.sem(a - b, axis=0), rtol=1e-13)
    assert p.sign.tolist() == [1, 0, -1, 0]
    q = stats.paired(a.T, b.T, axis=1)
    np.testing.assert_array_equal(q.mean, p.mean)


def test_paired_z_and_sign_at_zero_and_without_an_interval():
    sure = stats.paired([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert sure.se == 0.0 and sure.z == math.inf and sure.sign == 1
    same = stats.paired([1.0, 2.0], [1.0, 2.0])
    assert same.z == 0.0 and same.sign == 0 and not same.significant
    one = stats.paired([1.0], [0.0])
    assert math.isnan(one.se) and math.isnan(one.z) and one.sign == 0
    assert stats.paired([1.0], [0.0], single=0.0).sign == 1


@pytest.mark.parametrize("n", [1, 5, 200])
def test_mean_ci_is_the_normal_interval(n):
    x = RNG.exponential(size=(n, 2))
    m, lo, hi = stats.mean_ci(x)
    half = stats.Z95 * sp.sem(x, axis=0) if n > 1 else 0.0
    np.testing.assert_allclose(m, x.mean(0), rtol=1e-14)
    np.testing.assert_allclose(hi - m, half, rtol=1e-12, atol=0)
    np.testing.assert_allclose(m - lo, half, rtol=1e-12, atol=0)
    assert metrics.mean_ci is stats.mean_ci


@pytest.mark.parametrize("k, n", [(0, 10), (3, 10), (10, 10), (37, 120)])
def test_wilson_ci_is_scipy_binomtest_wilson(k, n):
    x = np.r_[np.ones(k), np.zeros(n - k)]
    p, lo, hi = stats.wilson_ci(x)
    ci = sp.binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
    assert p == k / n
    assert lo == pytest.approx(ci.low, abs=1e-12)
    assert hi == pytest.approx(ci.high, abs=1e-12)
    assert (lo == 0.0) == (k == 0) and (hi == 1.0) == (k == n)
    assert metrics.binomial_ci is stats.wilson_ci


def test_count_accepts_integers_and_refuses_the_rest_by_name():
    assert stats.count("reps", 3) == 3 and type(stats.count("r", np.int64(2))) is int
    assert stats.count("chunk", None, none=True) is None
    for bad in (0, 1.0, True, "2", None):
        with pytest.raises(ValueError, match=r"^reps must be an integer >= 1, got "):
            stats.count("reps", bad)
    with pytest.raises(ValueError, match="num_reps must be an integer >= 2, got 1"):
        stats.count("num_reps", 1, 2)


def test_z_score_decides_the_zero_se_cases_elementwise():
    z = stats.z_score([1.0, -1.0, 0.0, math.nan, 3.0], [0.0, 0.0, 0.0, 1.0, 2.0])
    np.testing.assert_array_equal(z, [math.inf, -math.inf, 0.0, math.nan, 1.5])
    assert stats.z_score(-2.0, 0.0) == -math.inf  # a float for scalars
    assert stats.paired([1.0, 3.0]).z == stats.z_score(2.0, 1.0)
