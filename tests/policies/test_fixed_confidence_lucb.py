"""Unit tests: the KL bounds block (blocks/kl_bounds.py) and the LUCB-family /
lil'UCB fixed-confidence policies."""

from __future__ import annotations

import harness
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import xlogy

import jbandits
from jbandits.policies.blocks import kl_bounds
from jbandits.policies.fixed_confidence import _lucb
from jbandits.policies.fixed_confidence import lil_ucb as lil
from jbandits.policies.fixed_confidence.kl_lucb import kl_lucb
from jbandits.policies.fixed_confidence.lil_ucb import lil_ucb
from jbandits.policies.fixed_confidence.lucb1 import lucb1


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


# ------------------------------------------------------------------ LUCB1 / KL-LUCB
def test_kk13_rate_formula():
    with jax.enable_x64(True):
        got = float(_lucb.kk13_rate(3, 4, 0.1, 1.1, 405.5))
    x = np.log(405.5 * 4 * 3**1.1 / 0.1)
    assert got == pytest.approx(x + np.log(x), rel=1e-14)
    # KK13 Theorem 1's k1 condition at alpha = 1.1 is just below the default 405.5
    e = np.e
    assert 405.0 < 2 * e + 1 + e / 0.1 + (e + 1) / 0.1**2 < 405.5


def _table_run(policy, table, budget):
    return harness.play_table(policy, np.asarray(table, float), budget)


def test_lucb_stages_pull_leader_then_challenger():
    # arm 0 pays 1; arms 1 and 2 pay 0 then 1. Stage 1 (after the initial pulls): the
    # leader is arm 0, the challenger arm 1 (equal UCBs 0 + w(1): lowest index).
    # Stage 2: arm 1 has mean 1/2 with 2 pulls, arm 2 mean 0 with 1 pull; at
    # beta(2, 0.5) = 10.68 (KK13 rate, K = 3) U_1 = 0.5 + sqrt(beta / 4) = 2.13 <
    # U_2 = sqrt(beta / 2) = 2.31, so the challenger is arm 2.
    table = np.array([[1.0] * 40, [0.0] + [1.0] * 39, [0.0] + [1.0] * 39])
    x = np.log(405.5 * 3 * 2**1.1 / 0.5)
    beta = x + np.log(x)
    assert 0.5 + np.sqrt(beta / 4) < np.sqrt(beta / 2)
    res = _table_run(lucb1(3, delta=0.5, epsilon=0.0), table, 13)
    arms_ = np.asarray(res.arms)
    np.testing.assert_array_equal(arms_[:7], [0, 1, 2, 0, 1, 0, 2])
    # every stage after the initial K pulls is a (leader, challenger) pair
    pairs = arms_[3:13].reshape(-1, 2)
    assert np.all(pairs[:, 0] != pairs[:, 1])


@pytest.mark.parametrize("name", ["lucb1", "kl_lucb"])
def test_lucb_stops_at_stage_boundaries_and_is_delta_correct(name):
    # well-separated Bernoulli arms: every run stops; the stopping time is K plus an
    # even number of pulls (whole stages, at least one); errors <= delta + 4 SE
    means = jnp.array([0.9, 0.5, 0.4, 0.3])
    bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make(name, num_arms=4, delta=0.1, rate="practical")
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(3), budget=20000, num_reps=200,
        progress=False,
    )  # fmt: skip
    n = np.asarray(res.num_pulls)
    assert np.asarray(res.stopped).all()
    assert np.all((n - 4) % 2 == 0) and np.all(n >= 6)
    errors = float(np.mean(np.asarray(res.output) != 0))
    assert errors <= 0.1 + 4 * np.sqrt(0.1 * 0.9 / 200)


def test_kl_lucb_is_tighter_than_lucb1_on_skewed_bernoulli():
    # KL bounds lie inside Hoeffding's (KK13 eq. (6)): on low means KL-LUCB stops
    # earlier on the same reward stack (common random numbers)
    means = jnp.array([0.1, 0.02, 0.01])
    bandit, params = jbandits.envs.bernoulli(means)
    kw = dict(num_arms=3, delta=0.1, rate="practical")
    times = {}
    for name in ("lucb1", "kl_lucb"):
        res = jbandits.simulate(
            jbandits.make(name, **kw), bandit, params, jax.random.key(0),
            budget=50000, num_reps=64, progress=False,
        )  # fmt: skip
        times[name] = float(np.mean(np.asarray(res.num_pulls)))
    assert times["kl_lucb"] < 0.7 * times["lucb1"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(rate="kk12"), "rate must be one of"),
        (dict(stopping="chernoff"), "stopping must be one of"),
        (dict(threshold="kk21"), "not calibrated for bernoulli"),
        (dict(family="gaussian", threshold="gk16"), "not calibrated for gaussian"),
        (dict(k1=0.5), "k1 must be >= 1"),
        (dict(alpha=0.0), "alpha must be > 0"),
        (dict(delta=1.0), "delta must be < 1"),
        (dict(epsilon=-0.1), "epsilon must be >= 0"),
        (dict(family="gaussian", sigma=0.0), "sigma must be > 0"),
        (dict(family="poisson"), "family must be one of"),
    ],
)
@pytest.mark.parametrize("factory", [lucb1, kl_lucb])
def test_lucb_argument_errors(factory, kwargs, match):
    with pytest.raises(ValueError, match=match):
        factory(4, **kwargs)


def test_lucb_needs_two_real_arms():
    policy = kl_lucb(3)
    with pytest.raises(ValueError, match="at least 2 real arms"):
        policy.init(jax.random.key(0), jnp.array([True, False, False]))


