"""Schedule rows per real K: cached rows (:func:`for_k`), by-K tables
(:func:`by_k`), stacks of rows (:func:`stack`) and the device-side choice of an
instance's row (:func:`select`).

*Padded instances* (K_max arms, ``arm_mask.sum()`` of them real) follow one
convention, for every policy whose schedule or constants depend on K (SR, SAR, VBR,
CSAR, AugUCB, the sequential-halving family): **a padded instance runs the schedule
of its real K, or nothing**. Every schedule row records the real K it was built for
(``k_real``). :func:`by_k` stacks the rows of every real K = 0..K_max along a leading
axis (a *by-K table*); a single row (a policy's ``prepare`` hook, or a budget sweep's
stack) serves one K. At ``init`` the policy calls :func:`select` (through
``jbandits.policies.blocks.phases.start``), which returns the row ``arm_mask.sum()`` of a
table, or the single row, and the type's *idle* row (``idle(size)``) wherever no
schedule exists (K < 2 or the budget too small for K: the builder raised
:class:`Infeasible`) or the row was built for another K. On the idle row the policy
starts with no active arm, pulls nothing and outputs ``-1`` (labels all False), which
every metric counts as an error. Padded arms themselves are never active, pulled or
output. Policies whose constants are computed from ``arm_mask.sum()`` in ``init``
(e.g. EUCBV's psi = T / K^2) need no schedule row.
Rows are cached per (builder, K, budget, options), and the harmonic numbers behind
log-bar(K) are computed incrementally, so a table for K_max = 1024 takes well under a
second.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import jax.numpy as jnp
import numpy as np

from jbandits.policies.blocks.schedules.common import Infeasible
from jbandits.policies.blocks.schedules.halving import StageSchedule, num_halving_stages
from jbandits.policies.blocks.schedules.phases import PhaseSchedule


def stack(schedules):
    """Stack schedules of one kind (same ``size``) along a new leading axis."""
    first = schedules[0]
    return type(first)(*[np.stack(parts) for parts in zip(*schedules, strict=True)])


Schedule = Any  # PhaseSchedule, StageSchedule, or another NamedTuple of arrays


@functools.lru_cache(maxsize=4096)
def _cached_row(build, num_arms: int, budget: int, options: tuple) -> Schedule:
    row = build(num_arms, budget, **dict(options))
    for leaf in row:
        if isinstance(leaf, np.ndarray):
            leaf.setflags(write=False)  # shared by every caller of the cache
    return row


def for_k(
    build: Callable[..., Schedule],
    num_arms: int,
    budget: int,
    *,
    idle: Schedule,
    **options,
) -> Schedule:
    """``build(num_arms, budget, **options)``, or ``idle`` where it raises
    :class:`Infeasible`. Cached per (build, K, budget, options); read-only arrays."""
    try:
        return _cached_row(build, int(num_arms), int(budget), tuple(options.items()))
    except Infeasible:
        return idle


def phase_rows(num_arms: int) -> dict:
    """``for_k`` / ``by_k`` options of a ``num_arms``-arm policy's phase schedules:
    ``num_arms`` phases (enough for every real K) and the matching idle row."""
    return {"size": num_arms, "idle": PhaseSchedule.idle(num_arms)}


def stage_rows(num_arms: int) -> dict:
    """``for_k`` / ``by_k`` options of a ``num_arms``-arm policy's stage schedules:
    ceil(log2 num_arms) stages (enough for every real K) and the idle row."""
    size = num_halving_stages(num_arms)
    return {"size": size, "idle": StageSchedule.idle(size)}


def by_k(
    build: Callable[..., Schedule],
    num_arms: int,
    budget: int,
    *,
    idle: Schedule,
    **options,
) -> Schedule:
    """The :func:`for_k` rows of K = 0..``num_arms`` stacked: ``[num_arms + 1, ...]``.

    Row K is the schedule of an instance with K real arms (``options`` must include a
    common ``size``); rows where no schedule exists are ``idle``.
    """
    rows = [
        for_k(build, k, budget, idle=idle, **options) for k in range(int(num_arms) + 1)
    ]
    return stack(rows)


def select(table: Schedule, arm_mask) -> Schedule:
    """Device side: the schedule of one instance, as ``jnp`` arrays (traceable).

    ``table`` is a by-K table when its ``k_real`` leaf has a leading K axis: its row
    ``arm_mask.sum()`` is taken. Otherwise ``table`` is one schedule. Either way the
    result is the idle row of the type (same shapes) unless its ``k_real`` equals
    ``arm_mask.sum()``: a schedule built for another K is never run.
    """
    k_real = jnp.sum(arm_mask).astype(jnp.int32)
    row = type(table)(*[jnp.asarray(x) for x in table])
    if jnp.ndim(table.k_real) == 1:
        row = type(table)(*[x[k_real] for x in row])
    idle = type(table).idle(row[0].shape[-1])
    ok = row.k_real == k_real
    pairs = zip(row, idle, strict=True)
    return type(table)(*[jnp.where(ok, x, jnp.asarray(y, x.dtype)) for x, y in pairs])
