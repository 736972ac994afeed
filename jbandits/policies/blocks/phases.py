"""Phase machinery shared by the fixed-schedule policies (SR, SAR, VBR, CSAR and the
sequential-halving family).

The exact schedules are computed on the host (:mod:`jbandits.policies.blocks.schedules`) and enter the
policy as int32 arrays. After the statistics update of every step the phases whose end
index is <= the step count end; several phases may end on one step (zero-length
Successive Rejects phases).

A step has no data-dependent loop when the bound below is known: a phase end is a
fixed-shape masked update, unrolled :func:`max_ends` times (the most phases that end
on one step in the schedule, computed on the host; usually 1), and rejections by a
score that does not change between the phases ending on one step (SR, VBR, CSAR) are
one :func:`drop` of the ``count`` worst arms (unrolled arg-mins, or one ranking when
the bound is large or unknown, as for a traced schedule). Each such update sits in a
``lax.cond`` on "a phase ends on some lane" (``Execution.gate``): under the runner's
lanes axis that is one predicate for all lanes, so the update (a sort for halving)
runs on the few steps that end a phase, not on every step: the faster form on GPU. A
``lax.while_loop`` over the due phases remains where the bound is unknown (SAR, a
traced schedule), and on CPU (``Execution.fixed_phase_sorts`` off there by default)
for updates that sort (halving, a ranking :func:`drop`): there a loop run only at
phase ends adds little per step; measured against the gated update it was faster
for Successive Rejects' ranking and about even (mixed) for halving. Both
measurements are in ``benchmarks/notes_policies.md``. The policies take these
choices as their static ``execution`` (:class:`jbandits.core.execution.Execution`),
chosen by the batched runner per platform; every form gives the same arms.

A policy runs either a *by-K table* (built by :func:`resolve` from a concrete budget,
or passed as ``schedule=``) or a *single schedule* computed for one real K (a
module's ``prepare`` hook, or stacked over a budget sweep and traced). Padded
instances follow the one convention of :mod:`jbandits.policies.blocks.schedules`: :func:`start`
gives the row of the real K (or the idle row: no schedule for that K, or a single
schedule built for another K) and the starting active set (the real arms, none on
the idle row). The row is kept in the policy state.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import validate as _validate
from jbandits.core.arguments import SharedArguments
from jbandits.core.execution import Execution
from jbandits.core.types import Array
from jbandits.policies.blocks import arms, schedules


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
    them with :func:`jbandits.policies.blocks.schedules.stack` for a sweep).
    """
    if schedule is None:
        if budget is None:
            raise ValueError(f"{name}: give budget (concrete) or schedule")
        b = _validate.host_budget(budget, "the schedule is exact host arithmetic")
        schedule = build_by_k(num_arms, b)
    elif (
        budget is not None
        and _validate.is_concrete(budget)
        and _validate.is_concrete(schedule)
    ):
        b = _validate.host_budget(budget, "the schedule's phase ends are checked")
        ends = jax.device_get(schedule.ends)
        real = ends[ends != schedules.NEVER]
        if real.size and int(real.max()) > b:
            raise ValueError(
                f"schedule: its phases end at step {int(real.max())} > budget {b}"
            )
    return _as_int32(schedule)


def _keyword(name: str, annotation: str) -> inspect.Parameter:
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=annotation
    )


_SCHEDULE_DOC = """\
budget: T. Needed (concrete) only when ``schedule`` is None: the {what} schedules of
  every real K <= ``num_arms`` are then built (:func:`{by_k}`) and ``init`` runs the
  one of ``arm_mask.sum()``.
schedule: a :class:`{cls}`: the {what} schedule of one real K, from :func:`{one}` or
  the policy's registered ``prepare`` hook (arrays may be traced, e.g. stacked over a
  budget sweep; one built for a K other than ``arm_mask.sum()`` makes the policy idle
  with output ``-1``), or a by-K table from :func:`{by_k}`.
execution: how the step compiles (static); see :mod:`jbandits.policies`."""


def _ref(fn: Callable) -> str:
    """A cross-reference to ``fn`` through its family package (which exports the
    schedule builders: ``jbandits.policies.identification.sr_schedule``, ...)."""
    return f"~{fn.__module__.rpartition('.')[0]}.{fn.__qualname__}"


def schedule_arguments(
    what: str,
    one: Callable,
    by_k: Callable[[int, int], Any],
    prepare: Callable[..., dict],
    min_budget: Callable[..., int],
) -> SharedArguments:
    """The ``budget``, ``schedule`` and ``execution`` arguments of a fixed-schedule
    policy (registered with ``shared=``, :mod:`jbandits.core.arguments`): its factory
    receives ``table`` (:func:`resolve` of them with ``by_k``) and ``execution``
    (resolved) instead. ``what`` names the schedule in the docstring; ``one`` builds
    the schedule of one real K (its return annotation names the schedule's class);
    ``prepare`` and ``min_budget`` are the registration's hooks."""

    def resolve_all(name, num_arms, *, budget, schedule, execution):
        execution = Execution.resolve(execution)
        table = resolve(name, by_k, num_arms, budget, schedule)
        return {"table": table, "execution": execution}

    cls = inspect.signature(one).return_annotation
    doc = _SCHEDULE_DOC.format(
        what=what,
        cls=f"jbandits.{cls}" if isinstance(cls, str) else cls.__name__,
        one=_ref(one),
        by_k=_ref(by_k),
    )
    return SharedArguments(
        parameters=(
            _keyword("budget", "ArrayLike | None"),
            _keyword("schedule", "Any"),
            _keyword("execution", "Execution | None"),
        ),
        doc=doc,
        provides=("table", "execution"),
        resolve=resolve_all,
        prepare=prepare,
        min_budget=min_budget,
    )


