"""Contract tests run for every registered policy (one trace case per name).

jit == eager, vmap == Python loop, no retracing on a second call, masked (padded) arms
never pulled nor output, same key -> identical results, and state.arm stays in range.

Compilation dominates these tests, so each policy's programs are built once and shared
(:func:`_programs`, one random instance per policy, with padded arms): ``jit(play)``
serves jit == eager and the Python loop of vmap == loop; ``jit(vmap(play))`` serves
vmap == loop, no-retrace, same-key and the masked-arm checks without permutation; a
second ``jit(vmap(play))`` the masked-arm checks with ``permute=True``. The run budget
is an argument of ``play`` (the engine takes it traced), so the eager run can use a scan
of exactly ``budget`` steps (an eager scan executes every step of its static horizon op
by op) and still be compared with the jitted run of the full horizon.
"""

import functools

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES
from harness import slow_where

import jbandits

_FIRST = {}
for _case in CASES:
    _FIRST.setdefault(_case.registry_name, _case)
CONTRACT = list(_FIRST.values())
IDS = [c.registry_name for c in CONTRACT]
_BY_NAME = dict(zip(IDS, CONTRACT, strict=True))


@functools.cache
def _setup(name, seed):
    """(case, instance, play) with ``play(key, budget, horizon, permute)``."""
    case = _BY_NAME[name]
    rng = np.random.default_rng(seed)
    inst = case.sample(rng, case.k_max, case.horizon)
    means = rng.uniform(0.05, 0.95, case.k_max) * inst.arm_mask
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=jnp.asarray(inst.arm_mask))
    policy = case.make_policy(**inst.hp)

    def play(key, budget, horizon=case.horizon, permute=False):
        return jbandits.run(
            policy,
            bandit,
            params,
            key,
            budget=budget,
            horizon=horizon,
            record_arms=True,
            permute=permute,
        )

    return case, inst, play


# XLA:CPU's LLVM optimisation is most of the compile time of these small programs
# and they execute for milliseconds; level 0 halves compilation. It changes no result:
# XLA:CPU compiles without fast-math at every level and conftest.py rules out FMA.
FAST_COMPILE = {"xla_backend_optimization_level": 0}
SEED = 5  # the instance of every policy has padded arms (checked in _programs)
NUM_KEYS = 8
EAGER_STEPS = 32


@functools.cache
def _programs(name, permute):
    """Compiled once per policy: ``(case, inst, play, jitted, batched)``.

    ``batched`` maps ``play`` over ``NUM_KEYS`` keys (budget shared); without
    permutation it may be traced only once.
    """
    case, inst, play = _setup(name, SEED)
    assert not inst.arm_mask.all(), f"{name}: the contract instance has no padding"
    if permute:
        one = functools.partial(play, permute=True)
    else:
        one = chex.assert_max_traces(play, n=1)
    jitted = jax.jit(play, compiler_options=FAST_COMPILE)
    batched = jax.jit(jax.vmap(one, in_axes=(0, None)), compiler_options=FAST_COMPILE)
    return case, inst, play, jitted, batched


@pytest.fixture(scope="module", autouse=True)
def _free_programs():
    yield
    _programs.cache_clear()
    _setup.cache_clear()


def _same(a, b):
    chex.assert_trees_all_close(a, b, rtol=1e-5, atol=1e-5)


# eager execution of the four slowest (10-19 s each on 2 cores) runs in CI's slow
# step; their jitted programs are still checked by the vmap test below
EAGER_SLOW = {"thompson", "bayes_ucb", "ucb_e", "gape"}


@pytest.mark.parametrize("name", slow_where(IDS, EAGER_SLOW))
def test_jit_matches_eager(name):
    case, inst, play, jitted, _ = _programs(name, False)
    key = jax.random.key(0)
    # eager runs op by op: at most EAGER_STEPS pulls (policies built for their
    # budget run it whole), compared with the jitted program run to the same budget
    budget = inst.budget if "budget" in inst.hp else min(inst.budget, EAGER_STEPS)
    with jax.disable_jit():  # the same run, its scan cut to the budget
        eager = play(key, budget, horizon=budget)
    full = jitted(key, budget)
    arms = np.asarray(full.arms)
    np.testing.assert_array_equal(eager.arms, arms[:budget])
    assert (arms[budget:] == -1).all()
    _same(eager.output, full.output)
    np.testing.assert_array_equal(eager.pulls, full.pulls)


@pytest.mark.parametrize("name", IDS)
def test_vmap_matches_loop_and_no_retrace(name):
    chex.clear_trace_counter()
    case, inst, play, jitted, batched = _programs(name, False)
    keys = jax.random.split(jax.random.key(1), NUM_KEYS)
    first = batched(keys, inst.budget)
    second = batched(jax.random.split(jax.random.key(2), NUM_KEYS), inst.budget)
    assert second.arms.shape == first.arms.shape
    looped = [jitted(k, inst.budget) for k in keys]
    for i, res in enumerate(looped):
        np.testing.assert_array_equal(first.arms[i], res.arms)
        _same(first.output[i], res.output)
    # same key -> identical results
    again = batched(keys, inst.budget)
    np.testing.assert_array_equal(again.arms, first.arms)


# permute=True compiles a second program per policy: slow set (the default suite's
# tests/test_properties.py checks masked arms under random relabelling too)
@pytest.mark.parametrize("permute", [False, pytest.param(True, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", IDS)
def test_masked_arms_never_pulled_nor_output(name, permute):
    chex.clear_trace_counter()  # (play's trace counter is shared by every policy)
    keys = jax.random.split(jax.random.key(4), NUM_KEYS)
    case, inst, _, _, batched = _programs(name, permute)
    padded = np.flatnonzero(~inst.arm_mask)
    res = batched(keys, inst.budget)
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
