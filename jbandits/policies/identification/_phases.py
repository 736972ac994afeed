"""Phase / stage engine shared by SR, SAR, VBR and the sequential-halving family.

Spec §3.4: the exact schedules are computed on the host (:mod:`jbandits.schedules`)
and enter the policy as int32 arrays. After the statistics update of every step,
:func:`end_phases` runs a ``lax.while_loop`` over the phases whose end index is <= the
step count, so several phases may end on one step (zero-length SR phases, TV-3).

A schedule is built for one number of *real* arms K. The policies check at ``init``
that ``arm_mask.sum()`` equals the schedule's K; on a mismatch (e.g. a schedule
computed for K_max applied to a padded instance) the policy is idle from the start
and outputs ``-1`` (counted as an error by every metric) instead of running a wrong
schedule silently.
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
    build: Callable[..., Any],
    num_arms: int,
    budget: Any,
    schedule: Any,
    **build_kwargs,
):
    """The schedule to run: ``schedule`` as given, else ``build(num_arms, budget)``.

    ``budget`` must then be concrete (host arithmetic); the schedule is for an
    unpadded instance (K_real = ``num_arms``). For padded instances or traced budgets
    pass ``schedule=`` computed on the host for the real K (stack them with
    :func:`jbandits.schedules.stack` for a sweep).
    """
    if schedule is None:
        if budget is None:
            raise ValueError(f"{name}: give budget (concrete) or schedule")
        _validate.require_concrete(
            "budget", budget, "the schedule is exact host arithmetic"
        )
        b = _validate.concrete_int("budget", budget, minimum=1)
        schedule = build(num_arms, b, **build_kwargs)
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
