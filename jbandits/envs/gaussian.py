"""Gaussian arms with given means and standard deviations."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jbandits.core.types import Array, ArrayLike, Bandit, Key
from jbandits.core.validate import instance_values
from jbandits.envs import common as _common


class GaussianParams(NamedTuple):
    means: Array  # [K]
    stds: Array  # [K] >= 0 (standard deviations, not variances)
    arm_mask: Array  # [K] bool


def _sample(params: GaussianParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    z = _common.reward_normal(key, arm, pull_index, params.means.dtype)
    return params.means[arm] + params.stds[arm] * z


def check_stds(stds) -> None:
    """Standard deviations: finite and >= 0 (concrete ones; the builder and the
    entry points, through the family's ``check``)."""
    instance_values("stds", _common.host(stds), low=0.0)


def _check(params: GaussianParams, budget) -> None:
    _common.check_budget(budget)
    instance_values("means", _common.host(params.means))
    check_stds(params.stds)


GAUSSIAN = _common.family("gaussian", GaussianParams, _sample, check=_check)


def gaussian(means, stds, *, arm_mask=None) -> tuple[Bandit, GaussianParams]:
    """Gaussian bandit: arm ``i`` pays ``means[i] + stds[i] * z``, ``z ~ N(0, 1)``.

    Rewards follow the reward-stack model (the ``j``-th reward of arm ``i`` depends
    only on the replication key, i and j), so runs with the same key are paired.

    Args:
      means: arm means, ``[K]`` or a stack of instances ``[N, K]``.
      stds: standard deviations, not variances (pass ``sqrt(var)``): an array of the
        shape of ``means``, or a scalar shared by every arm. Must be >= 0.
      arm_mask: optional boolean array of the shape of ``means``; False marks a
        padded, non-existent arm. Default: all arms real.

    Returns:
      ``(GAUSSIAN, GaussianParams)``: the reward family and the instance pytree.

    Raises:
      ValueError: on non-finite ``means`` or ``stds``, negative ``stds`` (checked when
        concrete), ``stds`` whose shape differs from ``means``, ``means`` not ``[K]``
        or ``[N, K]``, K < 2, or a bad ``arm_mask`` (not boolean, wrong shape, fewer
        than 2 real arms).

    Example::

        bandit, params = jbandits.envs.gaussian([0.1, 0.5, 0.6], stds=[0.1, 0.5, 0.2])
        res = jbandits.simulate(jbandits.make("ucbv", num_arms=3), bandit, params,
                                jax.random.key(0), budget=500, num_reps=100)
    """
    means = _common.as_float_array("means", means)
    if np.ndim(stds) == 0:
        values = _common.host(stds)
        stds = (
            jnp.broadcast_to(jnp.asarray(stds), means.shape)
            if values is None
            else np.broadcast_to(values, means.shape)
        )
    stds = _common.as_float_array("stds", stds)
    _common.check_num_arms("means", means)
    _common.check_shapes("means", means, "stds", stds)
    check_stds(stds)
    mask = _common.make_mask(arm_mask, means.shape)
    return GAUSSIAN, GaussianParams(means=means, stds=stds, arm_mask=mask)
