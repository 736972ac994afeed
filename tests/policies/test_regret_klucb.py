"""KL-UCB unit tests (spec §2.10, §3.1, §8 items 4, 5, 8)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _bayes_util import assert_binomial, random_stats, replay_arms
from scipy.optimize import brentq
from scipy.special import xlogy

import jbandits
from jbandits.policies.regret import klucb
from jbandits.policies.regret._index import IndexState
from jbandits.policies.regret.klucb import exploration_level, klucb_index


def _kl(p, q):
    return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


def test_klucb_gauss_sigma2_1_c_0_is_ucb1_alpha_2():
    """spec §8 item 4: index vectors agree to 1e-6 on random states."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        stats = random_stats(rng, 7)
        n = int(stats.counts.sum())
        got = np.asarray(
            klucb_index(stats, n, kl="gauss", c=0.0, sigma2=1.0), np.float64
        )
        counts, sums = (
            np.asarray(stats.counts, np.float64),
            np.asarray(stats.sums, np.float64),
        )
        ucb1 = sums / counts + np.sqrt(2.0 * math.log(n) / counts)
        np.testing.assert_allclose(got, ucb1, atol=1e-6, rtol=1e-6)


def test_klucb_gauss_picks_the_same_arm_as_the_ucb1_policy():
    """Same IndexState into both step functions -> same next arm (away from near-ties)."""
    try:
        from jbandits.policies.regret.ucb import ucb1
    except ImportError:  # pragma: no cover - UCB1 is written by another engineer
        pytest.skip("UCB1 not available")
    k = 6
    kl_policy = klucb(k, kl="gauss", tie_break="first")
    ucb_policy = ucb1(k, alpha=2.0, tie_break="first")
    kl_step, ucb_step = jax.jit(kl_policy.step), jax.jit(ucb_policy.step)
    rng = np.random.default_rng(1)
    compared = 0
    for _ in range(200):
        stats = random_stats(rng, k)
        reward = float(rng.normal())
        arm = int(rng.integers(k))
        n = jnp.asarray(int(stats.counts.sum()) - 1, jnp.int32)
        # the closed form after the update, to skip near-ties (float32 rounding)
        after = jbandits.policies.blocks.arms.update(stats, arm, reward)
        idx = np.sort(np.asarray(klucb_index(after, n + 1, kl="gauss")))
        if idx[-1] - idx[-2] < 1e-4:
            continue
        state = IndexState(stats, jnp.ones(k, bool), n, jnp.asarray(arm, jnp.int32))
        a = kl_step(state, jax.random.key(0), reward).arm
        b = ucb_step(state, jax.random.key(0), reward).arm
        assert int(a) == int(b)
        compared += 1
    assert compared >= 150


def test_bernoulli_index_vs_brentq_float32():
    rng = np.random.default_rng(2)
    stats = random_stats(rng, 200, bernoulli=True)
    n = 5_000
    got = np.asarray(klucb_index(stats, n, kl="bernoulli"), np.float64)
    mu = np.asarray(stats.sums, np.float64) / np.asarray(stats.counts, np.float64)
    d = math.log(n) / np.asarray(stats.counts, np.float64)
    for g, m, dd in zip(got, mu, d, strict=True):
        top = 1.0 - 1e-15
        ref = (
            1.0
            if m >= 1 or _kl(m, top) <= dd
            else brentq(lambda q: _kl(m, q) - dd, m, top, xtol=1e-15)
        )
        assert abs(g - ref) <= 1e-6


def test_exploration_level_and_c_guard():
    counts = jnp.array([1.0, 4.0])
    # n = 2 <= e: ln ln n < 0 is floored, level = ln 2 whatever c
    np.testing.assert_allclose(
        np.asarray(exploration_level(2, counts, 3.0)),
        math.log(2) / np.array([1.0, 4.0]),
        rtol=1e-6,
    )
    level = math.log(100) + 3.0 * math.log(math.log(100))
    np.testing.assert_allclose(
        np.asarray(exploration_level(100, counts, 3.0)),
        level / np.array([1.0, 4.0]),
        rtol=1e-6,
    )


def test_forced_pulls_are_the_real_arms_in_order():
    mask = np.array([False, True, True, False, True])
    table = np.zeros((5, 20))
    for kl in ("bernoulli", "gauss"):
        arms = replay_arms(klucb(5, kl=kl), table, mask, budget=12)
        np.testing.assert_array_equal(arms[:3], [1, 2, 4])
        assert np.all(mask[arms])


def test_means_of_one_tie_exactly_and_random_ties_are_uniform():
    # arms 0 and 1 have mean 1 with different counts: KL-UCB index exactly 1 for both
    stats = jbandits.policies.blocks.arms.ArmStats(
        jnp.array([2.0, 7.0, 3.0]), jnp.array([2.0, 7.0, 1.0]), jnp.zeros(3)
    )
    index = np.asarray(klucb_index(stats, 12))
    assert index[0] == index[1] == 1.0 and index[2] < 1.0
    policy = klucb(3)
    state = IndexState(
        stats, jnp.ones(3, bool), jnp.asarray(11, jnp.int32), jnp.asarray(2, jnp.int32)
    )
    keys = jax.random.split(jax.random.key(7), 4_000)
    arms = np.asarray(jax.jit(jax.vmap(lambda k: policy.step(state, k, 0.0).arm))(keys))
    assert set(np.unique(arms)) == {0, 1}
    assert_binomial(int((arms == 0).sum()), arms.size, 0.5)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_arms": 1}, "num_arms"),
        ({"num_arms": 3, "kl": "poisson"}, "kl"),
        ({"num_arms": 3, "c": -0.5}, "c"),
        ({"num_arms": 3, "sigma2": 0.0}, "sigma2"),
        ({"num_arms": 3, "tie_break": "last"}, "tie_break"),
    ],
)
def test_validation_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        klucb(**kwargs)


def test_registered_and_setting():
    assert jbandits.make("klucb", num_arms=3, kl="gauss").setting == "regret"
