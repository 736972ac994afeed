"""Unit tests: the KL bounds block (blocks/kl_bounds.py) and the LUCB-family /
lil'UCB fixed-confidence policies."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import xlogy

from jbandits.policies.blocks import kl_bounds


# ------------------------------------------------------------------------ KL bounds
def _kl(p, q):  # float64 on the host
    return float(xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q))


@pytest.mark.parametrize("p", [0.0, 0.03, 0.2, 0.5, 0.77, 0.999, 1.0])
@pytest.mark.parametrize("level", [1e-4, 0.05, 0.7, 3.0])
def test_bernoulli_bounds_solve_the_kl_equation(p, level):
    with jax.enable_x64(True):
        lo = float(kl_bounds.kl_lower("bernoulli", p, level))
        hi = float(kl_bounds.kl_upper("bernoulli", p, level))
    # root by Brent's method on the side of p where kl(p, .) = level has a root
    if p > 0 and _kl(p, 0.0) > level:
        want = brentq(lambda q: _kl(p, q) - level, 0.0, p, xtol=1e-15)
        assert lo == pytest.approx(want, abs=1e-12)
    else:  # no root below p: the bound is 0 (exactly 0 at p = 0)
        assert lo == pytest.approx(0.0, abs=1e-14)
        assert p > 0 or lo == 0.0
    if p < 1 and _kl(p, 1.0) > level:
        want = brentq(lambda q: _kl(p, q) - level, p, 1.0, xtol=1e-15)
        assert hi == pytest.approx(want, abs=1e-12)
    else:
        assert hi == pytest.approx(1.0, abs=1e-15)
    # inside the Hoeffding (Pinsker) interval, KK13 eq. (6)
    assert p - np.sqrt(level / 2) - 1e-15 <= lo <= p <= hi
    assert hi <= p + np.sqrt(level / 2) + 1e-15


def test_bernoulli_bounds_edges_and_float32():
    lo = kl_bounds.kl_lower("bernoulli", jnp.array([0.0, 0.4, 1.0]), 0.0)
    assert lo.dtype == jnp.float32
    np.testing.assert_array_equal(lo, np.float32([0.0, 0.4, 1.0]))
    assert float(kl_bounds.kl_lower("bernoulli", 0.0, 2.0)) == 0.0
    assert float(kl_bounds.kl_upper("bernoulli", 1.0, 2.0)) == 1.0
    # float32: within 3e-7 of the float64 root
    p, level = jnp.float32(0.35), jnp.float32(0.12)
    with jax.enable_x64(True):
        want = float(kl_bounds.kl_lower("bernoulli", 0.35, 0.12))
    assert float(kl_bounds.kl_lower("bernoulli", p, level)) == pytest.approx(
        want, abs=3e-7
    )


def test_mirror_symmetry_of_the_bernoulli_bounds():
    p = np.linspace(0.0, 1.0, 21)
    with jax.enable_x64(True):
        lo = np.asarray(kl_bounds.kl_lower("bernoulli", p, 0.4))
        hi = np.asarray(kl_bounds.kl_upper("bernoulli", 1.0 - p, 0.4))
    np.testing.assert_allclose(lo, 1.0 - hi, atol=1e-13)


def test_gaussian_bounds_closed_form_and_interval():
    lo, hi = kl_bounds.kl_interval(
        "gaussian", jnp.array([0.2, -1.0]), jnp.array([4.0, 9.0]), 2.0, sigma=0.5
    )
    np.testing.assert_allclose(lo, [0.2 - np.sqrt(2 * 0.25 * 0.5), -1.0 - 1 / 3])
    np.testing.assert_allclose(hi, [0.2 + np.sqrt(2 * 0.25 * 0.5), -1.0 + 1 / 3])
    # Gaussian d(x, y) = (x - y)^2 / (2 sigma^2) at the bound equals the level
    level = 2.0 / 4.0
    assert (float(hi[0]) - 0.2) ** 2 / (2 * 0.25) == pytest.approx(level)


def test_bounds_under_jit_vmap_with_traced_level_and_sigma():
    f = jax.jit(
        jax.vmap(lambda p, lv, s: kl_bounds.kl_upper("gaussian", p, lv, s)),
    )
    out = f(jnp.zeros(3), jnp.array([0.5, 2.0, 8.0]), jnp.array([1.0, 0.5, 0.25]))
    np.testing.assert_allclose(out, [1.0, 1.0, 1.0], rtol=1e-6)
    g = jax.jit(lambda lv: kl_bounds.kl_lower("bernoulli", 0.5, lv))
    assert float(g(0.0)) == 0.5


def test_unknown_family_is_refused():
    with pytest.raises(ValueError, match="family must be one of"):
        kl_bounds.kl_upper("poisson", 0.5, 0.1)
