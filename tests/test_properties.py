"""Property tests over every registered policy (hypothesis).

For random instances (K, padding positions, budget and hyper-parameters drawn by the
policy's trace case), Bernoulli or Gaussian rewards (any offset and scale), no policy
crashes, pulls a masked arm, outputs a masked arm, exceeds its budget or outputs NaN.

One jitted, vmapped runner per policy (the replay bandit makes the reward family a
traced input), so each policy compiles once and hypothesis only varies traced inputs.
The two Beta-posterior policies compile slowly and are marked ``slow``.
"""

from __future__ import annotations

import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from cases import CASES
from harness import replay_run, slow_where
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

_FIRST = {}
for _case in CASES:
    _FIRST.setdefault(_case.registry_name, _case)
# Beta-posterior sampling / quantiles compile for ~5 s each: run with the slow tier
HEAVY = {"bayes_ucb", "thompson"}
NAMES = slow_where(sorted(_FIRST), HEAVY)
BATCH = 3  # instances per example (one vmapped call)


@functools.cache
def _runner(name):
    case = _FIRST[name]

    def one(hp, table, mask, budget, key):
        # random relabelling too (arms come back in bandit order)
        res = replay_run(case, hp, table, mask, budget, key, permute=True)
        return res.arms, res.output, res.pulls, res.num_pulls

    return jax.jit(jax.vmap(one))


def _table(rng, mask, columns, family, offset, scale):
    k_max = mask.size
    means = rng.uniform(0.0, 1.0, k_max)
    if family == "bernoulli":
        table = (rng.random((k_max, columns)) < means[:, None]).astype(np.float32)
    else:
        noise = rng.standard_normal((k_max, columns))
        table = (offset + means[:, None] + scale * noise).astype(np.float32)
    return np.where(mask[:, None], table, 0.0).astype(np.float32)


def _check(case, masks, budgets, arms, out, pulls, num_pulls):
    for b in range(BATCH):
        padded = np.flatnonzero(~masks[b])
        assert arms[b].min() >= -1 and arms[b].max() < case.k_max
        assert not np.isin(arms[b], padded).any(), "a masked arm was pulled"
        assert (pulls[b][padded] == 0).all()
        assert num_pulls[b] <= budgets[b]
        if np.issubdtype(out.dtype, np.floating):
            assert not np.isnan(out[b]).any(), "NaN in the output"
        if out[b].ndim == 0:  # one arm
            assert -1 <= out[b] < case.k_max and out[b] not in padded
        else:  # labels / top-m mask
            assert not out[b][padded].any(), "a masked arm was output"


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    family=st.sampled_from(["bernoulli", "gaussian"]),
    offset=st.sampled_from([0.0, -2.0, 3.0, 1e3]),
    scale=st.floats(0.01, 5.0),
)
def test_policy_never_crashes_nor_touches_masked_arms(
    name, seed, family, offset, scale
):
    case = _FIRST[name]
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        insts = [case.sample(rng, case.k_max, case.horizon) for _ in range(BATCH)]
    masks = np.stack([i.arm_mask for i in insts])
    tables = np.stack(
        [_table(rng, m, case.horizon, family, offset, scale) for m in masks]
    )
    budgets = np.array([i.budget for i in insts], np.int32)
    hps = {k: np.stack([np.asarray(i.hp[k]) for i in insts]) for k in insts[0].hp}
    keys = jax.random.split(jax.random.key(seed % 2**31), BATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _runner(name)(hps, jnp.asarray(tables), jnp.asarray(masks), budgets, keys)
    _check(case, masks, budgets, *map(np.asarray, res))


@pytest.mark.parametrize("name", NAMES)
@settings(
    max_examples=5,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, 2**32 - 1),
    which=st.integers(0, 2**16),
    value=st.sampled_from([float("nan"), -1.0, float("inf"), -float("inf"), 0.0]),
)
def test_invalid_traced_hyper_parameter_never_touches_masked_arms(
    name, seed, which, value
):
    """A NaN / negative / infinite traced hyper-parameter may give a useless run, but
    never a masked arm (it used to: APT with epsilon = NaN pulled padded arm 0)."""
    case = _FIRST[name]
    rng = np.random.default_rng(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        insts = [case.sample(rng, case.k_max, case.horizon) for _ in range(BATCH)]
    hps = {k: np.stack([np.asarray(i.hp[k]) for i in insts]) for k in insts[0].hp}
    floats = sorted(k for k, v in hps.items() if np.issubdtype(v.dtype, np.floating))
    if floats:
        bad = floats[which % len(floats)]
        hps[bad] = np.full_like(hps[bad], value)
    masks = np.stack([i.arm_mask for i in insts])
    masks[:, 0] = False  # arm 0 padded: the old fallback of the selection helpers
    masks[:, 1] = True
    tables = np.stack(
        [_table(rng, m, case.horizon, "bernoulli", 0.0, 1.0) for m in masks]
    )
    budgets = np.array([i.budget for i in insts], np.int32)
    keys = jax.random.split(jax.random.key(seed % 2**31), BATCH)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = _runner(name)(hps, jnp.asarray(tables), jnp.asarray(masks), budgets, keys)
    _check(case, masks, budgets, *map(np.asarray, res))
