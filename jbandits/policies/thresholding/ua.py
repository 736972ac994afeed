"""UA: uniformly random allocation (a baseline of Mukherjee et al., IJCAI 2017)."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms


class UAState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32
    arm: Array  # [] int32


@registry.policy("ua")
def ua(num_arms: int, *, threshold: ArrayLike, init_once: bool = False) -> Policy:
    """At every step pull an arm drawn uniformly at random from the real arms.

    Mukherjee et al. (IJCAI 2017): "at each time-step an arm is uniformly sampled" (with
    replacement, no initialisation). Unpulled arms are labelled 0.

    Args:
      num_arms: static K.
      threshold: tau (traced).
      init_once: static; pull each arm once first (round robin), then draw at random.

    The draw at pull ``t`` uses the step key: ``randint(key, 0, K_real)``-th real arm;
    the very first arm uses the init key.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.finite("threshold", threshold)
    passes = 1 if init_once else 0

    def draw(key, arm_mask):
        j = jax.random.randint(key, (), 0, jnp.sum(arm_mask))
        return arms.nth_active(arm_mask, j)

    def choose(t, key, arm_mask):
        forced, rr = arms.forced_arm(t, arm_mask, passes)
        return jnp.where(forced, rr, draw(key, arm_mask)).astype(jnp.int32)

    def init_fn(key, arm_mask):
        t = jnp.zeros((), jnp.int32)
        return UAState(arms.init_stats(num_arms), arm_mask, t, choose(t, key, arm_mask))

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        return UAState(stats, state.arm_mask, t, choose(t, key, state.arm_mask))

    def output_fn(state):
        return arms.labels_above(state.stats, state.arm_mask, threshold)

    return Policy(init_fn, step_fn, output_fn, "thresholding")
