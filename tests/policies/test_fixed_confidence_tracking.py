"""Unit tests: Track-and-Stop (D-/C-Tracking), Best Challenger, uniform sampling with
GLR or posterior stopping, KL-Racing and Chernoff-Racing, beyond the trace cases:
decisions worked by hand, the C-Tracking projection against a linear program, the
tie conventions, stopping and read-outs, argument errors, float32, and error rates."""

from __future__ import annotations

import harness
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.optimize import linprog

import jbandits
from jbandits.policies.blocks import glr, posterior, tracking
from jbandits.policies.fixed_confidence.best_challenger import best_challenger
from jbandits.policies.fixed_confidence.chernoff_racing import chernoff_racing
from jbandits.policies.fixed_confidence.kl_racing import kl_racing
from jbandits.policies.fixed_confidence.track_and_stop import project, track_and_stop
from jbandits.policies.fixed_confidence.uniform_glr import uniform_glr


def _run(policy, table, budget, arm_mask=None):
    res = harness.play_table(policy, np.asarray(table, float), budget, arm_mask)
    arms = np.asarray(res.arms)
    return arms[arms >= 0], res


# ----------------------------------------------------------- C-Tracking projection
def _linf_distance(w, eps):
    """min ||v - w||_inf over v in Sigma^eps, by linear programming (v, eta)."""
    k = len(w)
    c = np.r_[np.zeros(k), 1.0]
    eye = np.eye(k)
    a_ub = np.block([[eye, -np.ones((k, 1))], [-eye, -np.ones((k, 1))]])
    b_ub = np.r_[w, -w]
    a_eq = np.r_[np.ones(k), 0.0][None]
    bounds = [(eps, 1.0)] * k + [(0, None)]
    res = linprog(c, a_ub, b_ub, a_eq, [1.0], bounds=bounds)
    return res.fun


@pytest.mark.parametrize("seed", range(12))
def test_projection_is_an_linf_projection_onto_sigma_eps(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 8))
    w = rng.dirichlet(np.full(k, 0.3))
    eps = float(rng.uniform(0.01, 1.0 / k))
    with jax.enable_x64(True):
        v = np.asarray(project(jnp.asarray(w), eps, jnp.ones(k, bool)))
    assert v.sum() == pytest.approx(1.0, abs=1e-12)
    assert v.min() >= eps - 1e-15
    assert np.abs(v - w).max() == pytest.approx(_linf_distance(w, eps), abs=1e-9)
    # every arm above eps moves by the same lam (the Euclidean projection)
    moved = w - v
    up = v > eps + 1e-12
    assert np.ptp(moved[up]) < 1e-12 and np.all(moved[up] >= -1e-15)


def test_projection_ignores_padded_arms_and_keeps_large_weights():
    w = jnp.array([0.5, 0.0, 0.3, 0.2, 0.0])
    mask = jnp.array([True, False, True, True, False])
    v = np.asarray(project(w, 0.1, mask))
    np.testing.assert_allclose(v, [0.5, 0.0, 0.3, 0.2, 0.0], atol=1e-7)
    v = np.asarray(project(jnp.array([0.9, 0.0, 0.05, 0.05, 0.0]), 0.1, mask))
    np.testing.assert_allclose(v, [0.8, 0.0, 0.1, 0.1, 0.0], atol=1e-7)


# --------------------------------------------------------------------- the weights
def test_weights_rounding_makes_symmetric_pairs_tie():
    # mu_2 = 1 - mu_1: w* = (1/2, 1/2) exactly; the solver returns it ulps apart
    with jax.enable_x64(True):
        means = jnp.array([2 / 3, 1 / 3])
        unique, w = tracking.weights_of("bernoulli", means, jnp.ones(2, bool), 1.0)
        assert bool(unique)
        assert float(w[0]) == float(w[1]) == 0.5
        # GK16 Table 1 caption, w*(mu_1) = [0.417 0.390 0.136 0.057]
        _, w = tracking.weights_of(
            "bernoulli", jnp.array([0.5, 0.45, 0.43, 0.4]), jnp.ones(4, bool), 1.0
        )
        np.testing.assert_allclose(w, [0.417, 0.390, 0.136, 0.057], atol=6e-4)
        assert np.all(np.asarray(w) * 2**20 == np.round(np.asarray(w) * 2**20))


def test_tied_best_weights_are_uniform_on_the_tied_arms():
    mask = jnp.array([True, True, True, False])
    unique, w = tracking.weights_of(
        "bernoulli", jnp.array([0.5, 0.2, 0.5, 0.9]), mask, 1.0
    )
    assert not bool(unique)
    np.testing.assert_array_equal(w, [0.5, 0.0, 0.5, 0.0])


