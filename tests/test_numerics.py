"""jbandits.policies.blocks.numerics against SciPy (spec §3, §8 item 5)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats
from scipy.optimize import brentq
from scipy.special import gammaln, xlogy

from jbandits.policies.blocks import numerics


def _kl(p, q):
    return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


def _klucb_brentq(mu: float, d: float) -> float:
    """Root of kl(mu, q) = d on [mu, 1); 1 when kl(mu, 1 - 1e-15) is still <= d."""
    top = 1.0 - 1e-15
    if mu >= 1.0 or _kl(mu, top) <= d:
        return 1.0
    if d <= 0.0:
        return mu
    return brentq(lambda q: _kl(mu, q) - d, mu, top, xtol=1e-15, rtol=1e-15)


# spec §3.1 grid: mu in {0, .03, .07, .1, .5, .99, 1}, z in 1..1000, at t = 60 000
MUS = [0.0, 0.03, 0.07, 0.1, 0.5, 0.99, 1.0]
ZS = [1, 2, 3, 5, 10, 30, 100, 300, 1000]


def _klucb_grid(t=60_000):
    mu, z = np.meshgrid(MUS, ZS)
    d = math.log(t) / z
    ref = np.vectorize(_klucb_brentq)(mu, d)
    return mu, d, ref


def test_kl_bernoulli_matches_closed_form_and_edges():
    p = np.array([0.0, 0.0, 1.0, 1.0, 0.3, 0.3, 0.7])
    q = np.array([0.5, 0.0, 0.5, 1.0, 0.3, 0.9, 0.1])
    got = np.asarray(numerics.kl_bernoulli(p, q))
    expected = [
        math.log(2),
        0.0,
        math.log(2),
        0.0,
        0.0,
        0.3 * math.log(0.3 / 0.9) + 0.7 * math.log(0.7 / 0.1),
        0.7 * math.log(7) + 0.3 * math.log(0.3 / 0.9),
    ]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    # q at the boundary with p != q is +inf, never NaN
    edge = np.asarray(
        numerics.kl_bernoulli(jnp.array([0.5, 0.0, 1.0]), jnp.array([1.0, 1.0, 0.0]))
    )
    assert np.all(np.isposinf(edge))


def test_kl_gaussian():
    got = numerics.kl_gaussian(jnp.array([0.0, 1.0]), jnp.array([2.0, 0.5]), 0.5)
    np.testing.assert_allclose(np.asarray(got), [4.0, 0.25], rtol=1e-6)


def test_klucb_bernoulli_float32_24_iterations_vs_brentq():
    mu, d, ref = _klucb_grid()
    got = numerics.klucb_bernoulli(
        jnp.asarray(mu, jnp.float32), jnp.asarray(d, jnp.float32)
    )
    assert got.dtype == jnp.float32
    assert np.max(np.abs(np.asarray(got, np.float64) - ref)) <= 1e-6


def test_klucb_bernoulli_float64_vs_brentq():
    mu, d, ref = _klucb_grid(t=1_000)
    with jax.enable_x64(True):
        got = np.asarray(numerics.klucb_bernoulli(jnp.asarray(mu), jnp.asarray(d)))
    # 50 halvings of a bracket of width <= 1: |error| <= 2^-51 plus kl rounding
    assert np.max(np.abs(got - ref)) <= 1e-12


def test_klucb_bernoulli_properties():
    mu = jnp.array([0.0, 0.2, 0.5, 0.9, 1.0])
    d = jnp.full(5, 0.3)
    u = numerics.klucb_bernoulli(mu, d)
    assert np.all(np.asarray(u) >= np.asarray(mu))
    assert float(u[-1]) == 1.0  # mu = 1 gives exactly 1
    # the returned point is within one final half-bracket of the root: kl(mu, u) ~ d
    np.testing.assert_allclose(
        np.asarray(numerics.kl_bernoulli(mu[:4], u[:4])), 0.3, rtol=1e-4
    )
    np.testing.assert_array_equal(numerics.klucb_bernoulli(mu, jnp.zeros(5)), mu)
    # larger exploration level -> larger bound
    assert np.all(
        np.diff(np.asarray(numerics.klucb_bernoulli(0.3, jnp.array([0.01, 0.1, 1.0]))))
        > 0
    )


def test_klucb_gaussian_closed_form_is_the_kl_maximiser():
    mu, d, sigma2 = 0.4, 0.7, 0.25
    u = float(numerics.klucb_gaussian(mu, d, sigma2))
    assert abs(float(numerics.kl_gaussian(mu, u, sigma2)) - d) <= 1e-6
    assert u == pytest.approx(mu + math.sqrt(2 * sigma2 * d), rel=1e-6)


# spec §3.2 grid: t in {2, 100, 6e4, 1.1e6}, (S, N) from (0, 0) to (700, 1000), (0, 5000)
SN = [
    (0, 0),
    (0, 1),
    (1, 1),
    (1, 3),
    (3, 10),
    (10, 10),
    (50, 100),
    (99, 100),
    (700, 1000),
    (0, 5000),
    (5000, 5000),
]


@pytest.mark.parametrize("t", [2, 100, 60_000, 1_100_000])
def test_beta_upper_quantile_float32_30_iterations_vs_scipy(t):
    s = np.array([p[0] for p in SN], float)
    n = np.array([p[1] for p in SN], float)
    a, b, alpha = 1.0 + s, 1.0 + n - s, 1.0 / t
    got = numerics.beta_upper_quantile(
        jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32), jnp.float32(alpha)
    )
    assert got.dtype == jnp.float32
    expected = stats.beta.isf(alpha, a, b)
    assert np.max(np.abs(np.asarray(got, np.float64) - expected)) <= 5e-6


def test_beta_upper_quantile_float64_and_limits():
    with jax.enable_x64(True):
        got = numerics.beta_upper_quantile(
            jnp.array([2.0, 5.0]), jnp.array([3.0, 1.0]), 0.05
        )
        np.testing.assert_allclose(
            np.asarray(got), stats.beta.isf(0.05, [2, 5], [3, 1]), atol=1e-12
        )
        # alpha = 1: the quantile is 0 (the bisection's midpoint sits within 2^-51)
        assert float(numerics.beta_upper_quantile(3.0, 4.0, 1.0)) <= 2.0**-50


def test_normal_upper_quantile():
    alpha = np.array([1.0 / 60_000, 0.01, 0.5, 0.9])
    got = np.asarray(numerics.normal_upper_quantile(jnp.asarray(alpha, jnp.float32)))
    np.testing.assert_allclose(got, stats.norm.isf(alpha), rtol=1e-5, atol=1e-6)
    assert got[0] == pytest.approx(4.1494, abs=1e-4)  # spec §3.3
    assert float(numerics.normal_upper_quantile(1.0)) == -math.inf


def test_iteration_counts_follow_the_dtype():
    assert numerics._iters(numerics.KLUCB_ITERS, jnp.float32, None) == 24
    assert numerics._iters(numerics.KLUCB_ITERS, jnp.float64, None) == 50
    assert numerics._iters(numerics.BETA_ITERS, jnp.float32, None) == 30
    assert numerics._iters(numerics.BETA_ITERS, jnp.float64, None) == 50
    # fewer iterations -> coarser: a 4-step bisection is off by up to 2^-5
    coarse = float(numerics.klucb_bernoulli(0.5, 0.2, num_iters=4))
    fine = float(numerics.klucb_bernoulli(0.5, 0.2))
    assert 0 < abs(coarse - fine) <= 2.0**-5


def test_vectorised_under_jit_and_vmap():
    mu = jnp.linspace(0.0, 1.0, 12).reshape(3, 4)
    d = jnp.full((3, 4), 0.2)
    direct = numerics.klucb_bernoulli(mu, d)
    mapped = jax.jit(jax.vmap(numerics.klucb_bernoulli))(mu, d)
    np.testing.assert_array_equal(np.asarray(direct), np.asarray(mapped))


# ---------------------------------------------------- warm-started Beta quantile
def _expt1_grid():
    """(a, b, alpha) over Expt 1's range: counts n < t up to 60 000, t up to 1.1e6."""
    rows = []
    for n in [0, 1, 3, 10, 100, 1000, 5000, 20000, 59999]:
        for p in [0.0, 0.03, 0.07, 0.1, 0.5, 0.9, 1.0]:
            s = round(p * n)
            for t in [2, 3, 10, 100, 1000, 60_000, 1_100_000]:
                if n < t:
                    rows.append((1.0 + s, 1.0 + n - s, 1.0 / t))
    return np.array(rows).T


