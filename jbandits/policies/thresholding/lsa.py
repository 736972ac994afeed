"""LSA, the Logarithmic-Sample Algorithm (Tao et al., NeurIPS 2019, Alg. 1; spec §4.7).

After one pull per arm, pull ``argmin_i alpha * n_i * (mean_i - theta)^2 + ln(n_i) / 2``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits import _validate, arms
from jbandits.types import Array, ArrayLike, Policy


class LSAState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32
    arm: Array  # [] int32


def lsa_index(stats: arms.ArmStats, threshold: ArrayLike, alpha: ArrayLike) -> Array:
    n = stats.counts
    dev = arms.mean(stats) - threshold
    return alpha * n * dev * dev + 0.5 * jnp.log(jnp.maximum(n, 1.0))


def lsa(
    num_arms: int,
    *,
    threshold: ArrayLike,
    alpha: ArrayLike = 1.35,
    tie_break: str = "first",
) -> Policy:
    """LSA for thresholding bandits with aggregate regret.

    Args:
      num_arms: static K.
      threshold: theta (traced).
      alpha: universal parameter alpha > 0 (traced); S001's experiments use 1.35.
      tie_break: static "first" or "random".

    References:
      Tao, Blanco, Peng, Zhou. Thresholding Bandit with Optimal Aggregate Regret.
      NeurIPS 2019.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.finite("threshold", threshold)
    _validate.in_range("alpha", alpha, 0.0, low_open=True)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)

    def init_fn(key, arm_mask):
        del key
        return LSAState(arms.init_stats(num_arms), arm_mask, jnp.zeros((), jnp.int32),
                        arms.round_robin(0, arm_mask))

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        forced, rr = arms.forced_arm(t, state.arm_mask)
        index = lsa_index(stats, threshold, alpha)
        best = arms.argmin_masked(index, state.arm_mask, key=key, tie_break=tie_break)
        return LSAState(stats, state.arm_mask, t, jnp.where(forced, rr, best))

    def output_fn(state):
        return arms.labels_above(state.stats, state.arm_mask, threshold)

    return Policy(init_fn, step_fn, output_fn, "thresholding")
