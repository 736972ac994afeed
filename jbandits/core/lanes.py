"""Batch-wide helpers over a named ``vmap`` axis of lanes (replications).

The batched runner traces a replication inside ``vmap(..., axis_name=...)`` and hands
that name to the policies it builds (:attr:`jbandits.core.execution.Execution.lanes`). A
helper deep inside a policy (the Beta sampler of :mod:`jbandits.policies.blocks.sampling`) is given
the name and can ask :func:`any_lane` whether a condition holds on *any* lane of the
batch. That answer is the same for every lane, so a ``lax.cond`` on it stays a real
branch under ``vmap`` instead of becoming a select that computes both sides. Without
an axis (None), :func:`any_lane` returns the lane's own predicate (a real branch
under ``jit``, a select under a ``vmap`` that names no axis); either way results are
identical. :func:`gather` and :func:`index` (only with an axis) let a helper compute
something once for the whole batch, such as the Beta sampler's pooled stage 2.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core.types import Array


def count(axis: str | None) -> int:
    """Number of lanes of ``axis`` (static; 1 without one)."""
    return 1 if axis is None else int(jax.lax.axis_size(axis))


def any_lane(pred: Array, axis: str | None) -> Array:
    """``pred`` holds on at least one lane of ``axis`` (or on this lane)."""
    if axis is None:
        return pred
    return jax.lax.psum(jnp.asarray(pred).astype(jnp.int32), axis) > 0


def gather(x: Array, axis: str) -> Array:
    """``x`` of every lane of ``axis``, stacked (``[lanes, *x.shape]``).

    Under ``vmap`` the result is one array, the same for every lane: what is computed
    from it alone is computed once for the batch, not once per lane.
    """
    return jax.lax.all_gather(x, axis)


def index(axis: str) -> Array:
    """This lane's position on ``axis`` (``[] int32``)."""
    return jax.lax.axis_index(axis)
