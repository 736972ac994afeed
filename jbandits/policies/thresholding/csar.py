"""CSAR adapted to thresholds (Chen et al., NIPS 2014; Mukherjee et al., IJCAI 2017).

Paper variant: K phases with the exact host schedule :func:`jbandits.policies.blocks.schedules.csar`;
in phase k every active arm is pulled up to ñ_k times (round robin in index order);
at the end of the phase the active arm farthest from tau, ``argmax |mean_i - tau|``,
is removed and its label frozen. Several phases may end on one step (zero-length
phases); steps after the last phase are idle.

``variant="authors_code"`` (the AugUCB authors' experiment code): K epochs with the
quotas of :func:`jbandits.policies.blocks.schedules.csar_authors_code`, pulls arm by arm (all of one
arm's pulls, then the next arm's), and at the end of an epoch the active arm with the
smallest mean among those with mean < tau is removed (none if no such arm).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases

VARIANTS = ("paper", "authors_code")


def _builder(variant: str):
    _validate.choice("variant", variant, VARIANTS)
    return schedules.csar if variant == "paper" else schedules.csar_authors_code


def csar_schedule_by_k(
    num_arms: int, budget: int, *, variant: str = "paper", size: int | None = None
) -> schedules.PhaseSchedule:
    """Schedules for every real K = 0..num_arms stacked as ``[num_arms + 1, P]``.

    Rows with K < 2 or T <= K are unusable: ``num_phases = -1`` (the policy idles).
    """
    size = num_arms if size is None else size
    return schedules.by_k(
        _builder(variant), num_arms, budget, **schedules.phase_rows(size)
    )


def prepare(
    num_arms: int, num_real_arms: int, budget: int, *, variant: str = "paper", **kwargs
) -> dict:
    """Host-side keyword arguments for a factory call with a traced budget.

    Returns ``{"schedule": ...}``: the ``variant`` schedule of ``num_real_arms`` real
    arms and budget ``budget``, padded to ``num_arms`` phases (the row of
    :func:`csar_schedule_by_k` for that K; idle if none exists). ``threshold`` and
    other keyword arguments are ignored.
    """
    del kwargs
    sched = schedules.for_k(
        _builder(variant), num_real_arms, budget, **schedules.phase_rows(num_arms)
    )
    return {"schedule": sched}


class CSARState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    active: Array  # [K] bool: arms not yet classified
    per_arm: Array  # [P] int32: cumulative per-arm quota of each phase
    ends: Array  # [P] int32: step at which each phase ends (paper variant)
    num_phases: Array  # [] int32 (-1: unusable schedule, idle)
    phase: Array  # [] int32: current phase
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm (-1 idle)


def _choose(stats, active, per_arm, phase, num_phases, authors: bool):
    """The next arm of the current phase: the least pulled active arm (the paper), or
    the first active arm below its quota (the authors' code, arm by arm); -1 once
    the phases are over."""
    quota = per_arm[jnp.minimum(phase, per_arm.shape[0] - 1)]
    if authors:  # arm by arm: first active arm below its quota
        below_quota = active & (stats.counts < quota)
        pick = arms.argmax_masked(below_quota.astype(stats.counts.dtype), active)
    else:
        pick = arms.least_pulled(stats.counts, active)
    return jnp.where(phase < num_phases, pick, -1).astype(jnp.int32)


@registry.policy("csar", prepare=prepare, min_budget=schedules.phases_min_budget)
def csar(
    num_arms: int,
    *,
    threshold: ArrayLike,
    budget: ArrayLike | None = None,
    variant: str = "paper",
    schedule: schedules.PhaseSchedule | None = None,
    execution: Execution | None = None,
) -> Policy:
    """CSAR for the thresholding bandit.

    Args:
      num_arms: static K_max.
      threshold: tau (traced).
      budget: T; must be concrete unless ``schedule`` is given (then the schedules
        of every real K are built and ``init`` runs that of ``arm_mask.sum()``;
        rows with T <= K idle).
      variant: static, "paper" or "authors_code" (module docstring).
      schedule: the real K's schedule (``[P]`` leaves, from :func:`schedules.csar` or
        :func:`schedules.csar_authors_code`) or :func:`csar_schedule_by_k`
        (``[K_max + 1, P]``); needed when the budget is traced (see :func:`prepare`).
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Output: labels ``1{mean_i >= tau}`` (equal to the frozen label of removed arms).
    Ties go to the lowest index (:mod:`jbandits.policies`).

    References:
      Chen, Lin, King, Lyu, Chen. Combinatorial pure exploration of multi-armed
      bandits. NIPS 2014. Mukherjee et al. IJCAI 2017 (thresholding adaptation).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    variant = _validate.choice("variant", variant, VARIANTS)
    _validate.finite("threshold", threshold)
    if schedule is None:
        if budget is None:
            raise ValueError("budget is required (or pass schedule=)")
        t_host = _validate.host_budget(budget, "CSAR's phase schedule")
        schedule = csar_schedule_by_k(num_arms, t_host, variant=variant)
    authors = variant == "authors_code"

    bound = _phases.max_ends(schedule.per_arm, schedule.num_phases)

    def advance(stats, active, phase, t, per_arm, ends, num_phases):
        """End every due phase; several end on one step when their quotas are equal
        (zero-length phases). Each removes one arm by a score fixed within the step."""
        mu = arms.mean(stats)
        if authors:  # an epoch ends once every active arm has its quota
            quota = per_arm[jnp.minimum(phase, per_arm.shape[0] - 1)]
            live = jnp.arange(per_arm.shape[0]) < num_phases
            due = (phase < num_phases) & ~jnp.any(active & (stats.counts < quota))
            same = live & (jnp.arange(per_arm.shape[0]) >= phase) & (per_arm == quota)
            count = jnp.where(due, jnp.sum(same), 0).astype(jnp.int32)
            below = active & (mu < threshold)
            kept = _phases.drop(mu, below, count, bound, execution=execution)
            return active & ~(below & ~kept), phase + count
        new_phase = _phases.phases_done(t, ends, num_phases)
        gap = jnp.abs(mu - threshold)
        count = new_phase - phase
        return _phases.drop(
            gap, active, count, bound, execution=execution, largest=True
        ), new_phase

    def init_fn(key, arm_mask):
        del key
        sched, active = _phases.start(schedule, arm_mask)
        per_arm, ends = sched.per_arm.astype(jnp.int32), sched.ends.astype(jnp.int32)
        num_phases = sched.num_phases.astype(jnp.int32)
        stats, t = arms.init_stats(num_arms), jnp.zeros((), jnp.int32)
        active, phase = advance(
            stats, active, jnp.zeros((), jnp.int32), t, per_arm, ends, num_phases
        )
        arm = _choose(stats, active, per_arm, phase, num_phases, authors)
        return CSARState(
            stats, arm_mask, active, per_arm, ends, num_phases, phase, t, arm
        )

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        active, phase = advance(
            stats,
            state.active,
            state.phase,
            t,
            state.per_arm,
            state.ends,
            state.num_phases,
        )
        arm = _choose(stats, active, state.per_arm, phase, state.num_phases, authors)
        return CSARState(
            stats,
            state.arm_mask,
            active,
            state.per_arm,
            state.ends,
            state.num_phases,
            phase,
            t,
            arm,
        )

    def output_fn(state):
        return arms.labels_above(state.stats, state.arm_mask, threshold)

    return Policy(init_fn, step_fn, output_fn, "thresholding")
