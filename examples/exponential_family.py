"""A user's own reward family in one file: exponential rewards with means
``params.means``, drawn from jbandits' reward stack (the j-th reward of arm i is a
fixed function of the replication key, i and j: common random numbers and exact
replay across policies).

    bandit, params = exponential([0.5, 1.0, 2.0])
    jbandits.simulate(policy, bandit, params, key, budget=..., num_reps=...)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.envs import family, reward_uniform


class ExponentialParams(NamedTuple):
    means: jax.Array  # [K] > 0
    arm_mask: jax.Array  # [K] bool


def _sample(params, key, arm, pull_index):
    u = reward_uniform(key, arm, pull_index, params.means.dtype)
    return -params.means[arm] * jnp.log1p(-u)


EXPONENTIAL = family("exponential", ExponentialParams, _sample, stds=lambda p: p.means)


def exponential(means):
    means = jnp.asarray(means, jnp.result_type(float))
    if not bool(jnp.all(means > 0)):
        raise ValueError(f"exponential means must be > 0, got {means}")
    return EXPONENTIAL, ExponentialParams(means, jnp.ones(means.shape, bool))
