"""The top-two family (TTTS, T3C, TTUCB): the pieces their trace cases cannot check
(laws of the random choices, the Lambert-W threshold, tracking, argument errors)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from harness import arm_stats, play_table
from scipy.special import lambertw

import jbandits
from jbandits.policies.blocks import posterior
from jbandits.policies.fixed_confidence import _top_two, ttts, ttucb


def test_wbar_minus1_against_scipy():
    x = np.array([1.5, 3.386, 5.0, 12.0, 40.0, 300.0])
    want = -lambertw(-np.exp(-x), -1).real
    with jax.enable_x64(True):
        got = np.asarray(ttucb.wbar_minus1(jnp.asarray(x)))
    np.testing.assert_allclose(got, want, rtol=1e-13)
    got32 = np.asarray(ttucb.wbar_minus1(jnp.asarray(x, jnp.float32)))
    np.testing.assert_allclose(got32, want, rtol=1e-6)
    # g_m(n) by its formula at n = 100, s = alpha = 1.2
    n = 100.0
    arg = 2 * 1.2 * 1.2 * np.log(n) + 2 * np.log(2 + 1.2 * np.log(n)) + 2
    with jax.enable_x64(True):
        g = float(ttucb.exploration(n, 1.2, 1.2))
    assert g == pytest.approx(-lambertw(-np.exp(-arg), -1).real, rel=1e-13)


def _challenger_law(stats, mask, cap, draws=6000):
    """Frequencies of TTTS's challenger (resampling capped at ``cap``, then the
    fallback) over many keys, for the leader of one fixed theta."""
    theta = posterior.sample_posterior("bernoulli", jax.random.key(0), stats, mask)
    leader = jnp.argmax(theta)
    alpha = posterior.best_arm_probabilities("bernoulli", stats, mask)

    def one(key):
        k1, k2 = jax.random.split(key)
        j, _, found = ttts.resample(
            "bernoulli", k1, stats, mask, leader, jnp.bool_(True), cap, 1.0
        )
        other = ttts.fallback(k2, alpha, leader, theta, mask)
        return jnp.where(found, j, other), found

    picks, found = jax.jit(jax.vmap(one))(jax.random.split(jax.random.key(5), draws))
    freq = np.bincount(np.asarray(picks), minlength=mask.shape[0]) / draws
    return int(leader), np.asarray(alpha), freq, float(np.mean(found))


@pytest.mark.parametrize("cap", [0, 1, 16])
def test_ttts_challenger_law_does_not_depend_on_the_cap(cap):
    """P(J = j) = alpha_j / (1 - alpha_I) for every cap (resampling and the fallback
    together), within 5 binomial SE; the padded arm is never drawn. Fails if the
    fallback draws j uniformly or from alpha without excluding the leader."""
    stats = arm_stats([40, 12, 25, 0, 8], [30, 6, 16, 0, 3])
    mask = jnp.array([True, True, True, False, True])
    leader, alpha, freq, found = _challenger_law(stats, mask, cap)
    want = np.where(np.arange(5) == leader, 0.0, alpha) / (1.0 - alpha[leader])
    se = np.sqrt(want * (1 - want) / 6000)
    assert freq[3] == 0.0 and freq[leader] == 0.0
    assert np.all(np.abs(freq - want) < 5 * se + 1e-12), (freq, want)
    if cap == 0:
        assert found == 0.0
    if cap == 16:
        assert found > 0.9


def test_ttts_fallback_degenerate_and_rounding():
    """All alpha_j (j != I) zero: the runner-up of theta; u * total rounded up to the
    total: the last arm with positive weight, never the leader or a padded arm."""
    theta = jnp.array([0.1, 0.9, 0.5, -jnp.inf])
    mask = jnp.array([True, True, True, False])
    zero = jnp.array([0.0, 1.0, 0.0, 0.0])
    assert int(ttts.fallback(jax.random.key(0), zero, 1, theta, mask)) == 2
    alpha = jnp.array([0.3, 0.4, 0.3, 0.0])
    picks = jax.vmap(lambda k: ttts.fallback(k, alpha, 1, theta, mask))(
        jax.random.split(jax.random.key(1), 2000)
    )
    picks = np.asarray(picks)
    assert set(np.unique(picks)) == {0, 2}
    assert abs(np.mean(picks == 0) - 0.5) < 5 * np.sqrt(0.25 / 2000)


def test_tc_challenger_ties_uniform():
    """A leader that is not the empirical best: every better arm costs 0 and is
    chosen uniformly (5 SE); costs equal in exact arithmetic but not in floating point
    tie too (leader (2, 1) against (1, 0) and (4, 1/4): both log(27/4))."""
    stats = arm_stats([5, 5, 5, 5, 5], [1, 4, 4, 4, 0])
    mask = jnp.ones(5, bool)
    keys = jax.random.split(jax.random.key(2), 3000)
    picks = np.asarray(
        jax.vmap(lambda k: _top_two.tc_challenger("bernoulli", stats, 0, mask, 1.0, k))(
            keys
        )
    )
    freq = np.bincount(picks, minlength=5) / picks.size
    assert freq[0] == 0.0 and freq[4] == 0.0
    assert np.all(np.abs(freq[1:4] - 1 / 3) < 5 * np.sqrt(2 / 9 / picks.size))
    with jax.enable_x64(True):
        stats = arm_stats([1, 4, 2, 3], [0, 1, 2, 3], dtype=jnp.float64)
        picks = jax.vmap(
            lambda k: _top_two.tc_challenger(
                "bernoulli", stats, 2, jnp.array([True, True, True, False]), 1.0, k
            )
        )(keys)
    assert set(np.unique(np.asarray(picks))) == {0, 1}


def test_ttucb_tracking_follows_beta():
    """Tracking: the leader's share of the pulls made while it leads stays within one
    pull of beta L (the procedure's invariant), for every arm."""
    rng = np.random.default_rng(0)
    table = np.array([0.5, 0.4, 0.3, 0.2])[:, None] + rng.standard_normal((4, 3000))
    beta = 0.3
    pol = jbandits.make("ttucb", num_arms=4, family="gaussian", delta=1e-6, beta=beta)
    bandit, params = jbandits.envs.replay(table)
    res = jax.jit(
        lambda k: jbandits.run(
            pol, bandit, params, k, budget=600, horizon=600, return_state=True
        )
    )(jax.random.key(0))
    extra = res.state.extra  # TTUCB's part of the fixed-confidence state
    leads, pulls = np.asarray(extra.leads), np.asarray(extra.lead_pulls)
    assert leads.sum() == 600 - 4 + 1  # decisions at t = 4 .. 600
    assert np.all(np.abs(pulls - beta * leads) <= 1.0), (pulls, leads)


def test_top_two_argument_errors():
    with pytest.raises(ValueError, match="beta"):
        jbandits.make("t3c", num_arms=3, beta=1.0)
    with pytest.raises(ValueError, match="confidence"):
        jbandits.make("ttts", num_arms=3, confidence=0.9)
    with pytest.raises(ValueError, match="stopping"):
        jbandits.make("ttts", num_arms=3, stopping="bayes")
    with pytest.raises(ValueError, match="max_resamples"):
        jbandits.make("ttts", num_arms=3, max_resamples=-1)
    with pytest.raises(ValueError, match="target"):
        jbandits.make("ttucb", num_arms=3, target="coin")
    with pytest.raises(ValueError, match="threshold"):
        jbandits.make("ttucb", num_arms=3, family="gaussian", threshold="gk16")
    with pytest.raises(ValueError, match="alpha"):
        jbandits.make("ttucb", num_arms=3, alpha=0.0)


@pytest.mark.parametrize("name", ["ttts", "t3c", "ttucb"])
def test_stops_and_identifies_an_easy_instance(name):
    """Bernoulli (0.9, 0.1, 0.2) at delta = 0.01: every run stops well inside the
    budget and recommends arm 0."""
    rng = np.random.default_rng(1)
    means = np.array([0.9, 0.1, 0.2])
    for seed in range(3):
        table = (rng.random((3, 400)) < means[:, None]).astype(float)
        res = play_table(jbandits.make(name, num_arms=3, delta=0.01), table, 400,
                         seed=seed)  # fmt: skip
        assert bool(res.stopped) and int(res.num_pulls) < 200
        assert int(res.output) == 0
