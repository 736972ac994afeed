"""Shared skeleton of the cumulative-regret index policies (spec §1.3-1.5).

UCB1, UCB-V, MOSS and OCUCB differ only in their index. Each pulls every real arm once
in index order (spec §1.4), then the arm with the largest index over the real arms;
exact ties go to a uniformly random maximiser (``tie_break="random"``, the library
default of spec §1.5) or to the lowest index (``"first"``, the authors' behaviour).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from jbandits import _validate, arms
from jbandits.types import Array, Policy


class IndexState(NamedTuple):
    stats: arms.ArmStats  # [K] counts, sums, Welford M2
    arm_mask: Array  # [K] bool: real arms
    n: Array  # [] int32: completed pulls
    arm: Array  # [] int32: next arm


# (stats, n, num_real) -> [K] index; n = completed pulls (>= K_real where it matters),
# num_real = K_real = arm_mask.sum() (the "K" of the formulas)
IndexFn = Callable[[arms.ArmStats, Array, Array], Array]


def index_policy(num_arms: int, index_fn: IndexFn, tie_break: str) -> Policy:
    """Policy that pulls each real arm once, then ``argmax index_fn(stats, n, K)``.

    Output: the real arm with the largest empirical mean (lowest index on ties).
    """
    _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)

    def init_fn(key, arm_mask):
        del key  # the first pull is forced
        zero = jnp.zeros((), jnp.int32)
        return IndexState(arms.init_stats(num_arms), arm_mask, zero,
                          arms.round_robin(0, arm_mask))

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        n = state.n + 1
        forced, rr = arms.forced_arm(n, state.arm_mask)
        index = index_fn(stats, n, jnp.sum(state.arm_mask))
        best = arms.argmax_masked(index, state.arm_mask, key=key, tie_break=tie_break)
        return IndexState(stats, state.arm_mask, n, jnp.where(forced, rr, best))

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")


def counts_at_least_one(stats: arms.ArmStats) -> Array:
    """``max(z, 1)``: every division by a count is guarded (spec §1.3)."""
    return jnp.maximum(stats.counts, 1.0)
