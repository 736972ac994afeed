"""Trace-time record of the ``vmap`` axis over replications.

:func:`jbandits.engine.run` traces a replication inside ``vmap(..., axis_name=...)``
when the batched runner calls it. While it traces, :func:`axis` records that name, so
that a helper deep inside a policy (the Beta sampler of :mod:`jbandits._sampling`) can
ask :func:`any_lane` whether a condition holds on *any* lane of the batch. That answer
is the same for every lane, so a ``lax.cond`` on it stays a real branch under ``vmap``
instead of becoming a select that computes both sides. Without a recorded axis,
:func:`any_lane` returns the lane's own predicate (a real branch under ``jit``, a
select under a ``vmap`` that names no axis); either way results are identical.
:func:`gather` and :func:`index` (only with a recorded axis) let a helper compute
something once for the whole batch, such as the Beta sampler's pooled stage 2.
"""

from __future__ import annotations

import contextlib
import contextvars

import jax
import jax.numpy as jnp

from jbandits.types import Array

_AXIS: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jbandits_lanes_axis", default=None
)


@contextlib.contextmanager
def axis(name: str | None):
    """Record ``name`` as the lanes axis while tracing the ``with`` body."""
    token = _AXIS.set(name)
    try:
        yield
    finally:
        _AXIS.reset(token)


def count() -> int:
    """Number of lanes of the recorded axis (static; 1 without one)."""
    name = _AXIS.get()
    return 1 if name is None else int(jax.lax.axis_size(name))


def any_lane(pred: Array) -> Array:
    """``pred`` holds on at least one lane of the recorded axis (or on this lane)."""
    name = _AXIS.get()
    if name is None:
        return pred
    return jax.lax.psum(jnp.asarray(pred).astype(jnp.int32), name) > 0


def gather(x: Array) -> Array:
    """``x`` of every lane of the recorded axis, stacked (``[lanes, *x.shape]``).

    Under ``vmap`` the result is one array, the same for every lane: what is computed
    from it alone is computed once for the batch, not once per lane.
    """
    return jax.lax.all_gather(x, _AXIS.get())


def index() -> Array:
    """This lane's position on the recorded axis (``[] int32``)."""
    return jax.lax.axis_index(_AXIS.get())
