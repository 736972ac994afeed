"""Thompson sampling unit tests (spec §2.8, §8 item 9)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _bayes_util import assert_binomial, first_arms, replay_arms, replay_run
from harness import arm_stats

import jbandits
from jbandits.policies.regret import thompson
from jbandits.policies.regret.thompson import beta_samples, binarise, gauss_samples

MASK = np.array([True, False, True, True, False, True])  # 4 real arms, padding inside


@pytest.mark.parametrize("posterior", ["beta", "gauss"])
def test_first_pull_is_uniform_over_real_arms(posterior):
    arms = first_arms(thompson(6, posterior=posterior), MASK)
    assert np.all(MASK[arms]), "a padded arm was chosen"
    for arm in np.flatnonzero(MASK):
        assert_binomial(int((arms == arm).sum()), arms.size, 0.25)


def test_binarisation_is_identity_on_binary_rewards_and_bernoulli_otherwise():
    keys = jax.random.split(jax.random.key(3), 20_000)
    for r in (0.0, 1.0):
        assert np.all(np.asarray(jax.vmap(lambda k, r=r: binarise(k, r))(keys)) == r)
    hits = np.asarray(jax.vmap(lambda k: binarise(k, 0.3))(keys))
    assert set(np.unique(hits)) <= {0.0, 1.0}
    assert_binomial(int(hits.sum()), hits.size, 0.3)


def test_beta_step_counts_successes_and_failures():
    policy = thompson(3, posterior="beta")
    state = policy.init(jax.random.key(0), jnp.ones(3, bool))
    arm = int(state.arm)
    step = jax.jit(policy.step)
    state = step(state, jax.random.key(1), 1.0)
    assert float(state.succ[arm]) == 1.0 and float(state.stats.counts[arm]) == 1.0
    arm2 = int(state.arm)
    state = step(state, jax.random.key(2), 0.0)
    assert float(state.succ[arm2]) == (1.0 if arm2 == arm else 0.0)
    assert float(state.stats.counts.sum()) == 2.0
    assert float(state.succ.sum()) == 1.0


_stats = arm_stats  # (counts, sums), float32


def _moments_ok(draws, mean, var, z=4.0):
    n = draws.shape[0]
    np.testing.assert_array_less(np.abs(draws.mean(0) - mean), z * np.sqrt(var / n))


@pytest.mark.slow  # statistical: 20 000 posterior draws (~12 s)
def test_beta_posterior_samples_have_the_posterior_mean():
    stats = _stats([0.0, 4.0, 10.0], [0.0, 3.0, 1.0])
    succ = jnp.array([0.0, 3.0, 1.0])
    keys = jax.random.split(jax.random.key(4), 20_000)
    draws = np.asarray(jax.vmap(lambda k: beta_samples(k, stats, succ))(keys))
    a, b = 1.0 + np.array([0, 3, 1]), 1.0 + np.array([0, 1, 9])
    _moments_ok(draws, a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1)))


@pytest.mark.parametrize("prior_var", [1.0, 2.5])
def test_gauss_posterior_samples_have_the_agrawal_goyal_moments(prior_var):
    stats = _stats([0.0, 3.0, 20.0], [0.0, 1.5, -4.0])
    keys = jax.random.split(jax.random.key(5), 20_000)
    draws = np.asarray(jax.vmap(lambda k: gauss_samples(k, stats, prior_var))(keys))
    precision = 1.0 / prior_var + np.array([0.0, 3.0, 20.0])
    _moments_ok(draws, np.array([0.0, 1.5, -4.0]) / precision, 1.0 / precision)
    np.testing.assert_allclose(draws.var(0), 1.0 / precision, rtol=0.05)  # 4 SE of s^2


def test_prior_var_one_is_n_of_s_over_k_plus_one():
    stats = _stats([3.0], [1.5])
    z = jax.random.normal(jax.random.key(6), (1,))
    theta = gauss_samples(jax.random.key(6), stats, 1.0)
    np.testing.assert_allclose(
        np.asarray(theta), 1.5 / 4 + np.asarray(z) / 2, rtol=1e-6
    )


@pytest.mark.parametrize("posterior", ["beta", "gauss"])
def test_padded_arms_never_pulled_and_output_is_empirical_best(posterior):
    rng = np.random.default_rng(0)
    table = (
        rng.random((6, 80)) < np.array([0.2, 0.5, 0.3, 0.9, 0.5, 0.1])[:, None]
    ) * 1.0
    table[~MASK] = 0.0
    policy = thompson(6, posterior=posterior)
    res = replay_run(policy, table, MASK, budget=80)
    arms = np.asarray(res.arms)
    assert np.all(MASK[arms])
    counts = np.bincount(arms, minlength=6)
    means = np.array(
        [table[i, : counts[i]].mean() if counts[i] else -np.inf for i in range(6)]
    )
    assert int(res.output) == int(np.argmax(np.where(MASK, means, -np.inf)))


def test_tie_rule_does_not_change_continuous_draws():
    # exact ties have probability 0: "first" and "random" pull the same arms
    rng = np.random.default_rng(1)
    table = rng.normal(0.5, 1.0, size=(5, 60))
    mask = np.ones(5, bool)
    a = replay_arms(thompson(5, posterior="gauss", tie_break="first"), table, mask, 60)
    b = replay_arms(thompson(5, posterior="gauss", tie_break="random"), table, mask, 60)
    np.testing.assert_array_equal(a, b)


def test_traced_prior_var_under_vmap():
    def first(prior_var):
        policy = thompson(4, posterior="gauss", prior_var=prior_var)
        state = policy.init(jax.random.key(0), jnp.ones(4, bool))
        return policy.step(state, jax.random.key(1), 0.7).arm

    arms = jax.jit(jax.vmap(first))(jnp.array([0.5, 1.0, 4.0]))
    assert arms.shape == (3,)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_arms": 1}, "num_arms"),
        ({"num_arms": 3, "posterior": "normal"}, "posterior"),
        ({"num_arms": 3, "prior_var": 0.0}, "prior_var"),
        ({"num_arms": 3, "prior_var": float("nan")}, "prior_var"),
        ({"num_arms": 3, "tie_break": "last"}, "tie_break"),
    ],
)
def test_validation_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        thompson(**kwargs)


def test_registered_and_setting():
    policy = jbandits.make("thompson", num_arms=3)
    assert policy.setting == "regret"