# one compiled call, reused (jitting a 12-call Python loop compiles 12 copies, and
# eager mode dispatches every primitive of the continued fraction separately)
_NEWTON = jax.jit(
    numerics.beta_quantile_newton,
    static_argnames=("num_newton", "grid_bits", "num_terms"),
)


@jax.jit
def _sf_at(a, b, x):
    """``beta_sf`` with 24 terms at ``x`` (its log-norm computed alongside)."""
    return numerics.beta_sf(a, b, x, numerics.beta_log_norm(a, b), 24)


def test_log1pmx_and_stirling_error_float32():
    e = np.array(
        [-1.0, -0.9, -0.25, -0.1, -1e-3, -1e-7, 0.0, 1e-6, 0.01, 0.25, 0.3, 5.0]
    )
    got = np.asarray(numerics.log1pmx(jnp.asarray(e, jnp.float32)), np.float64)
    with np.errstate(divide="ignore"):
        # float64 series for small |e| (direct form cancels there)
        ref = np.where(
            np.abs(e) < 1e-2,
            -(e**2) / 2 + e**3 / 3 - e**4 / 4 + e**5 / 5,
            np.log1p(e) - e,
        )
    assert got[0] == -math.inf
    np.testing.assert_allclose(got[1:], ref[1:], rtol=2e-6, atol=0)
    z = np.array([1.0, 2.5, 9.9, 10.0, 60_000.0])
    ref = gammaln(z) - ((z - 0.5) * np.log(z) - z + 0.5 * math.log(2 * math.pi))
    got = np.asarray(numerics.stirling_error(jnp.asarray(z, jnp.float32)))
    np.testing.assert_allclose(got, ref, rtol=3e-5, atol=2e-6)


