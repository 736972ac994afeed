"""Successive Rejects, SR (Audibert, Bubeck, Munos, COLT 2010).

K - 1 phases. With logbar(K) = 1/2 + sum_{i=2}^K 1/i and
``n_k = ceil((T - K) / (logbar(K) (K + 1 - k)))`` (exact, host side), phase k pulls each
of its K + 1 - k active arms up to n_k cumulative pulls, then rejects the active arm
with the lowest cumulative mean (first on ties). The last active arm is the output;
the T - sum of pulls leftover steps are idle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.execution import Execution
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases


class SRState(NamedTuple):
    stats: arms.ArmStats  # cumulative per-arm statistics
    active: Array  # [K] bool: arms not yet rejected
    phase: Array  # [] int32: current phase (0-based); num_phases = finished
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm, -1 = idle
    sched: schedules.PhaseSchedule  # the schedule of this instance's real K


def sr_schedule(
    num_real_arms: int, budget: int, size: int | None = None
) -> schedules.PhaseSchedule:
    """Host-side exact SR schedule for ``num_real_arms`` real arms (padded to ``size``).

    Use ``size=num_arms`` (K_max) so that schedules of padded instances and of several
    budgets stack (:func:`jbandits.policies.blocks.schedules.stack`).
    """
    return schedules.successive_rejects(num_real_arms, budget, size)


def sr_schedule_by_k(num_arms: int, budget: int) -> schedules.PhaseSchedule:
    """SR schedules for every real K = 0..num_arms, ``[num_arms + 1, num_arms]``.

    Rows with K < 2 or T <= K are idle (the policy pulls nothing, output ``-1``).
    """
    return schedules.by_k(
        schedules.successive_rejects, num_arms, budget, **schedules.phase_rows(num_arms)
    )


def prepare(num_arms: int, num_real_arms: int, budget: int, **kwargs) -> dict:
    """Host-side keyword arguments for a factory call with a traced budget.

    Returns ``{"schedule": ...}``: the SR schedule of ``num_real_arms`` real arms and
    budget ``budget``, padded to ``num_arms`` phases (the row that
    :func:`sr_schedule_by_k` gives for that K, idle if none exists), so that the
    schedules of a grid's cells stack. Other policy keyword arguments are ignored.
    """
    del kwargs
    sched = schedules.for_k(
        schedules.successive_rejects,
        num_real_arms,
        budget,
        **schedules.phase_rows(num_arms),
    )
    return {"schedule": sched}


SCHEDULE = _phases.schedule_arguments(
    "Successive Rejects",
    sr_schedule,
    sr_schedule_by_k,
    prepare,
    schedules.phases_min_budget,
)


@registry.policy("successive_rejects", shared=SCHEDULE)
def successive_rejects(num_arms: int, *, table, execution: Execution) -> Policy:
    """Successive Rejects for fixed-budget best-arm identification.

    Args:
      num_arms: static K_max (including padded arms).

    Returns:
      A :class:`~jbandits.core.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

    References:
      Audibert, Bubeck, Munos. Best arm identification in multi-armed bandits. COLT 2010.
    """
    return rejects_policy(
        num_arms,
        table,
        lambda stats, active: arms.least_pulled(stats.counts, active),
        arms.mean,
        execution=execution,
    )


def rejects_policy(
    num_arms: int,
    table,
    choose: Callable[[arms.ArmStats, Array], Array],
    score: Callable[[arms.ArmStats], Array],
    *,
    execution: Execution,
) -> Policy:
    """The engine of SR, shared with VBR_provisional: the phase schedule ``table``
    (one schedule or a by-K table); next arm ``choose(stats, active)``; at each phase
    end the active arm with the lowest ``score(stats)`` is rejected (ties by index,
    :func:`jbandits.policies.blocks.phases.drop`); output the best pulled active arm;
    ``execution``: the form of the phase ends (:class:`jbandits.core.execution.Execution`).
    """
    bound = _phases.max_ends(table.ends, table.num_phases)

    def init_fn(key, arm_mask):
        del key
        sched, active = _phases.start(table, arm_mask)
        stats = arms.init_stats(num_arms)
        first = _phases.first_or_idle(choose(stats, active), active)
        zero = jnp.zeros((), jnp.int32)
        return SRState(stats, active, zero, zero, first, sched)

    def step_fn(state, key, reward):
        del key
        sched = state.sched
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        phase = _phases.phases_done(t, sched.ends, sched.num_phases)
        ended = phase - state.phase
        active = _phases.drop(
            score(stats), state.active, ended, bound, execution=execution
        )
        done = phase >= sched.num_phases
        arm = jnp.where(done, -1, choose(stats, active))
        return SRState(stats, active, phase, t, arm.astype(jnp.int32), sched)

    def output_fn(state):
        return _phases.current_best(state.stats, state.active)

    return Policy(init_fn, step_fn, output_fn, "identification")