def test_forced_exploration_set():
    # U_t = {a : N_a < sqrt(t) - K/2}: t = 25, K = 3 -> N_a < 3.5
    counts = jnp.array([3.0, 4.0, 18.0, 0.0])
    mask = jnp.array([True, True, True, False])
    under, arm = tracking.undersampled(counts, jnp.int32(25), mask)
    assert bool(under) and int(arm) == 0
    under, _ = tracking.undersampled(jnp.array([4.0, 4.0, 17.0, 0.0]), 25, mask)
    assert not bool(under)  # strict: N = 4 is not < 3.5; t = 16 -> level 2.5
    under, _ = tracking.undersampled(jnp.array([3.0, 4.0, 9.0, 0.0]), 16, mask)
    assert not bool(under)


# -------------------------------------------------------------- decisions by hand
def test_d_tracking_pulls_the_first_tied_best_arm_and_does_not_stop():
    # after one pull each, arms 1 and 2 both read 1: no stop (Z = 0), no forced
    # exploration (sqrt(3) - 3/2 < 1): D-Tracking pulls the first tied arm, 1 (not
    # the least pulled arm 0 that uniform weights over all arms would give); arm 1
    # reads 1 again, still tied with arm 2 at t = 4 (sqrt(4) - 3/2 < 1): arm 1
    table = np.array([[0.0] * 4, [1.0] * 4, [1.0, 0.0, 0.0, 0.0]])
    arms, res = _run(track_and_stop(3, delta=0.01), table, 5)
    np.testing.assert_array_equal(arms, [0, 1, 2, 1, 1])
    assert not bool(res.stopped)


def test_c_tracking_projected_tied_weights():
    # means (1, 0, 1) after the round robin: w = (1/2, 0, 1/2) on the tied arms,
    # projected with eps_3 = 1/(2 sqrt(12)) = 0.144 to (0.428, 0.144, 0.428): the
    # deficit's argmax is arm 0 (first of a tie). Arm 0 reads 1 again: D = (-0.572,
    # 0.144, 0.428) + (0.431, 0.139, 0.431) at t = 4 -> arm 2
    table = np.array([[1.0, 1.0, 1.0, 1.0], [0.0] * 4, [1.0, 1.0, 0.0, 0.0]])
    arms, _ = _run(track_and_stop(3, delta=0.01, tracking="c"), table, 5)
    np.testing.assert_array_equal(arms[:5], [0, 1, 2, 0, 2])


def test_best_challenger_symmetric_pair_pulls_the_challenger():
    # K = 2, means (1, 0) after one pull each: w* = (1/2, 1/2) exactly after the
    # rounding; share 1/2 < 1/2 is false -> the challenger, arm 1; then (1, 0) with
    # counts (1, 2): share 1/3 < 1/2 -> the leader
    table = np.array([[1.0] * 6, [0.0] * 6])
    arms, _ = _run(best_challenger(2, delta=0.001), table, 5)
    np.testing.assert_array_equal(arms[:4], [0, 1, 1, 0])


def test_best_challenger_divergence_rule_by_hand():
    table = np.array([[1.0, 1.0, 0.0, 1.0, 1.0] * 2, [1.0, 0.0, 0.0] * 3 + [0.0]])
    policy = best_challenger(2, delta=0.001, rule="divergences")
    arms, _ = _run(policy, table, 4)
    # t = 2: means (1, 1): tied, d = 0 = 0 -> challenger 1; t = 3: (1, 1/2), N (1, 2):
    # pooled 2/3, kl(1, 2/3) = 0.405 > kl(1/2, 2/3) = 0.059 -> leader 0
    np.testing.assert_array_equal(arms, [0, 1, 1, 0])


def test_racing_rounds_and_elimination_by_hand():
    # Gaussian, sigma = 0.1: arm 2 reads -1 every time, arms 0 and 1 read 1.0 and 0.9.
    # Chernoff after round 1: r (d + d) = (1 - (-1))^2 / (4 sigma^2) = 100 > beta:
    # arm 2 out; arms 0 and 1: r (0.1)^2 / (4 * 0.01) = r / 4 > beta(r, 0.1) =
    # log(log r + 1) + log 10 first at r = 15 (3.75 > 3.61; r = 14: 3.5 < 3.60)
    table = np.array([[1.0] * 30, [0.9] * 30, [-1.0] * 30])
    policy = chernoff_racing(3, delta=0.1, family="gaussian", sigma=0.1)
    arms, res = _run(policy, table, 40)
    rs = np.arange(1, 20)
    r_stop = int(rs[np.argmax(rs / 4 > np.log(np.log(rs) + 1) + np.log(10))])
    assert r_stop == 15
    np.testing.assert_array_equal(arms, [0, 1, 2] + [0, 1] * (r_stop - 1))
    assert bool(res.stopped) and int(res.output) == 0
    assert int(res.num_pulls) == 3 + 2 * (r_stop - 1)