# ------------------------------------------------------------------------- lil'UCB
def test_theory_delta_meets_theorem_2_at_nu():
    # Theorem 2: P(success) >= 1 - 4 sqrt(c_eps delta) - 4 c_eps delta = 1 - nu
    with jax.enable_x64(True):
        for nu, eps in ((0.1, 0.01), (0.05, 0.3)):
            c = float(lil.c_epsilon(eps))
            assert c == pytest.approx((2 + eps) / eps / np.log1p(eps) ** (1 + eps))
            d = float(lil.theory_delta(nu, eps))
            assert 4 * np.sqrt(c * d) + 4 * c * d == pytest.approx(nu, rel=1e-12)
            # and the paper's default satisfies Theorem 2's range
            assert d < np.log1p(eps) / (np.e * c)


def test_ls_delta_inverts_lemma_3():
    # Lemma 3 fails with probability ((2 + eps)/eps) (delta / log(1 + eps))^(1 + eps)
    with jax.enable_x64(True):
        for nu, eps in ((0.05, 0.01), (0.5, 0.4)):
            d = float(lil.ls_delta(nu, eps))
            fail = (2 + eps) / eps * (d / np.log1p(eps)) ** (1 + eps)
            assert fail == pytest.approx(nu, rel=1e-12)


def test_lil_stopping_rules_by_hand():
    counts = jnp.array([10.0, 1.0, 1.0])
    mask = jnp.array([True, True, True])
    # T_0 = 10 >= 1 + lam * 2 iff lam <= 4.5
    assert bool(lil.pulls_rule(counts, 12, 4.5, mask))
    assert not bool(lil.pulls_rule(counts, 12, 4.6, mask))
    # a padded arm never triggers the rule
    assert not bool(lil.pulls_rule(counts, 12, 4.5, jnp.array([False, True, True])))
    means = jnp.array([0.9, 0.5, 0.1])
    stop, best = lil.ls_stops(means, jnp.array([0.2, 0.2, 0.2]), mask)
    assert bool(stop) and int(best) == 0
    stop, _ = lil.ls_stops(means, jnp.array([0.2, 0.21, 0.2]), mask)
    assert not bool(stop)


def test_lil_heuristic_uses_footnote_2_and_lambda_of_real_k():
    # eps = 0: Figure 1's log(log(T)/delta) is -inf at T = 1; footnote 2's is finite
    idx = lil.lil_index(
        jnp.zeros(2), jnp.ones(2), sigma=0.5, epsilon=0.0, beta=0.5, delta=0.02,
        offset=2.0,
    )  # fmt: skip
    assert np.all(np.isfinite(idx))
    want = 1.5 * np.sqrt(2 * 0.25 * np.log(np.log(3.0) / 0.02))
    np.testing.assert_allclose(idx, want, rtol=1e-6)


def test_lil_outputs_most_pulled_or_empirical_best():
    # arm 1 pays more at first but arm 0 is pulled most when Figure 1's rule fires
    table = np.array([[1.0] * 60, [0.0] * 60, [0.0] * 60])
    res = _table_run(
        lil_ucb(3, family="gaussian", sigma=0.01, lam=1.0, setting="heuristic"),
        table, 60,
    )  # fmt: skip
    assert bool(res.stopped) and int(res.output) == 0
    counts = np.bincount(np.asarray(res.arms)[np.asarray(res.arms) >= 0], minlength=3)
    assert counts[0] >= 1 + 1.0 * (counts.sum() - counts[0])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(delta=0.1, index_delta=1e-4), "either delta"),
        (dict(ls_epsilon=0.1), "only with stopping='ls'"),
        (dict(epsilon=0.0), "epsilon must be > 0"),
        (dict(epsilon=1.0), "epsilon must be < 1"),
        (dict(index_delta=0.5), "index_delta must be < log"),
        (dict(setting="heuristic", index_delta=1.0), "index_delta must be < 1"),
        (
            dict(setting="heuristic", stopping="ls", epsilon=0.0),
            "ls_epsilon must be > 0",
        ),
        (dict(beta=0.0), "beta must be > 0"),
        (dict(lam=-1.0), "lam must be > 0"),
        (dict(setting="fast"), "setting must be one of"),
        (dict(stopping="lil"), "stopping must be one of"),
        (dict(delta=0.0), "delta must be > 0"),
    ],
)
def test_lil_ucb_argument_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        lil_ucb(4, **kwargs)


def test_lil_ucb_accepts_delta_and_index_delta_with_ls():
    # with LS, delta (nu) sets LS's half and index_delta the algorithm's: both used
    policy = lil_ucb(4, delta=0.1, index_delta=1e-4, stopping="ls")
    assert policy.setting == "identification"


@pytest.mark.parametrize("setting", ["theory", "heuristic"])
def test_lil_ucb_finds_the_best_arm(setting):
    means = jnp.array([0.3, 0.9, 0.5])
    bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make("lil_ucb", num_arms=3, setting=setting, stopping="ls")
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(1), budget=200000, num_reps=64,
        progress=False,
    )  # fmt: skip
    assert np.asarray(res.stopped).all()
    assert np.mean(np.asarray(res.output) == 1) >= 0.95


def test_float32_runs_match_float64_decisions():
    # the policies run in float32 (default): same arms as float64 on an easy table
    table = np.array([[1.0, 1.0, 0.0, 1.0] * 10, [0.0, 1.0, 0.0, 0.0] * 10])
    for policy in (kl_lucb(2, delta=0.5, epsilon=0.5), lil_ucb(2, lam=2.0)):
        a32 = np.asarray(_table_run(policy, table, 30).arms)
        with jax.enable_x64(True):
            a64 = np.asarray(_table_run(policy, table, 30).arms)
        np.testing.assert_array_equal(a32, a64)
