"""Gaussian arms with given means and standard deviations."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits._validate import is_concrete
from jbandits.envs import _common
from jbandits.types import Array, ArrayLike, Bandit, Key


class GaussianParams(NamedTuple):
    means: Array  # [K]
    stds: Array  # [K] >= 0 (standard deviations, not variances)
    arm_mask: Array  # [K] bool


def _sample(params: GaussianParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    z = jax.random.normal(
        _common.stack_key(key, arm, pull_index), dtype=params.means.dtype
    )
    return params.means[arm] + params.stds[arm] * z


def _check(params: GaussianParams, budget) -> None:
    _common.check_budget(budget)


GAUSSIAN = Bandit(
    sample=_sample,
    means=lambda p: p.means,
    stds=lambda p: p.stds,
    check=_check,
    name="gaussian",
)


def gaussian(means, stds, *, arm_mask=None) -> tuple[Bandit, GaussianParams]:
    """Gaussian bandit. ``stds`` are standard deviations (pass ``sqrt(var)``).

    Raises:
      ValueError: on non-finite values, negative ``stds``, mismatched shapes, K < 2.
    """
    means = _common.as_float_array("means", means)
    if np.ndim(stds) == 0:
        stds = jnp.broadcast_to(jnp.asarray(stds), means.shape)
    stds = _common.as_float_array("stds", stds)
    _common.check_num_arms("means", means)
    _common.check_shapes("means", means, "stds", stds)
    if is_concrete(stds) and bool(jnp.any(stds < 0.0)):
        raise ValueError(f"stds must be >= 0, got {stds}")
    mask = _common.make_mask(arm_mask, means.shape)
    return GAUSSIAN, GaussianParams(means=means, stds=stds, arm_mask=mask)