def test_kl_racing_matches_the_gaussian_closed_form():
    # Gaussian KL bounds mu +- sqrt(2 sigma^2 beta / r): arms 0, 1 at 1.0 and 0.8
    # separate when 0.2 > 2 sqrt(2 sigma^2 beta(r) / r)
    table = np.array([[1.0] * 60, [0.8] * 60])
    policy = kl_racing(2, delta=0.1, family="gaussian", sigma=0.1)
    arms, res = _run(policy, table, 100)
    rs = np.arange(1, 60)
    beta = np.log(np.log(rs) + 1) + np.log(10)
    r_stop = int(rs[np.argmax(2 * np.sqrt(2 * 0.01 * beta / rs) < 0.2)])
    assert len(arms) == 2 * r_stop and int(res.output) == 0


def test_racing_clock_pulls_uses_the_sample_count():
    table = np.array([[1.0] * 60, [0.9] * 60, [0.8] * 60])
    kw = dict(delta=0.1, family="gaussian", sigma=0.1)
    a_round, _ = _run(chernoff_racing(3, **kw), table, 150)
    a_pulls, _ = _run(chernoff_racing(3, clock="pulls", **kw), table, 150)
    assert len(a_pulls) > len(a_round)  # beta(t) > beta(r): later eliminations


# ------------------------------------------------------------ stopping, read-outs
@pytest.mark.parametrize(
    "factory, kwargs",
    [
        (track_and_stop, {"tracking": "d"}),
        (track_and_stop, {"tracking": "c", "family": "gaussian"}),
        (track_and_stop, {"tracking": "c", "projection": False, "family": "gaussian"}),
        (best_challenger, {"family": "gaussian"}),
        (best_challenger, {"rule": "divergences"}),
        (uniform_glr, {}),
        (uniform_glr, {"sampling": "random", "family": "gaussian"}),
    ],
)
def test_glr_policies_stop_at_the_first_crossing(factory, kwargs):
    rng = np.random.default_rng(1)
    means = np.array([0.8, 0.5, 0.35])
    family = kwargs.get("family", "bernoulli")
    if family == "bernoulli":
        table = (rng.random((3, 400)) < means[:, None]).astype(float)
    else:
        table = means[:, None] + 0.5 * rng.standard_normal((3, 400))
        kwargs = {**kwargs, "sigma": 0.5}
    delta = 0.05
    arms, res = _run(factory(3, delta=delta, **kwargs), table, 400)
    assert bool(res.stopped)
    n = len(arms)
    assert int(res.num_pulls) == n
    # replay the statistics: Z(t) <= beta for K <= t < n, Z(n) > beta
    counts, sums = np.zeros(3), np.zeros(3)
    for t, a in enumerate(arms, start=1):
        sums[a] += table[a, int(counts[a])]
        counts[a] += 1
        if t < 3:
            continue
        stop, _ = glr.stops(
            family, jnp.asarray(counts), jnp.asarray(sums / counts),
            jnp.ones(3, bool), t, delta, kwargs.get("sigma", 1.0),
        )  # fmt: skip
        assert bool(stop) == (t == n), t
    assert int(res.output) == int(np.argmax(sums / counts))


def test_posterior_stopping_and_recommendation():
    # Beta posteriors: stop at the first t >= K with max alpha >= c; recommend argmax
    table = np.array([[1.0, 1.0, 1.0, 0.0, 1.0] * 8, [0.0, 1.0, 0.0, 0.0, 0.0] * 8])
    policy = uniform_glr(2, stopping="posterior", confidence=0.95)
    arms, res = _run(policy, table, 40)
    assert bool(res.stopped) and int(res.output) == 0
    counts, sums = np.zeros(2), np.zeros(2)
    for t, a in enumerate(arms, start=1):
        sums[a] += table[a, int(counts[a])]
        counts[a] += 1
        if t < 2:
            continue
        stats = harness.arm_stats(counts, sums)
        alpha = posterior.best_arm_probabilities("bernoulli", stats, jnp.ones(2, bool))
        assert (float(jnp.max(alpha)) >= 0.95) == (t == len(arms))