def max_ends(ends: Any, num_phases: Any) -> int | None:
    """Host side: the most phases that end on one step, over every row of a schedule
    (``ends [.., P]``, ``num_phases [..]``); at least 1. None when either is traced."""
    if not _validate.is_concrete((ends, num_phases)):
        return None
    ends = np.asarray(jax.device_get(ends)).reshape(-1, np.shape(ends)[-1])
    counts = np.asarray(jax.device_get(num_phases)).reshape(-1)
    most = 1
    for row, n in zip(ends, counts, strict=True):
        if n > 0:
            most = max(most, int(np.unique(row[:n], return_counts=True)[1].max()))
    return most


def phases_done(t: Array, ends: Array, num_phases: Array) -> Array:
    """Closed form of the phase index after step ``t``: the phases ``p < num_phases``
    with ``ends[p] <= t`` (phase ends are non-decreasing)."""
    live = jnp.arange(ends.shape[0]) < num_phases
    return jnp.sum(live & (ends <= t)).astype(jnp.int32)


def end_phases(
    phase: Array,
    t: Array,
    ends: Array,
    num_phases: Array,
    end_fn: Callable[[Array, Any], Any],
    carry: Any,
    bound: int | None,
    *,
    execution: Execution,
    sorts: bool = False,
) -> tuple[Array, Any]:
    """Run ``carry = end_fn(p, carry)`` for every phase p with ``ends[p] <= t``.

    ``bound`` (static) is at least the number of phases that can end on one step
    (:func:`max_ends`): the update is unrolled ``bound`` times, each masked by whether
    its phase is due, under a gate (:func:`_gated`). It runs in a ``lax.while_loop``
    instead when ``bound`` is None (unknown), or when ``end_fn`` ``sorts`` and
    ``execution.fixed_phase_sorts`` is off.
    """
    size = ends.shape[0]

    def due(p):
        return (p < num_phases) & (ends[jnp.minimum(p, size - 1)] <= t)

    if bound is None or (sorts and not execution.fixed_phase_sorts):

        def body(c):
            p, inner = c
            return p + 1, end_fn(p, inner)

        return jax.lax.while_loop(lambda c: due(c[0]), body, (phase, carry))
    for _ in range(bound):
        now = due(phase)

        def masked(c, now=now, phase=phase):
            new = end_fn(phase, c)
            return jax.tree_util.tree_map(lambda a, b: jnp.where(now, a, b), new, c)

        carry = _gated(now, masked, carry, execution)
        phase = phase + now.astype(phase.dtype)
    return phase, carry


def _gated(
    pred: Array, update: Callable[[Any], Any], carry: Any, execution: Execution
) -> Any:
    """``update(carry)``, an identity where ``pred`` is False, computed only when
    ``pred`` holds on some lane (``execution.gate``): a real ``lax.cond`` branch
    under the runner's lanes axis, a select without one; the same values either
    way."""
    if not execution.gate:
        return update(carry)
    if execution.lanes is None:
        return jax.lax.cond(pred, update, lambda c: c, carry)
    # a max of the predicates: on a GPU one kernel (a sum then "> 0" is two)
    return jax.lax.cond(jax.lax.pmax(pred, execution.lanes), update, lambda c: c, carry)


UNROLL = 4  # drop(): up to this bound, repeated arg-min/arg-max beats one sort


def drop(
    score: Array,
    eligible: Array,
    count: Array,
    bound: int | None,
    *,
    execution: Execution,
    largest: bool = False,
) -> Array:
    """``eligible`` without its ``count`` lowest-scoring arms (``largest``: highest).

    The same arms as ``count`` successive :func:`jbandits.policies.blocks.arms.argmin_masked`
    (:func:`~jbandits.policies.blocks.arms.argmax_masked`) removals with ``score`` fixed (ties by
    lowest index, NaN worst). ``bound`` (static) is at least ``count``: up to
    :data:`UNROLL` the removals are unrolled; above it or when None (unknown) the arms
    are ranked once (:func:`jbandits.policies.blocks.arms.rank`), or, when
    ``execution.fixed_phase_sorts`` is off, removed one by one in a
    ``lax.while_loop``.
    """
    pick_fn = arms.argmax_masked if largest else arms.argmin_masked
    num_arms = score.shape[0]
    if bound is not None and bound <= UNROLL:

        def unrolled(eligible):
            for i in range(bound):
                hit = arms.one_hot(pick_fn(score, eligible), num_arms)
                eligible = eligible & ~(hit & (count > i))
            return eligible

        return _gated(count > 0, unrolled, eligible, execution)
    if execution.fixed_phase_sorts:
        return _gated(
            count > 0,
            lambda e: e & ~(arms.rank(score, e, largest=largest) < count),
            eligible,
            execution,
        )

    def body(c):
        i, left = c
        return i + 1, left & ~arms.one_hot(pick_fn(score, left), num_arms)

    return jax.lax.while_loop(lambda c: c[0] < count, body, (0, eligible))[1]


def start(table: Any, arm_mask: Array) -> tuple[Any, Array]:
    """The schedule of this instance and its starting active set.

    The schedule is :func:`jbandits.policies.blocks.schedules.select`'s (the row of the real K, or the
    idle row); the active set is the real arms, or no arm on the idle row.
    """
    sched = schedules.select(table, arm_mask)
    return sched, arm_mask & (sched.k_real >= 0)


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
