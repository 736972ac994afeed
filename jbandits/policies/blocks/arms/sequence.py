"""Arm sequencing: the arms a policy walks through in order (round robin over the
real arms, forced initial pulls, the next / last real arm, the ``j``-th active arm,
the least-pulled active arm) and the indicator of one arm.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks.arms.selection import _first_true, argmin_masked


def one_hot(arm: ArrayLike, num_arms: int) -> Array:
    """``[K] bool`` indicator of ``arm`` (all False for ``arm = -1``)."""
    return jnp.arange(num_arms) == arm


def nth_active(active: Array, j: ArrayLike) -> Array:
    """Index of the ``j``-th (0-based) True entry of ``active`` (``-1`` if none).

    The prefix count uses ``lax.associative_scan`` (log-depth, elementwise): XLA's CPU
    ``cumsum`` is a quadratic reduce-window (slower at large K:
    ``benchmarks/notes_policies.md``).
    """
    counts = jax.lax.associative_scan(jnp.add, active.astype(jnp.int32))
    return _first_true(active & (counts == j + 1))


def steps_ahead(arm: ArrayLike, num_arms: int) -> Array:
    """``[K] int32``: how far each arm lies after ``arm`` cyclically, minus one.

    Round robin one pull at a time: if ``arm`` is the ``j``-th active arm, the active
    arm with the smallest value (distinct values, so no tie) is the ``(j + 1) mod
    n``-th, the value of :func:`round_robin` one pull later. As a score it lets a
    policy choose its forced round-robin arm in the same reduction as its index.
    """
    iota = jnp.arange(num_arms, dtype=jnp.int32)
    # iota - arm - 1 lies in [-K, K - 1] for arm in [-1, K - 1]: one conditional add
    # is the modulo (an integer remainder per arm is a scalar division on CPU)
    ahead = iota - jnp.asarray(arm, jnp.int32) - 1
    return jnp.where(ahead < 0, ahead + num_arms, ahead)


def next_real(arm: ArrayLike, arm_mask: Array) -> Array:
    """The first real arm after ``arm`` cyclically (``arm`` itself if it is the only
    one; ``-1`` if no arm is real): one integer min-reduction, the arm that
    :func:`steps_ahead` ranks first among the real arms."""
    num_arms = arm_mask.shape[-1]
    gap = jnp.min(jnp.where(arm_mask, steps_ahead(arm, num_arms), num_arms))
    # arm in [-1, K - 1], gap in [0, K - 1] when some arm is real: after in [0, 2K - 1]
    after = jnp.asarray(arm, jnp.int32) + 1 + gap
    after = jnp.where(after >= num_arms, after - num_arms, after)
    return jnp.where(gap >= num_arms, -1, after).astype(jnp.int32)


def last_real(arm_mask: Array) -> Array:
    """The highest-numbered real arm (``-1`` if none): one integer max-reduction of
    the mask, which XLA hoists out of a loop whose carry passes the mask through."""
    iota = jnp.arange(arm_mask.shape[-1], dtype=jnp.int32)
    return jnp.max(jnp.where(arm_mask, iota, -1))


def least_pulled(counts: Array, active: Array) -> Array:
    """Least-pulled active arm, lowest index on ties (round robin within a phase)."""
    return argmin_masked(counts, active)


def round_robin(t: ArrayLike, arm_mask: Array) -> Array:
    """The ``(t mod K_real)``-th real arm: round robin over unmasked arms (-1 if none)."""
    num_real = jnp.maximum(jnp.sum(arm_mask), 1)
    return nth_active(arm_mask, jnp.mod(t, num_real))


def forced_arm(t: ArrayLike, arm_mask: Array, passes: int = 1) -> tuple[Array, Array]:
    """Forced initial pulls: ``(is_forced, arm)`` for the pull numbered ``t`` (0-based).

    "Pull each arm ``passes`` times" = the first ``passes * K_real`` pulls go round
    robin over the real arms in index order.
    """
    num_real = jnp.sum(arm_mask)
    return t < passes * num_real, round_robin(t, arm_mask)
