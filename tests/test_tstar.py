"""T*(mu) and w*(mu): the host oracle (jbandits.analysis.tstar) and the traced block
(jbandits.policies.blocks.tstar), against closed forms, the papers' printed numbers, a
generic optimiser of the max-min definition, and each other."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import minimize

from jbandits import oracles
from jbandits.analysis.tstar import characteristic_time, kl_bernoulli
from jbandits.policies.blocks.tstar import beta_optimal_weights, optimal_weights

LOG100 = math.log(100.0)  # log(1/delta) at delta = 0.01


def _jax(family, means, mask=None, beta=None, sigma=1.0, dtype=jnp.float32):
    means = jnp.asarray(means, dtype)
    mask = jnp.ones(means.shape, bool) if mask is None else jnp.asarray(mask, bool)
    if beta is None:
        t, w = optimal_weights(family, means, mask, jnp.asarray(sigma, dtype))
    else:
        t, w = beta_optimal_weights(
            family, means, mask, jnp.asarray(beta, dtype), jnp.asarray(sigma, dtype)
        )
    return float(t), np.asarray(w, np.float64)


# ------------------------------------------------------------------ closed forms
@pytest.mark.parametrize("mu", [(0.0, 1.0), (0.3, -0.2), (5.0, 5.5)])
@pytest.mark.parametrize("sigma", [1.0, 0.25, 3.0])
def test_two_gaussian_arms(mu, sigma):
    """Two Gaussian arms: w* = (1/2, 1/2), T* = 8 sigma^2 / Delta^2 (GK16 Sec. 2.2)."""
    delta = abs(mu[0] - mu[1])
    t, w = characteristic_time(mu, "gaussian", sigma=sigma)
    assert t == pytest.approx(8 * sigma**2 / delta**2, rel=1e-12)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-12)
    for dtype, rel in ((jnp.float32, 1e-6), (jnp.float64, 1e-12)):
        with jax.enable_x64(dtype == jnp.float64):
            tj, wj = _jax("gaussian", mu, sigma=sigma, dtype=dtype)
        assert tj == pytest.approx(8 * sigma**2 / delta**2, rel=rel)
        np.testing.assert_allclose(wj, [0.5, 0.5], rtol=rel)


def _gaussian_instances(rng, count):
    for _ in range(count):
        k = int(rng.integers(3, 12))
        yield rng.normal(0.0, 1.0, k), float(rng.uniform(0.2, 3.0))


def test_gaussian_identity_and_bounds():
    """Gaussian: sum_{a >= 2} x_a^2 = 1 (x_a = w_a / w_1) and sum_a 2 sigma^2 / Delta_a^2
    <= T* <= 2 sum_a 2 sigma^2 / Delta_a^2 with Delta_1 := Delta_2 (GK16 Sec. 2.2)."""
    rng = np.random.default_rng(0)
    for mu, sigma in _gaussian_instances(rng, 20):
        t, w = characteristic_time(mu, "gaussian", sigma=sigma)
        best = int(np.argmax(mu))
        x = np.delete(w, best) / w[best]
        assert np.sum(x**2) == pytest.approx(1.0, rel=1e-12)
        gaps = mu.max() - mu
        gaps[best] = np.delete(gaps, best).min()
        low = np.sum(2 * sigma**2 / gaps**2)
        assert low <= t <= 2 * low
        with jax.enable_x64(True):
            tj, wj = _jax("gaussian", mu, sigma=sigma, dtype=jnp.float64)
        xj = np.delete(wj, best) / wj[best]
        assert np.sum(xj**2) == pytest.approx(1.0, rel=1e-12)
        assert tj == pytest.approx(t, rel=1e-12)


# ------------------------------------------------------------------ printed numbers
def test_gk16_footnote_2():
    """GK16 footnote 2: Bernoulli (0.5, 0.1, 0.02) -> w* ~ (39 %, 42 %, 19 %)."""
    _, w = characteristic_time([0.5, 0.1, 0.02], "bernoulli")
    np.testing.assert_array_equal(np.round(100 * w), [39, 42, 19])
    _, wj = _jax("bernoulli", [0.5, 0.1, 0.02])
    np.testing.assert_array_equal(np.round(100 * wj), [39, 42, 19])


@pytest.mark.parametrize(
    ("mu", "printed"),
    [
        ([0.5, 0.45, 0.43, 0.4], [0.417, 0.390, 0.136, 0.057]),
        ([0.3, 0.21, 0.2, 0.19, 0.18], [0.336, 0.251, 0.177, 0.132, 0.104]),
    ],
)
def test_gk16_table_1_weights(mu, printed):
    """GK16 Table 1 caption: w*(mu1), w*(mu2) to 3 decimals."""
    _, w = characteristic_time(mu, "bernoulli")
    np.testing.assert_array_equal(np.round(w, 3), printed)
    _, wj = _jax("bernoulli", mu)
    np.testing.assert_array_equal(np.round(wj, 3), printed)


SHANG = [  # Shang et al. 2020 Fig. 1 legends: N* = log(1/delta) T*, N*_0.5, delta = 0.01
    ("gaussian", [0.5, 0.9, 0.4, 0.45, 0.44999], 422.37, 466.38),
    ("gaussian", [1.0, 0.8, 0.75, 0.7], 1264.37, 1326.39),
    ("bernoulli", [0.5, 0.9, 0.4, 0.45, 0.44999], 80.51, 84.91),
    # the paper prints 41.28 / 78.41 for this panel: 41.28 matches no computation of ours
    # (spec section 6: SLSQP gives the same T*, clipping the mean-1 arm gives 82.1), and
    # its 78.41 is our N*; the values below are ours
    ("bernoulli", [1.0, 0.8, 0.75, 0.7], 78.41, 78.56),
]


@pytest.mark.parametrize(("family", "mu", "n_star", "n_half"), SHANG)
def test_shang_legend_values(family, mu, n_star, n_half):
    t, _ = characteristic_time(mu, family)
    t_half, w_half = characteristic_time(mu, family, beta=0.5)
    assert round(LOG100 * t, 2) == n_star
    assert round(LOG100 * t_half, 2) == n_half
    assert w_half[int(np.argmax(mu))] == 0.5
    with jax.enable_x64(True):
        tj, _ = _jax(family, mu, dtype=jnp.float64)
        tj_half, _ = _jax(family, mu, beta=0.5, dtype=jnp.float64)
    assert round(LOG100 * tj, 2) == n_star
    assert round(LOG100 * tj_half, 2) == n_half


RUSSO = [  # Russo, Operations Research 2020, Table 1: Gamma*/Gamma_{1/2} = T*_{1/2}/T*
    ("bernoulli", [0.3] * 4 + [0.5], 1.12),
    ("bernoulli", [0.3] * 9 + [0.5], 1.26),
    ("bernoulli", [0.3] * 14 + [0.5], 1.34),
    ("bernoulli", [0.1, 0.2, 0.3, 0.4, 0.5], 1.01),
    # experiment 5 is printed 1.01; the ratio is 1.0158 here, and the same (to 1e-9) by
    # a generic optimiser of the definition (test_russo_experiment_5): not reproduced
    ("bernoulli", [0.05 * i for i in range(1, 11)], 1.02),
    ("gaussian", [-0.5, -0.25, 0.0, 0.25, 0.5], 1.01),
    ("gaussian", [-0.5] * 6 + [-0.25, 0.0, 0.25, 0.5], 1.03),
    ("gaussian", [0.0] * 4 + [0.5], 1.11),
    ("gaussian", [0.0] * 9 + [0.5], 1.25),
]


@pytest.mark.parametrize(("family", "mu", "ratio"), RUSSO)
def test_russo_table_1(family, mu, ratio):
    t, _ = characteristic_time(mu, family)
    t_half, _ = characteristic_time(mu, family, beta=0.5)
    assert round(t_half / t, 2) == ratio
    tj, _ = _jax(family, mu)
    tj_half, _ = _jax(family, mu, beta=0.5)
    assert round(tj_half / tj, 2) == ratio


# ------------------------------------------------------------------ the definition
def _divergence(family, p, q):
    if family == "bernoulli":
        return kl_bernoulli(p, q)
    return (np.asarray(p) - np.asarray(q)) ** 2 / 2.0


def _max_min(mu, family, beta=None):
    """``(T*, w*)`` by SLSQP on the epigraph of ``max_w min_{a != 1} [w_1 d(mu_1, m) + w_a
    d(mu_a, m)]``, ``m = (w_1 mu_1 + w_a mu_a) / (w_1 + w_a)`` (GK16 Lemma 3; Russo's
    ``Gamma*_beta`` with ``w_1 = beta``): the definition, without x_a, F or y."""
    mu = np.asarray(mu, np.float64)
    k, best = mu.size, int(np.argmax(mu))

    def raw(w):
        out = []
        for a in range(k):
            if a != best:
                m = (w[best] * mu[best] + w[a] * mu[a]) / (w[best] + w[a])
                cost = w[best] * _divergence(family, mu[best], m)
                out.append(cost + w[a] * _divergence(family, mu[a], m))
        return np.array(out, dtype=np.float64).ravel()

    scale = raw(np.full(k, 1.0 / k)).min()  # the epigraph variable in units of O(1)

    def costs(z):
        return raw(z[:k]) / scale - z[k]

    cons = [{"type": "eq", "fun": lambda z: z[:k].sum() - 1.0}]
    cons.append({"type": "ineq", "fun": costs})
    if beta is not None:
        cons.append({"type": "eq", "fun": lambda z: z[best] - beta})
    res = minimize(
        lambda z: -z[k],
        np.append(np.full(k, 1.0 / k), 0.0),
        method="SLSQP",
        constraints=cons,
        bounds=[(1e-9, 1.0)] * k + [(0.0, None)],
        options={"ftol": 1e-14, "maxiter": 2000},
    )
    assert res.status in (0, 8), res.message  # 8: the line search stalled at ftol
    return 1.0 / (scale * res.x[k]), res.x[:k]


def test_russo_experiment_5():
    """The generic optimiser confirms T*_{1/2} / T* = 1.0158 (printed: 1.01)."""
    mu = [0.05 * i for i in range(1, 11)]
    t, _ = _max_min(mu, "bernoulli")
    t_half, _ = _max_min(mu, "bernoulli", beta=0.5)
    assert t_half / t == pytest.approx(1.0158, abs=5e-5)
    assert characteristic_time(mu)[0] == pytest.approx(t, rel=1e-7)


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("beta", [None, 0.5, 0.3])
def test_matches_generic_optimiser(family, beta):
    rng = np.random.default_rng(7)
    for _ in range(4):
        k = int(rng.integers(2, 7))
        mu = (
            rng.uniform(0.05, 0.95, k) if family == "bernoulli" else rng.normal(0, 1, k)
        )
        t_ref, w_ref = _max_min(mu, family, beta)
        t, w = characteristic_time(mu, family, beta=beta)
        assert t == pytest.approx(t_ref, rel=1e-6)
        np.testing.assert_allclose(w, w_ref, atol=1e-5)


# ------------------------------------------------------------------ host API
def test_order_mask_and_public_name():
    mu = np.array([0.2, 0.7, 0.4, 0.65])
    t, w = characteristic_time(mu)
    perm = np.array([3, 0, 2, 1])
    t_p, w_p = characteristic_time(mu[perm])
    assert t_p == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(w_p, w[perm], rtol=1e-10)
    padded = np.array([0.2, np.nan, 0.7, 0.4, 0.99, 0.65])
    mask = np.array([True, False, True, True, False, True])
    t_m, w_m = characteristic_time(padded, arm_mask=mask)
    assert t_m == pytest.approx(t, rel=1e-12)
    np.testing.assert_allclose(w_m[mask], w, rtol=1e-10)
    assert (w_m[~mask] == 0).all()
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    assert oracles.characteristic_time is characteristic_time


def test_beta_optimal_properties():
    """w^beta_best = beta; T*_beta >= T* with equality at beta = w*_best; T*_{1/2} <= 2 T*
    (Russo 2020, Gamma*_{1/2} >= Gamma*/2)."""
    rng = np.random.default_rng(3)
    for family in ("bernoulli", "gaussian"):
        for _ in range(5):
            k = int(rng.integers(2, 8))
            mu = rng.uniform(0, 1, k) if family == "bernoulli" else rng.normal(0, 1, k)
            best = int(np.argmax(mu))
            t, w = characteristic_time(mu, family)
            for beta in (0.2, 0.5, 0.8):
                t_b, w_b = characteristic_time(mu, family, beta=beta)
                assert w_b[best] == beta
                assert w_b.sum() == pytest.approx(1.0, abs=1e-12)
                assert t_b >= t * (1 - 1e-12)
            assert characteristic_time(mu, family, beta=0.5)[0] <= 2 * t
            t_opt, w_opt = characteristic_time(mu, family, beta=w[best])
            assert t_opt == pytest.approx(t, rel=1e-9)
            np.testing.assert_allclose(w_opt, w, atol=1e-9)


def test_bernoulli_edge_means():
    """Means 0 and 1 are exact: (1, 0) -> w* = (1/2, 1/2), T* = 1/ln 2 (the Chernoff point
    1/2, d(1, 1/2) = ln 2); a mean 1 best arm elsewhere agrees with the optimiser."""
    t, w = characteristic_time([0.0, 1.0])
    assert t == pytest.approx(1 / math.log(2), rel=1e-12)
    np.testing.assert_allclose(w, [0.5, 0.5], rtol=1e-12)
    for mu in ([1.0, 0.8, 0.75, 0.7], [0.5, 0.0, 0.0], [1.0, 0.0, 0.3]):
        t, w = characteristic_time(mu)
        t_ref, w_ref = _max_min(mu, "bernoulli")
        assert t == pytest.approx(t_ref, rel=1e-6)
        np.testing.assert_allclose(w, w_ref, atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"means": [0.5]}, "at least 2"),
        ({"means": [0.5, 0.2], "arm_mask": [True, False]}, "at least 2"),
        ({"means": [0.5, 0.5, 0.2]}, "shared by 2"),
        ({"means": [0.3, 0.3]}, "infinite"),
        ({"means": [1.2, 0.5]}, r"\[0, 1\]"),
        ({"means": [-0.1, 0.5]}, r"\[0, 1\]"),
        ({"means": [0.1, np.nan]}, "finite"),
        ({"means": [0.1, 0.5], "family": "gaussian", "sigma": 0.0}, "sigma"),
        ({"means": [0.1, 0.5], "family": "gaussian", "sigma": -1.0}, "sigma"),
        ({"means": [0.1, 0.5], "beta": 0.0}, "beta"),
        ({"means": [0.1, 0.5], "beta": 1.0}, "beta"),
        ({"means": [0.1, 0.5], "family": "poisson"}, "family"),
        ({"means": [[0.1, 0.5]]}, "one instance"),
    ],
)
def test_host_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        characteristic_time(**kwargs)


# ------------------------------------------------------------------ JAX == host
def _random_instance(rng, family, dtype):
    k = int(rng.integers(2, 10))
    if family == "bernoulli":
        mode = int(rng.integers(3))
        if mode == 0:
            mu = rng.uniform(0, 1, k)
        elif mode == 1:
            mu = rng.beta(0.5, 0.5, k)
        else:
            mu = np.round(rng.uniform(0, 1, k), 1)
            mu[0] = rng.choice([0.0, 1.0])
    else:
        mu = rng.normal(0, 1, k)
    mu = mu.astype(dtype).astype(np.float64)  # the host sees the same numbers
    return mu, float(np.asarray(rng.uniform(0.3, 3.0), dtype))


def _padded(rng, mu):
    """``mu`` at random positions among ``K + pad`` slots (NaN / 2.0 in the others)."""
    pad = int(rng.integers(0, 4))
    slots = np.where(rng.integers(0, 2, mu.size + pad) == 1, np.nan, 2.0)
    where = np.sort(rng.choice(mu.size + pad, mu.size, replace=False))
    slots[where] = mu
    mask = np.zeros(mu.size + pad, bool)
    mask[where] = True
    return slots, mask


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("beta", [None, "random"])
@pytest.mark.parametrize("x64", [False, True])
def test_jax_matches_host(family, beta, x64):
    """Random instances, arms in random order, padded arms at random positions (NaN or
    out-of-range means there): float64 to 1e-9, float32 to 2e-5 relative."""
    rng = np.random.default_rng(11 + x64)
    dtype, rel = (np.float64, 1e-9) if x64 else (np.float32, 2e-5)
    checked = 0
    with jax.enable_x64(x64):
        while checked < 25:
            mu, sigma = _random_instance(rng, family, dtype)
            if np.sum(mu == mu.max()) > 1:
                continue
            b = None if beta is None else float(rng.uniform(0.05, 0.95))
            b = None if b is None else float(np.asarray(b, dtype))
            t, w = characteristic_time(mu, family, sigma=sigma, beta=b)
            slots, mask = _padded(rng, mu)
            tj, wj = _jax(family, slots, mask, b, sigma, dtype)
            assert tj == pytest.approx(t, rel=rel), (mu, b)
            assert (wj[~mask] == 0).all()
            np.testing.assert_allclose(wj[mask], w, rtol=rel, atol=rel * 1e-3)
            checked += 1


# ------------------------------------------------------------------ JAX: batching, edges
def test_jit_and_vmap():
    rng = np.random.default_rng(5)
    means = rng.uniform(0, 1, (6, 5)).astype(np.float32)
    mask = np.ones((6, 5), bool)
    mask[1, 3] = mask[4, 0] = False
    betas = rng.uniform(0.1, 0.9, 6).astype(np.float32)
    sigmas = rng.uniform(0.5, 2.0, 6).astype(np.float32)
    for family in ("bernoulli", "gaussian"):

        def one(m, k, b, s, family=family):
            return optimal_weights(family, m, k, s), beta_optimal_weights(
                family, m, k, b, s
            )

        batched = jax.jit(jax.vmap(one))(means, mask, betas, sigmas)
        for i in range(6):
            eager = one(means[i], mask[i], betas[i], sigmas[i])
            for got, want in zip(
                jax.tree.leaves(batched), jax.tree.leaves(eager), strict=True
            ):
                np.testing.assert_allclose(got[i], want, rtol=2e-6, atol=1e-7)
    # traced sigma / beta under jit: one compilation serves every value
    f = jax.jit(
        lambda s: optimal_weights("gaussian", jnp.array([0.0, 1.0]), mask[0, :2], s)
    )
    assert float(f(2.0)[0]) == pytest.approx(32.0, rel=1e-6)
    assert float(f(0.5)[0]) == pytest.approx(2.0, rel=1e-6)


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
def test_defined_outputs(family):
    """Ties (two best, all equal): T* = inf, uniform over the tied best arms (the
    authors' OptimalWeights); one real arm: T* = 0, w = that arm; none: T* = inf, w = 0.
    Padded arms weigh 0 whatever they hold."""
    nan = np.nan
    cases = [
        ([0.3, 0.5, 0.5, 0.1], [1, 1, 1, 1], math.inf, [0, 0.5, 0.5, 0]),
        ([0.4, 0.4, 0.4], [1, 1, 1], math.inf, [1 / 3] * 3),
        ([0.4, 0.9, 0.4, 0.2], [1, 0, 1, 1], math.inf, [0.5, 0, 0.5, 0]),
        ([0.4, 0.9], [0, 1], 0.0, [0, 1]),
        ([0.4, 0.9], [0, 0], math.inf, [0, 0]),
        ([nan, 0.6, 0.2, nan], [0, 1, 1, 0], None, None),
    ]
    for means, mask, t_want, w_want in cases:
        for beta in (None, 0.4):
            t, w = _jax(family, means, np.array(mask, bool), beta)
            if t_want is None:
                ref_t, ref_w = characteristic_time([0.6, 0.2], family, beta=beta)
                assert t == pytest.approx(ref_t, rel=1e-5)
                np.testing.assert_allclose(w, [0, *ref_w, 0], rtol=1e-5)
                continue
            assert t == t_want
            np.testing.assert_allclose(w, w_want, rtol=1e-6)


def test_bernoulli_edge_means_jax():
    """Empirical means exactly 0 or 1 are computed, not clipped: (1, 0) gives (1/2, 1/2)
    and 1/ln 2; others match the host."""
    for dtype, rel in ((jnp.float32, 1e-5), (jnp.float64, 1e-9)):
        with jax.enable_x64(dtype == jnp.float64):
            t, w = _jax("bernoulli", [0.0, 1.0], dtype=dtype)
            assert t == pytest.approx(1 / math.log(2), rel=rel)
            np.testing.assert_allclose(w, [0.5, 0.5], rtol=rel)
            for mu in (
                [1.0, 0.8, 0.75, 0.7],
                [0.5, 0.0, 0.0],
                [1.0, 0.0, 0.3],
                [0.0, 0.2],
            ):
                for beta in (None, 0.5):
                    t_ref, w_ref = characteristic_time(mu, beta=beta)
                    t, w = _jax("bernoulli", mu, beta=beta, dtype=dtype)
                    assert t == pytest.approx(t_ref, rel=rel)
                    np.testing.assert_allclose(w, w_ref, rtol=rel)


def test_dtype_and_errors():
    t, w = optimal_weights("bernoulli", jnp.array([0.2, 0.5]), jnp.array([True, True]))
    assert t.dtype == w.dtype == jnp.float32 and t.shape == () and w.shape == (2,)
    with pytest.raises(ValueError, match="family"):
        optimal_weights("poisson", jnp.array([0.2, 0.5]), jnp.ones(2, bool))
    with pytest.raises(ValueError, match="beta"):
        beta_optimal_weights("bernoulli", jnp.array([0.2, 0.5]), jnp.ones(2, bool), 1.0)
    with pytest.raises(ValueError, match="sigma"):
        optimal_weights("gaussian", jnp.array([0.2, 0.5]), jnp.ones(2, bool), 0.0)
    # traced invalid numbers cannot raise: NaN, not a silently wrong number
    means, mask = jnp.array([0.2, 0.5, 0.4]), jnp.ones(3, bool)
    for beta in (0.0, 1.0, 1.5):
        t, w = jax.jit(lambda b: beta_optimal_weights("bernoulli", means, mask, b))(
            beta
        )
        assert np.isnan(t) and np.isnan(w).all()
    t, w = jax.jit(lambda s: optimal_weights("gaussian", means, mask, s))(-1.0)
    assert np.isnan(t) and np.isnan(w).all()


FORBIDDEN = {
    "while",
    "scan",
    "cond",
    "gather",
    "scatter",
    "scatter-add",
    "dynamic_slice",
}


def _primitives(jaxpr) -> set[str]:
    names = set()
    for eqn in jaxpr.eqns:
        names.add(eqn.primitive.name)
        for sub in jax.core.subjaxprs(eqn) if hasattr(jax.core, "subjaxprs") else ():
            names |= _primitives(sub)
        for param in eqn.params.values():
            inner = getattr(param, "jaxpr", None)
            if inner is not None:
                names |= _primitives(getattr(inner, "jaxpr", inner))
    return names


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
def test_kernel_safe(family):
    """Straight-line code: no loop, branch, gather or scatter primitive (what a Pallas
    kernel body can hold), for both entry points."""
    means, mask = jnp.full(7, 0.5), jnp.ones(7, bool)
    for fn in (
        lambda m, k: optimal_weights(family, m, k, 1.0),
        lambda m, k: beta_optimal_weights(family, m, k, 0.5, 1.0),
    ):
        used = _primitives(jax.make_jaxpr(fn)(means, mask).jaxpr)
        assert not used & FORBIDDEN, used & FORBIDDEN


HARD = [  # instances that broke earlier versions (float32 means)
    # two best means 7e-6 apart near 1 and a mean 5e-6: x_a from 1e-9 to 1
    [0.998255074, 4.61272612e-06, 0.834952176, 0.959975243, 0.998261869],
    # a mean 4e-8: (p - q) / q rounds to -1 in float32
    [6.65302097e-04, 0.321224898, 0.688158810, 6.55036047e-03, 4.26135678e-08, 0.533],
    [0.978655517, 1e-9, 0.6, 3e-12],
    # best means within 2e-5 of 1: 1 - m must not be recomputed from m
    [0.12700227, 0.49888217, 0.99998826, 0.03871984, 0.92400503, 0.99999827, 0.0195],
    [0.999998987, 0.834146917, 0.936369002, 4.58831229e-04, 0.985453308, 0.999970317],
    # many arms, one of them close to the best
    [0.5 + 0.04 * np.sin(i) for i in range(60)],
]


@pytest.mark.parametrize("mu", HARD)
@pytest.mark.parametrize("beta", [None, 0.3])
def test_hard_instances(mu, beta):
    mu = np.asarray(mu, np.float32).astype(np.float64)
    t, w = characteristic_time(mu, beta=beta)
    for dtype, rel in ((jnp.float32, 2e-5), (jnp.float64, 1e-9)):
        with jax.enable_x64(dtype == jnp.float64):
            tj, wj = _jax("bernoulli", mu, beta=beta, dtype=dtype)
        assert tj == pytest.approx(t, rel=rel)
        np.testing.assert_allclose(wj, w, rtol=rel)


@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("beta", [None, 0.3])
def test_many_arms(family, beta):
    """K = 300: the outer Newton starts far right of the root (the iteration counts:
    with 5 float32 outer steps instead of 8 the Bernoulli beta = 0.3 case is 3e-3 off)."""
    rng = np.random.default_rng(3)
    mu = rng.uniform(0, 1, 300) if family == "bernoulli" else rng.normal(0, 1, 300)
    mu = mu.astype(np.float32).astype(np.float64)
    t, w = characteristic_time(mu, family, beta=beta)
    for dtype, rel in ((jnp.float32, 2e-5), (jnp.float64, 1e-9)):
        with jax.enable_x64(dtype == jnp.float64):
            tj, wj = _jax(family, mu, beta=beta, dtype=dtype)
        assert tj == pytest.approx(t, rel=rel)
        np.testing.assert_allclose(wj, w, rtol=rel)
