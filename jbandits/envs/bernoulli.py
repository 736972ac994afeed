"""Bernoulli arms: reward 1 with probability ``means[i]``, else 0."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core.types import Array, ArrayLike, Bandit, Key
from jbandits.core.validate import instance_values
from jbandits.envs import common as _common


class BernoulliParams(NamedTuple):
    means: Array  # [K] (or [N, K]) in [0, 1]
    arm_mask: Array  # [K] bool: False marks a padded, non-existent arm


def _sample(params: BernoulliParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    u = _common.reward_uniform(key, arm, pull_index, params.means.dtype)
    return (u < params.means[arm]).astype(params.means.dtype)


def _stds(params: BernoulliParams):
    return jnp.sqrt(params.means * (1.0 - params.means))


def check_means(means) -> None:
    """Bernoulli means are probabilities: finite, in [0, 1] (concrete ones; the
    builder and the entry points, through the family's ``check``)."""
    instance_values("means", _common.host(means), low=0.0, high=1.0,
                    why=" for Bernoulli arms")  # fmt: skip


def _check(params: BernoulliParams, budget) -> None:
    _common.check_budget(budget)
    check_means(params.means)


BERNOULLI = _common.family(
    "bernoulli", BernoulliParams, _sample, stds=_stds, check=_check
)


def bernoulli(means, *, arm_mask=None) -> tuple[Bandit, BernoulliParams]:
    """Bernoulli bandit: arm ``i`` pays 1 with probability ``means[i]``, else 0.

    Rewards follow the reward-stack model: the ``j``-th reward of arm ``i`` is a
    function of (replication key, i, j) only, so every policy run with the same key
    sees the same rewards (paired comparisons).

    Args:
      means: success probabilities in [0, 1], ``[K]`` for one instance or ``[N, K]``
        for a stack of ``N`` instances (what :func:`jbandits.simulate` runs as N
        instances). May be traced (then the range check is skipped).
      arm_mask: optional boolean array of the same shape as ``means``; False marks a
        padded, non-existent arm that policies never pull nor output. Default: all
        arms real.

    Returns:
      ``(BERNOULLI, BernoulliParams)``: the reward family and the instance pytree.

    Raises:
      ValueError: if ``means`` is not finite, outside [0, 1], not ``[K]`` or
        ``[N, K]``, or has fewer than 2 arms; or if ``arm_mask`` is not boolean, does
        not match the shape of ``means`` or leaves fewer than 2 real arms.

    Example::

        bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
        res = jbandits.simulate(jbandits.make("ucb1", num_arms=4), bandit, params,
                                jax.random.key(0), budget=1000, num_reps=100)
    """
    means = _common.as_float_array("means", means)
    _common.check_num_arms("means", means)
    check_means(means)
    mask = _common.make_mask(arm_mask, means.shape)
    return BERNOULLI, BernoulliParams(means=means, arm_mask=mask)
