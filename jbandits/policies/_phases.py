"""Phase / stage engine shared by SR, SAR, VBR and the sequential-halving family.

The exact schedules are computed on the host (:mod:`jbandits.schedules`) and enter the
policy as int32 arrays. After the statistics update of every step, :func:`end_phases`
runs a ``lax.while_loop`` over the phases whose end index is <= the step count, so
several phases may end on one step (zero-length Successive Rejects phases).

A policy runs either

* a *by-K table* (leaves with a leading ``[K_max + 1]`` axis, built by
  :func:`resolve` from a concrete budget, or passed as ``schedule=``): ``init``
  selects the row ``arm_mask.sum()`` (:func:`jbandits.schedules.select`), so padded
  instances run the schedule of their real K; or
* a *single schedule* computed for one real K (e.g. by a module's ``prepare`` hook, or
  stacked over a budget sweep and traced). The policies check at ``init`` that
  ``arm_mask.sum()`` equals the schedule's K; on a mismatch the policy is idle from
  the start and outputs ``-1`` (counted as an error by every metric) instead of
  running a wrong schedule silently.

The selected row is kept in the policy state. Idle rows (no schedule exists for that
K and budget) make the policy idle with output ``-1`` the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from jbandits import _validate, arms, schedules
from jbandits.types import Array


def _as_int32(schedule):
    return type(schedule)(*[jnp.asarray(x, jnp.int32) for x in schedule])


def resolve(
    name: str,
    build_by_k: Callable[[int, int], Any],
    num_arms: int,
    budget: Any,
    schedule: Any,
):
    """The schedule to run: ``schedule`` as given, else ``build_by_k(num_arms, T)``.

    ``budget`` must then be concrete (host arithmetic) and the result is a by-K table
    covering every real K <= ``num_arms``. With a traced budget pass ``schedule=``
    computed on the host (a module's ``prepare`` hook gives the one of a real K; stack
    them with :func:`jbandits.schedules.stack` for a sweep).
    """
    if schedule is None:
        if budget is None:
            raise ValueError(f"{name}: give budget (concrete) or schedule")
        _validate.require_concrete(
            "budget", budget, "the schedule is exact host arithmetic"
        )
        b = _validate.concrete_int("budget", budget, minimum=1)
        schedule = build_by_k(num_arms, b)
    elif (
        budget is not None
        and _validate.is_concrete(budget)
        and _validate.is_concrete(schedule)
    ):
        b = _validate.concrete_int("budget", budget, minimum=1)
        ends = jax.device_get(schedule.ends)
        real = ends[ends != schedules.NEVER]
        if real.size and int(real.max()) > b:
            raise ValueError(
                f"schedule: its phases end at step {int(real.max())} > budget {b}"
            )
    return _as_int32(schedule)


def end_phases(
    phase: Array,
    t: Array,
    ends: Array,
    num_phases: Array,
    end_fn: Callable[[Array, Any], Any],
    carry: Any,
) -> tuple[Array, Any]:
    """Run ``carry = end_fn(p, carry)`` for every phase p with ``ends[p] <= t``."""
    size = ends.shape[0]

    def cond(c):
        p = c[0]
        return (p < num_phases) & (ends[jnp.minimum(p, size - 1)] <= t)

    def body(c):
        p, inner = c
        return p + 1, end_fn(p, inner)

    return jax.lax.while_loop(cond, body, (phase, carry))


def first_or_idle(arm: Array, active: Array) -> Array:
    """``arm`` while some arm is active, ``-1`` (idle) otherwise."""
    return jnp.where(active.any(), arm, -1).astype(jnp.int32)


def current_best(stats: arms.ArmStats, active: Array) -> Array:
    """BAI read-out: best cumulative mean among pulled active arms (first on ties).

    At the end of the schedule one arm is active and this is that arm; earlier it is
    a diagnostic current guess. ``-1`` when no arm is active (schedule mismatch).
    """
    pulled = active & (stats.counts > 0)
    best = arms.argmax_masked(arms.mean(stats), pulled)
    best = jnp.where(pulled.any(), best, arms.nth_active(active, 0))
    return first_or_idle(best, active)