def test_stirling_error_integer_table_matches_series():
    # whole numbers 1..40: the table below 10 agrees with the shifted series to the
    # dtype's rounding, and both with float64 lgamma minus Stirling's formula to that
    # difference's own rounding (lgamma(40) ~ 110: ~2e-14 absolute)
    z = np.arange(1.0, 41.0)
    ref = np.array(
        [math.lgamma(v) - ((v - 0.5) * math.log(v) - v + 0.5 * math.log(2 * math.pi))
         for v in z]
    )  # fmt: skip
    with jax.enable_x64(True):
        z64 = jnp.asarray(z, jnp.float64)
        table = np.asarray(numerics.stirling_error(z64, integer=True))
        series = np.asarray(numerics.stirling_error(z64))
    np.testing.assert_allclose(table, series, rtol=1e-15, atol=0)
    np.testing.assert_allclose(table, ref, rtol=0, atol=1e-13)
    got = numerics.stirling_error(jnp.asarray(z, jnp.float32), integer=True)
    # float32: the table is the correctly rounded value below 10
    np.testing.assert_array_equal(np.asarray(got)[:9], np.float32(table[:9]))
    np.testing.assert_allclose(np.asarray(got, np.float64), table, rtol=3e-7, atol=0)


def test_beta_sf_float32_is_accurate_at_large_counts():
    # at Expt 1's quantiles; XLA's betainc loses ~1e-2 relative here (gammaln(6e4)
    # carries an absolute error ~0.03 in float32)
    a, b, alpha = _expt1_grid()
    x = np.asarray(np.float32(stats.beta.isf(alpha, a, b)), np.float64)
    keep = x < 1.0  # roots closer to 1 than float32 resolves
    a, b, x = a[keep], b[keep], x[keep]
    a32, b32 = jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)
    log_tail, ratio = _sf_at(a32, b32, jnp.asarray(x, jnp.float32))
    ref = stats.beta.sf(x, a, b)
    rel = np.abs(np.exp(np.asarray(log_tail, np.float64)) / ref - 1)
    mills = ref / stats.beta.pdf(x, a, b)
    # worst: Beta(1, 6e4) (Lentz round-off in float32, 2e-3); what matters is the
    # root shift it causes, rel * P(X > x) / pdf(x)
    assert np.max(rel) <= 5e-3
    assert np.max(rel * mills) <= 5e-7
    np.testing.assert_allclose(np.asarray(ratio, np.float64), mills, rtol=5e-3)


def _cold_newton(a, b, alpha, calls, **kw):
    warm = (jnp.zeros_like(a), jnp.zeros_like(a), jnp.full_like(a, jnp.inf))
    for _ in range(calls):
        q, warm = _NEWTON(a, b, alpha, *warm, **kw)
    return q