def test_padded_arms_are_never_pulled_nor_output():
    mask = np.array([False, True, False, True])
    table = np.array([[0.0] * 50, [1.0] * 50, [0.0] * 50, [0.0, 1.0] * 25])
    # the contract tests check the first trace case of every name (D-Tracking); here
    # the C-Tracking projection, whose constants use the real K
    for policy in (track_and_stop(4, delta=0.2, tracking="c"), kl_racing(4, delta=0.2)):
        arms, res = _run(policy, table, 50, mask)
        assert set(arms.tolist()) <= {1, 3} and int(res.output) in (1, 3)


# ------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "factory, kwargs, match",
    [
        (track_and_stop, {"tracking": "x"}, "tracking"),
        (track_and_stop, {"projection": 1}, "projection"),
        (track_and_stop, {"threshold": "kk21"}, "calibrated"),
        (track_and_stop, {"family": "poisson"}, "family"),
        (track_and_stop, {"delta": 1.0}, "delta"),
        (best_challenger, {"rule": "x"}, "rule"),
        (best_challenger, {"sigma": 0.0, "family": "gaussian"}, "sigma"),
        (uniform_glr, {"sampling": "x"}, "sampling"),
        (uniform_glr, {"stopping": "x"}, "stopping"),
        (uniform_glr, {"confidence": 0.9}, "posterior"),
        (uniform_glr, {"stopping": "posterior", "confidence": 1.0}, "confidence"),
        (kl_racing, {"clock": "x"}, "clock"),
        (chernoff_racing, {"threshold": "gk16", "family": "gaussian"}, "calibrated"),
        (chernoff_racing, {"num_arms": 1}, "num_arms"),
    ],
)
def test_argument_errors(factory, kwargs, match):
    kwargs = {"num_arms": 3, **kwargs}
    with pytest.raises(ValueError, match=match):
        factory(**kwargs)


# --------------------------------------------------- float32 and the error rate
@pytest.mark.parametrize(
    "name, kwargs",
    [
        ("track_and_stop", {"tracking": "d"}),
        ("track_and_stop", {"tracking": "c", "family": "gaussian", "sigma": 0.5}),
        ("best_challenger", {"family": "gaussian", "sigma": 0.5}),
        ("uniform_glr", {}),
        ("kl_racing", {}),
        ("chernoff_racing", {}),
    ],
)
def test_float32_runs_find_the_best_arm(name, kwargs):
    # float32 (the default): every replication stops before the cap, errors within
    # delta + 4 SE (well-separated arms, practical threshold)
    means = jnp.array([0.3, 0.7, 0.45, 0.2])
    if kwargs.get("family") == "gaussian":
        bandit, params = jbandits.envs.gaussian(means, stds=jnp.full(4, 0.5))
    else:
        bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make(name, num_arms=4, delta=0.1, **kwargs)
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(0), budget=3000, num_reps=100,
        progress=False,
    )  # fmt: skip
    assert np.asarray(res.stopped).all()
    errors = float(np.mean(np.asarray(res.output) != 1))
    assert errors <= 0.1 + 4 * np.sqrt(0.1 * 0.9 / 100)


def test_float32_and_float64_take_the_same_decisions():
    rng = np.random.default_rng(4)
    table = (rng.random((3, 200)) < np.array([[0.8], [0.5], [0.3]])).astype(float)
    for policy in (track_and_stop(3, delta=0.05), chernoff_racing(3, delta=0.05)):
        a32, _ = _run(policy, table, 200)
        with jax.enable_x64(True):
            a64, _ = _run(policy, table, 200)
        np.testing.assert_array_equal(a32, a64)


def test_delta_correct_threshold_error_rate_gaussian():
    # Gaussian, the delta-correct threshold (KK21): errors <= delta + 4 SE at delta =
    # 0.2 on a hard-ish instance, for the tracking rules
    means = jnp.array([0.0, 0.5, 0.2])
    bandit, params = jbandits.envs.gaussian(means, stds=jnp.ones(3))
    for kwargs in ({"tracking": "d"}, {"tracking": "c"}):
        policy = jbandits.make(
            "track_and_stop", num_arms=3, delta=0.2, family="gaussian",
            threshold="delta_correct", **kwargs,
        )  # fmt: skip
        res = jbandits.simulate(
            policy, bandit, params, jax.random.key(1), budget=20000, num_reps=200,
            progress=False,
        )  # fmt: skip
        assert np.asarray(res.stopped).all()
        errors = float(np.mean(np.asarray(res.output) != 1))
        assert errors <= 0.2 + 4 * np.sqrt(0.2 * 0.8 / 200)
