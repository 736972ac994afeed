"""Uniform round-robin allocation ("Uniform" of Tao et al., NeurIPS 2019; "Unif" of
Lalitha et al., UAI 2023)."""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms


class UniformState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm


@registry.policy("uniform")
def uniform(num_arms: int, *, threshold: ArrayLike | None = None) -> Policy:
    """Round robin over the real arms in index order: pull ``t`` goes to arm ``t mod K``.

    Each arm gets floor(T/K) or ceil(T/K) pulls (the first ``T mod K`` arms one more).

    Args:
      num_arms: static number of arms K (including padded arms).
      threshold: tau. Given -> thresholding output (labels ``1{mean >= tau}``); None ->
        best-arm identification output (argmax of the empirical means, first on ties).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.finite("threshold", threshold)
    setting = "identification" if threshold is None else "thresholding"

    def init_fn(key, arm_mask):
        del key
        return UniformState(
            arms.init_stats(num_arms),
            arm_mask,
            jnp.zeros((), jnp.int32),
            arms.round_robin(0, arm_mask),
        )

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        return UniformState(
            stats, state.arm_mask, t, arms.round_robin(t, state.arm_mask)
        )

    def output_fn(state):
        if threshold is None:
            return arms.best_empirical(state.stats, state.arm_mask)
        return arms.labels_above(state.stats, state.arm_mask, threshold)

    return Policy(init_fn, step_fn, output_fn, setting)
