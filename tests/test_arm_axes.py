"""Reward families declare their arm axes (jbandits.envs.common.family(arm_axes=)):
pad_arms pads every leaf on its declared axis (the last one by default, a replay
table on axis 0), so a family with a ``[K, n]`` data leaf runs in sweep_grid over
several K."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.envs import common


class DataParams(NamedTuple):
    data: jax.Array  # [K, n]: observations per arm
    scale: jax.Array  # []: not per arm
    means: jax.Array  # [K]
    arm_mask: jax.Array  # [K]


def _sample(params, key, arm, pull_index):
    u = common.reward_uniform(key, arm, pull_index, params.data.dtype)
    n = params.data.shape[-1]
    return params.data[arm, jnp.minimum((u * n).astype(jnp.int32), n - 1)]


DATA = common.family(
    "data_test", DataParams, _sample, stds=lambda p: jnp.zeros_like(p.means),
    arm_axes={"data": 0, "scale": None},
)  # fmt: skip


def _instance(k: int, n: int = 6, seed: int = 0) -> DataParams:
    rng = np.random.default_rng(seed)
    data = rng.random((k, n)).astype(np.float32)
    return DataParams(
        jnp.asarray(data), jnp.float32(1.0), jnp.asarray(data.mean(1)),
        jnp.ones(k, bool),
    )  # fmt: skip


def test_a_data_leaf_is_padded_on_its_declared_axis():
    padded = jbandits.envs.pad_arms(_instance(3), 5)
    assert padded.data.shape == (5, 6) and padded.means.shape == (5,)
    np.testing.assert_array_equal(np.asarray(padded.data)[3:], 0.0)
    np.testing.assert_array_equal(np.asarray(padded.data)[:3], _instance(3).data)
    assert float(padded.scale) == 1.0  # declared None: not per arm, kept
    assert np.asarray(padded.arm_mask).tolist() == [True] * 3 + [False] * 2
    # a stack [N, K, n]: the declared axis counts from the instance's first axis
    stack = jbandits.envs.stack_instances([_instance(3), _instance(3, seed=1)])
    stack = stack._replace(scale=jnp.ones(2))
    wide = jbandits.envs.pad_arms(stack, 4)
    assert wide.data.shape == (2, 4, 6) and wide.arm_mask.shape == (2, 4)


def test_the_replay_table_declares_its_axis():
    table = np.arange(12, dtype=np.float32).reshape(3, 4) / 12
    _, params = jbandits.envs.replay(table)
    padded = jbandits.envs.pad_arms(params, 5)
    assert padded.table.shape == (5, 4)
    np.testing.assert_array_equal(np.asarray(padded.table)[:3], table)
    np.testing.assert_array_equal(np.asarray(padded.table)[3:], 0.0)
    assert common.arm_axes_of(type(params)) == {"table": 0}


def test_an_undeclared_data_leaf_is_refused_with_the_declaration_to_write():
    class Undeclared(NamedTuple):
        data: jax.Array
        means: jax.Array
        arm_mask: jax.Array

    inst = _instance(3)
    params = Undeclared(inst.data, inst.means, inst.arm_mask)
    with pytest.raises(ValueError, match=r"arm_axes=\{'data': axis\}"):
        jbandits.envs.pad_arms(params, 4)
    with pytest.raises(ValueError, match="cannot pad 3 arms to 2"):
        jbandits.envs.pad_arms(inst, 2)


def test_bad_declarations_are_refused():
    with pytest.raises(ValueError, match="not a field"):
        common.family("bad", DataParams, _sample, arm_axes={"table": 0})
    with pytest.raises(ValueError, match="must be an int axis or None"):
        common.family("bad", DataParams, _sample, arm_axes={"data": "0"})


def test_a_data_family_runs_in_sweep_grid_over_k_3_and_4():
    instances = [_instance(3), _instance(4, seed=2)]
    grid = jbandits.sweep_grid(
        [("ucb1", {"alpha": [2.0]})], DATA, instances, jax.random.key(0),
        budgets=[40], num_reps=4, progress=False, check_model=False,
    )  # fmt: skip
    table = grid.summary()
    assert sorted(table["K"].tolist()) == [3, 4]
    assert np.isfinite(table["regret"].to_numpy()).all()