def test_beta_quantile_newton_float32_vs_scipy_expt1_range():
    a, b, alpha = _expt1_grid()
    f32 = [jnp.asarray(v, jnp.float32) for v in (a, b, alpha)]
    q = _cold_newton(*f32, calls=12)
    assert q.dtype == jnp.float32
    err = np.abs(np.asarray(q, np.float64) - stats.beta.isf(alpha, a, b))
    # half a 2^-20 cell (4.8e-7) plus float32 rounding; the spec allows 5e-6
    assert np.max(err) <= 6e-7


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_beta_quantile_newton_snaps_to_the_bisection_midpoint():
    # converged Newton + snap with grid_bits = m is exactly m bisection halvings
    a, b, alpha = _expt1_grid()
    # betainc (float64) converges within its 600 terms; t = 2 has dyadic roots (1/2),
    # where either neighbouring cell is a rounding away
    keep = ((a + b) < 5000) & (alpha < 0.5)
    with jax.enable_x64(True):  # (float32 alpha would make 1 - alpha dyadic)
        a, b, alpha = (jnp.asarray(v[keep], jnp.float64) for v in (a, b, alpha))
        q = _cold_newton(a, b, alpha, calls=15, grid_bits=30, num_terms=200)
        bis = numerics.beta_upper_quantile(a, b, alpha, num_iters=30)
        np.testing.assert_array_equal(np.asarray(q), np.asarray(bis))


def test_beta_quantile_newton_warm_start_tracks_a_decreasing_level():
    # one arm's posterior changes every 3rd decision while alpha = 1/t falls; as in
    # Bayes-UCB: the changed posterior is re-evaluated at the warm point and gets 3
    # extra Newton steps, then every decision takes 2
    a, b = 1.0, 1.0
    warm = (jnp.float32(0.0), jnp.float32(0.0), jnp.float32(jnp.inf))
    step = jax.jit(numerics.beta_quantile_newton, static_argnames="num_newton")
    worst, worst_late = 0.0, 0.0
    for t in range(1, 400):
        alpha = jnp.float32(1.0 / t)
        if t % 3 == 0:  # alternately a failure and a success
            a, b = (a + 1.0, b) if t % 6 == 0 else (a, b + 1.0)
            a32, b32 = jnp.float32(a), jnp.float32(b)
            sf = _sf_at(a32, b32, warm[0])
            _, warm = step(a32, b32, alpha, warm[0], *sf, num_newton=3)
        q, warm = step(jnp.float32(a), jnp.float32(b), alpha, *warm)
        err = abs(float(q) - stats.beta.isf(1.0 / t, a, b))
        worst = max(worst, err)
        worst_late = max(worst_late, err if t > 20 else 0.0)
    assert worst <= 5e-6
    # converged: within half a 2^-20 cell plus float32 rounding
    assert worst_late <= 6e-7


def test_beta_quantile_newton_float64_vs_scipy():
    a, b, alpha = _expt1_grid()
    with jax.enable_x64(True):
        q = _cold_newton(*(jnp.asarray(v, jnp.float64) for v in (a, b, alpha)), 12)
        # half a 2^-40 cell is 4.5e-13
        err = np.abs(np.asarray(q) - stats.beta.isf(alpha, a, b))
    assert np.max(err) <= 1e-12


def test_beta_halley_step_beats_newton_near_the_root():
    # from points 0.5 .. 5 % of (1 - root) off the root on either side, one Halley
    # step in ln(1 - x) (second derivative from the density's log-derivative) must
    # land far closer than one Newton step: a wrong f'' makes it no better
    rng = np.random.default_rng(7)
    n = 400
    a = rng.integers(1, 400, n).astype(np.float64)
    b = rng.integers(1, 400, n).astype(np.float64)
    alpha = 10.0 ** rng.uniform(-5, -1, n)
    root = stats.beta.isf(alpha, a, b)
    off = rng.uniform(0.005, 0.05, n) * rng.choice([-1.0, 1.0], n)
    x0 = 1.0 - (1.0 - root) * np.exp(off)
    with jax.enable_x64(True):
        a_, b_, x_, la = (jnp.asarray(v) for v in (a, b, x0, np.log(alpha)))
        norm = numerics.beta_log_norm(a_, b_)
        log_tail, ratio = numerics.beta_sf(a_, b_, x_, norm, 200)
        halley = np.asarray(numerics.beta_halley_step(a_, b_, x_, log_tail, ratio, la))
        newton = np.asarray(numerics.beta_newton_step(x_, log_tail, ratio, la))
    assert np.all((halley > 0) & (halley < 1))
    e_halley, e_newton = np.abs(halley - root), np.abs(newton - root)
    assert np.median(e_halley / e_newton) < 0.15  # measured 0.06; f2 = 0 gives 1
    assert np.mean(e_halley < e_newton) > 0.95
