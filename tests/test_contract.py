"""Contract tests run for every registered policy (one trace case per name).

jit == eager, vmap == Python loop, no retracing on a second call, masked (padded) arms
never pulled nor output, same key -> identical results, and state.arm stays in range.
"""

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES

import jbandits

_FIRST = {}
for _case in CASES:
    _FIRST.setdefault(_case.registry_name, _case)
CONTRACT = list(_FIRST.values())
IDS = [c.registry_name for c in CONTRACT]


def _setup(case, seed=3):
    rng = np.random.default_rng(seed)
    inst = case.sample(rng, case.k_max, case.horizon)
    means = rng.uniform(0.05, 0.95, case.k_max) * inst.arm_mask
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=jnp.asarray(inst.arm_mask))
    policy = case.make_policy(**inst.hp)

    def play(key, permute=False):
        return jbandits.run(
            policy,
            bandit,
            params,
            key,
            budget=inst.budget,
            horizon=case.horizon,
            record_arms=True,
            permute=permute,
        )

    return inst, play


def _same(a, b):
    chex.assert_trees_all_close(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", CONTRACT, ids=IDS)
def test_jit_matches_eager(case):
    inst, play = _setup(case)
    key = jax.random.key(0)
    with jax.disable_jit():
        eager = play(key)
    jitted = jax.jit(play)(key)
    np.testing.assert_array_equal(eager.arms, jitted.arms)
    _same(eager.output, jitted.output)


@pytest.mark.parametrize("case", CONTRACT, ids=IDS)
def test_vmap_matches_loop_and_no_retrace(case):
    chex.clear_trace_counter()
    inst, play = _setup(case)
    keys = jax.random.split(jax.random.key(1), 3)
    batched = jax.jit(jax.vmap(chex.assert_max_traces(play, n=1)))
    first = batched(keys)
    second = batched(jax.random.split(jax.random.key(2), 3))  # no retrace
    assert second.arms.shape == first.arms.shape
    looped = [jax.jit(play)(k) for k in keys]
    for i, res in enumerate(looped):
        np.testing.assert_array_equal(first.arms[i], res.arms)
        _same(first.output[i], res.output)
    # same key -> identical results
    again = batched(keys)
    np.testing.assert_array_equal(again.arms, first.arms)


@pytest.mark.parametrize("case", CONTRACT, ids=IDS)
def test_masked_arms_never_pulled_nor_output(case):
    inst, play = _setup(case, seed=5)
    padded = np.flatnonzero(~inst.arm_mask)
    keys = jax.random.split(jax.random.key(4), 8)
    for permute in (False, True):
        res = jax.jit(jax.vmap(lambda k, p=permute: play(k, p)))(keys)
        arms = np.asarray(res.arms)
        assert not np.isin(arms, padded).any(), "a padded arm was pulled"
        assert arms.max() < case.k_max and arms.min() >= -1
        assert (np.asarray(res.pulls)[:, padded] == 0).all()
        out = np.asarray(res.output)
        if out.ndim == 1:  # one arm per replication
            assert not np.isin(out, padded).any(), "a padded arm was output"
        else:
            assert not out[:, padded].any(), "a padded arm was output"
        # pulls and steps agree with the budget
        assert (np.asarray(res.num_pulls) <= inst.budget).all()


def test_contract_covers_every_registered_policy():
    assert set(IDS) == set(jbandits.names())
