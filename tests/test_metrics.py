"""jbandits.analysis.metrics: losses on policy outputs and the confidence intervals."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.analysis import metrics

MEANS = jnp.asarray([0.1, 0.4, 0.3, 0.9])
ALL = jnp.ones(4, bool)


def _mask(*bits):
    return jnp.asarray(bits, bool)


def _top(m, output, means=MEANS, arm_mask=ALL, epsilon=0.0):
    res = metrics.top_m(m, epsilon)(_mask(*output), means, arm_mask)
    return float(res["error"]), float(res["simple_regret"])


# ----------------------------------------------------------------------------- top-m
def test_top_m_correct_and_wrong_sets():
    assert _top(1, [0, 0, 0, 1]) == (0.0, 0.0)
    assert _top(2, [0, 1, 0, 1]) == (0.0, 0.0)
    err, r = _top(2, [0, 0, 1, 1])  # mu_(2) = 0.4, worst chosen 0.3
    assert err == 1.0 and r == pytest.approx(0.1)
    assert _top(2, [0, 0, 1, 1], epsilon=0.15) == (0.0, pytest.approx(0.1))


def test_top_m_empty_output_is_a_worst_case_error():
    # a stopped policy outputs no arm: error, regret mu_(m) - min mu (finite)
    err, r = _top(1, [0, 0, 0, 0])
    assert err == 1.0 and r == pytest.approx(0.9 - 0.1)
    err, r = _top(2, [0, 0, 0, 0])
    assert err == 1.0 and r == pytest.approx(0.4 - 0.1)


def test_top_m_wrong_number_of_arms_is_an_error():
    # too many arms (even if they include the best ones)
    err, r = _top(1, [0, 1, 1, 1])
    assert err == 1.0 and np.isfinite(r) and r == pytest.approx(0.8)
    # too few
    err, r = _top(3, [0, 0, 0, 1])
    assert err == 1.0 and r == pytest.approx(0.3 - 0.1)


def test_top_m_padded_arm_in_output_is_an_error():
    mask = _mask(1, 1, 0, 1)
    means = jnp.asarray([0.1, 0.4, 0.0, 0.9])
    err, r = _top(2, [0, 1, 0, 1], means, mask)
    assert (err, r) == (0.0, 0.0)
    err, r = _top(2, [0, 0, 1, 1], means, mask)  # arm 2 is padding
    assert err == 1.0 and r == pytest.approx(0.4 - 0.1)


def test_top_m_fewer_real_arms_than_m_is_finite():
    mask = _mask(1, 1, 0, 0)
    err, r = _top(3, [1, 1, 0, 0], MEANS, mask)
    assert err == 1.0 and np.isfinite(r)
    err, r = _top(1, [0, 0, 0, 0], MEANS, jnp.zeros(4, bool))
    assert err == 1.0 and np.isfinite(r)


def test_top_m_validates_m():
    with pytest.raises(ValueError, match="m"):
        metrics.top_m(0)
    with pytest.raises(ValueError, match="m"):
        metrics.top_m(-2)
    with pytest.raises(ValueError, match="m"):
        metrics.TopM(0)
    with pytest.raises(ValueError, match="epsilon"):
        metrics.top_m(1, epsilon=-0.1)
    metric = metrics.top_m(9)
    with pytest.raises(ValueError, match=r"m=9.*K=4"):
        metric(_mask(1, 0, 0, 0), MEANS, ALL)
    with pytest.raises(ValueError, match=r"m=9.*K=4"):  # also at trace time
        jax.jit(metric)(_mask(1, 0, 0, 0), MEANS, ALL)


def test_top_m_under_jit_and_vmap():
    metric = metrics.top_m(2)
    outputs = jnp.asarray([[0, 1, 0, 1], [0, 0, 0, 0], [1, 1, 1, 0]], bool)
    res = jax.jit(jax.vmap(metric, in_axes=(0, None, None)))(outputs, MEANS, ALL)
    np.testing.assert_array_equal(res["error"], [0.0, 1.0, 1.0])
    assert np.isfinite(np.asarray(res["simple_regret"])).all()


# ------------------------------------------------------------- other metrics, CIs
def test_thresholding_and_identification():
    th = metrics.thresholding(0.35, epsilon=0.06)
    res = th(_mask(0, 1, 0, 1), MEANS, ALL)  # arm 2 (0.3) is within epsilon: don't care
    assert float(res["error"]) == 0.0 and float(res["misclassified"]) == 0.0
    res = th(_mask(0, 1, 1, 1), MEANS, ALL)
    assert float(res["error"]) == 0.0 and float(res["misclassified"]) == 1.0
    res = th(_mask(0, 1, 0, 0), MEANS, ALL)  # arm 3 (0.9) labelled below
    assert float(res["error"]) == 1.0
    ident = metrics.identification()
    res = ident(jnp.asarray(3), MEANS, ALL)
    assert float(res["error"]) == 0.0 and float(res["simple_regret"]) == 0.0
    res = ident(jnp.asarray(1), MEANS, ALL)
    assert float(res["error"]) == 1.0
    assert float(res["simple_regret"]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="threshold"):
        metrics.thresholding(float("nan"))


def test_confidence_intervals():
    mean, lo, hi = metrics.mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    assert mean == 2.5 and lo < 2.5 < hi
    p, lo, hi = metrics.binomial_ci(np.array([0, 0, 1, 1]))
    assert p == 0.5 and 0 < lo < 0.5 < hi < 1
    p, lo, hi = metrics.binomial_ci(np.zeros(50))
    assert p == 0.0 and lo == pytest.approx(0.0, abs=1e-12) and hi > 0


def test_wilson_interval_ends_exactly_at_zero_and_one():
    from jbandits.analysis import metrics as m

    n = 2000  # the size at which the formula left 1.08e-19 in printed tables
    rate, low, high = m.binomial_ci(np.zeros(n))
    assert (rate, low) == (0.0, 0.0) and 0.0019 < high < 0.0020
    rate, low, high = m.binomial_ci(np.ones(n))
    assert (rate, high) == (1.0, 1.0) and 0.998 < low < 0.9981
    rate, low, high = m.binomial_ci(np.r_[np.zeros(n - 1), 1.0])
    assert 0.0 < low < rate < high < 1.0
