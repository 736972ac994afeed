"""Bernoulli arms: reward 1 with probability ``means[i]``, else 0."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits._validate import is_concrete
from jbandits.envs import _common
from jbandits.types import Array, ArrayLike, Bandit, Key


class BernoulliParams(NamedTuple):
    means: Array  # [K] (or [N, K]) in [0, 1]
    arm_mask: Array  # [K] bool: False marks a padded, non-existent arm


def _sample(params: BernoulliParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    u = jax.random.uniform(_common.stack_key(key, arm, pull_index))
    return (u < params.means[arm]).astype(params.means.dtype)


def _check(params: BernoulliParams, budget) -> None:
    _common.check_budget(budget)


BERNOULLI = Bandit(
    sample=_sample,
    means=lambda p: p.means,
    stds=lambda p: jnp.sqrt(p.means * (1.0 - p.means)),
    check=_check,
    name="bernoulli",
)


def bernoulli(means, *, arm_mask=None) -> tuple[Bandit, BernoulliParams]:
    """Bernoulli bandit with the given means (``[K]`` or a batch ``[N, K]``).

    Raises:
      ValueError: if ``means`` is not finite, outside [0, 1], has fewer than 2 arms, or
        ``arm_mask`` does not match.
    """
    means = _common.as_float_array("means", means)
    _common.check_num_arms("means", means)
    if is_concrete(means) and bool(jnp.any((means < 0.0) | (means > 1.0))):
        raise ValueError(f"means must lie in [0, 1] for Bernoulli arms, got {means}")
    mask = _common.make_mask(arm_mask, means.shape)
    return BERNOULLI, BernoulliParams(means=means, arm_mask=mask)
