"""DMED unit tests (spec §2.11, §8 items 8, 10)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _bayes_util import random_stats, replay_arms
from harness import arm_stats

import jbandits
from jbandits.policies.regret import dmed
from jbandits.policies.regret.dmed import dmed_list

_stats = arm_stats  # (counts, sums), float32


def test_two_arm_hand_check_after_forced_pulls():
    # rewards 1 and 0: mu = (1, 0), n = 2. Bernoulli: kl(0, 1) = inf -> list {0}.
    # Gauss (sigma2 = 1): 1 * (1 - 0)^2 / 2 = .5 < ln(2 / 1) = .693 -> list {0, 1}.
    stats, mask = _stats([1, 1], [1, 0]), jnp.ones(2, bool)
    assert np.asarray(dmed_list(stats, mask, 2)).tolist() == [True, False]
    assert np.asarray(dmed_list(stats, mask, 2, kl="gauss")).tolist() == [True, True]
    arms = replay_arms(dmed(2), np.array([[1.0] * 6, [0.0] * 6]), np.ones(2, bool), 6)
    np.testing.assert_array_equal(arms, [0, 1, 0, 0, 0, 0])


def test_genuine_and_gc_right_hand_sides_differ():
    # mu = (.5, 0), counts (6, 3), n = 9: arm 1 has 3 kl(0, .5) = 3 ln 2 = 2.08,
    # above ln(9/3) = 1.10 (genuine: out) and below ln 9 = 2.20 (gc: in)
    stats, mask = _stats([6, 3], [3, 0]), jnp.ones(2, bool)
    assert np.asarray(dmed_list(stats, mask, 9, variant="genuine")).tolist() == [
        True,
        False,
    ]
    assert np.asarray(dmed_list(stats, mask, 9, variant="gc")).tolist() == [True, True]


@pytest.mark.parametrize("kl", ["bernoulli", "gauss"])
@pytest.mark.parametrize("variant", ["genuine", "gc"])
def test_rebuilt_list_is_never_empty_and_holds_the_best_arm(kl, variant):
    """spec §8 item 10, on random states with padding."""
    rng = np.random.default_rng(0)
    for _ in range(100):
        stats = random_stats(rng, 6, bernoulli=(kl == "bernoulli"))
        mask = rng.random(6) < 0.7
        mask[rng.integers(6)] = True
        mask = jnp.asarray(mask)
        n = int(stats.counts.sum())
        listed = np.asarray(dmed_list(stats, mask, n, variant=variant, kl=kl))
        mu = np.asarray(stats.sums) / np.asarray(stats.counts)
        best = int(np.argmax(np.where(np.asarray(mask), mu, -np.inf)))
        assert listed[best] and listed.any()
        assert not np.any(listed & ~np.asarray(mask))


def test_deterministic_forced_pulls_and_padding():
    mask = np.array([True, False, True, True, False, True])
    rng = np.random.default_rng(3)
    table = (rng.random((6, 80)) < 0.5) * 1.0
    a = replay_arms(dmed(6), table, mask, budget=80, seed=0)
    b = replay_arms(dmed(6), table, mask, budget=80, seed=1)
    np.testing.assert_array_equal(a, b)  # the key is unused
    np.testing.assert_array_equal(a[:4], [0, 2, 3, 5])
    assert np.all(mask[a])


def test_list_is_played_in_increasing_index_before_a_rebuild():
    policy = dmed(4)
    mask = jnp.ones(4, bool)
    stats = _stats([5, 5, 5, 5], [3, 3, 1, 3])
    state = policy.init(jax.random.key(0), mask)
    # a state just after the forced pulls with an empty list
    state = state._replace(
        stats=stats, t=jnp.asarray(19, jnp.int32), arm=jnp.asarray(3)
    )
    listed = np.flatnonzero(
        np.asarray(
            dmed_list(jbandits.policies.blocks.arms.update(stats, 3, 1.0), mask, 20)
        )
    )
    seq = []
    for _ in range(len(listed)):
        state = policy.step(state, jax.random.key(0), 1.0)
        seq.append(int(state.arm))
        if len(seq) == 1:
            assert np.asarray(state.pending).sum() == len(listed) - 1
    assert seq == listed.tolist()


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_arms": 1}, "num_arms"),
        ({"num_arms": 3, "variant": "plus"}, "variant"),
        ({"num_arms": 3, "kl": "poisson"}, "kl"),
        ({"num_arms": 3, "sigma2": -1.0}, "sigma2"),
    ],
)
def test_validation_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        dmed(**kwargs)


def test_registered_and_setting():
    assert jbandits.make("dmed", num_arms=3).setting == "regret"
