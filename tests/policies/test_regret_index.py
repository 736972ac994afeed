"""Properties shared by the regret index policies (UCB1, UCB-V, MOSS, OCUCB) and the
round-based ones: forced initial pulls (spec §1.4, §8 item 8), tie-breaking (§1.5)."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import rollout
from harness import slow_where

from jbandits.policies import regret

FACTORIES = {
    "ucb1": lambda k, **kw: regret.ucb1(k, **kw),
    "ucbv": lambda k, **kw: regret.ucbv(k, **kw),
    "moss": lambda k, **kw: regret.moss(k, horizon=200, **kw),
    "moss_anytime": lambda k, **kw: regret.moss(k, anytime=True, **kw),
    "ocucb": lambda k, **kw: regret.ocucb(k, horizon=200, **kw),
    "eucbv": lambda k, **kw: regret.eucbv(k, horizon=200, **kw),
    "ucb_improved": lambda k, **kw: regret.ucb_improved(k, horizon=200, **kw),
}


@pytest.mark.parametrize("name", sorted(FACTORIES))
@pytest.mark.parametrize("tie_break", ["random", "first"])
def test_first_pulls_are_the_real_arms_in_order(name, tie_break):
    mask = np.array([False, True, True, False, True, False, True])
    table = np.random.default_rng(1).random((7, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        policy = FACTORIES[name](7, tie_break=tie_break)
    arms, _, final = rollout(policy, table, 40, mask, key=jax.random.key(9))
    assert arms[:4].tolist() == [1, 2, 4, 6]
    assert mask[arms].all()
    assert policy.setting == "regret"
    out = int(policy.output(final))
    assert mask[out] and final.stats.counts[out] > 0


@pytest.mark.parametrize("name", ["ucb1", "ucbv", "moss", "moss_anytime", "ocucb"])
def test_random_ties_are_uniform_over_real_arms(name):
    """Identical rewards: after the forced pulls every real arm ties (binomial test)."""
    mask = jnp.array([True, False, True, True, False, True])
    policy = FACTORIES[name](6)
    state = policy.init(jax.random.key(0), mask)
    for _ in range(4):
        state = policy.step(state, jax.random.key(0), 0.5)
    keys = jax.random.split(jax.random.key(3), 4000)
    nxt = np.asarray(jax.vmap(lambda k: policy.step(state, k, 0.5).arm)(keys))
    # the 5th pull (a tie-break among the four real arms) gives its arm 2 pulls;
    # the other three tie
    rest = {0, 2, 3, 5} - {int(state.arm)}
    assert len(rest) == 3 and set(nxt.tolist()) == rest
    se = np.sqrt((1 / 3) * (2 / 3) / 4000)
    for arm in rest:
        assert abs((nxt == arm).mean() - 1 / 3) <= 4.5 * se
    first = FACTORIES[name](6, tie_break="first")
    state = first.init(jax.random.key(0), mask)
    for _ in range(5):
        state = first.step(state, jax.random.key(0), 0.5)
    assert int(state.arm) == 2


@pytest.mark.parametrize("name", ["ucb1", "moss", "ocucb"])
def test_zero_alpha_is_greedy(name):
    table = np.array([[0.2] * 30, [0.9] * 30, [0.5] * 30])
    arms, _, _ = rollout(FACTORIES[name](3, alpha=0.0, tie_break="first"), table, 30)
    assert arms[:3].tolist() == [0, 1, 2] and (arms[3:] == 1).all()


# EUCBV's eager run (9 s on 2 cores) runs in CI's slow step
@pytest.mark.parametrize("name", slow_where(sorted(FACTORIES), {"eucbv"}))
def test_jit_matches_eager(name):
    from jbandits.sim.replication import split_key, step_key

    table = np.random.default_rng(2).random((4, 12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        policy = FACTORIES[name](4)
    pulled, _, _ = rollout(policy, table, 12)
    key_init, key_steps, _, _ = split_key(jax.random.key(0))
    eager, counts = [], [0] * 4
    with jax.disable_jit():
        state = policy.init(key_init, jnp.ones(4, bool))
        for t in range(12):
            arm = int(state.arm)
            eager.append(arm)
            state = policy.step(state, step_key(key_steps, t), table[arm, counts[arm]])
            counts[arm] += 1
    assert eager == pulled.tolist()
