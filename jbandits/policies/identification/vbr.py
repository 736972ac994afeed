"""VBR_provisional: a placeholder for Variance-Based Rejects (UNVERIFIED).

The primary source (Faella, Finzi, Sauro, ECAI 2020) was not available; this is a
provisional rule, registered as ``vbr_provisional`` and not to be reported as
VBR. It runs the exact SR schedule (K - 1 phases, phase k ends after
sum_{j<=k} (K + 1 - j)(n_j - n_{j-1}) pulls):

* while some active arm has fewer than 2 pulls, pull the least-pulled active arm
  (lowest index on ties): the first 2K pulls are two index-order round-robin passes;
* otherwise pull the active arm with the widest interval
  argmax gamma sigma_i / sqrt(n_i) (sigma_i from the unbiased variance; ties first);
* at a phase end reject argmin of the upper bound mean_i + gamma sigma_i / sqrt(n_i)
  over the active arms (ties first; sigma_i = 0 while n_i < 2).

The last active arm is the output; steps after the last phase idle.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax.numpy as jnp

from jbandits import _validate, arms, registry, schedules
from jbandits.execution import Execution
from jbandits.policies import _phases
from jbandits.policies.identification.successive_rejects import (
    prepare as sr_prepare,
)
from jbandits.policies.identification.successive_rejects import sr_schedule_by_k
from jbandits.types import Array, ArrayLike, Policy


class VBRState(NamedTuple):
    stats: arms.ArmStats  # cumulative per-arm statistics
    active: Array  # [K] bool: arms not yet rejected
    phase: Array  # [] int32: current phase (0-based); num_phases = finished
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm, -1 = idle
    sched: schedules.PhaseSchedule  # the SR schedule of this instance's real K


def vbr_width(stats: arms.ArmStats, gamma: ArrayLike) -> Array:
    """gamma * sigma_hat / sqrt(n) (0 for n < 2), computed as gamma sqrt(s2 / n).

    One correctly rounded sqrt: XLA may rewrite ``a / sqrt(n)`` into ``a * rsqrt(n)``,
    which breaks exact ties between arms (and float equality with the reference).
    """
    return gamma * jnp.sqrt(arms.var_unbiased(stats) / jnp.maximum(stats.counts, 1.0))


prepare = sr_prepare  # VBR runs the Successive Rejects schedule


@registry.policy(
    "vbr_provisional", prepare=prepare, min_budget=schedules.phases_min_budget
)
def vbr_provisional(
    num_arms: int,
    *,
    gamma: ArrayLike = 1.96,
    budget: ArrayLike | None = None,
    schedule: Any = None,
    execution: Execution | None = None,
) -> Policy:
    """Provisional Variance-Based Rejects (UNVERIFIED placeholder).

    Args:
      num_arms: static K_max (including padded arms).
      gamma: interval multiplier >= 0 (traced; Lalitha et al., UAI 2023, use 1.96).
      budget, schedule: the Successive Rejects schedule, as for
        :func:`~jbandits.policies.identification.successive_rejects.successive_rejects`.
      execution: static :class:`~jbandits.execution.Execution`, how the step is
        compiled (never what it computes); the batched runner sets it. Default:
        :meth:`Execution.default() <jbandits.execution.Execution.default>`.

    Returns:
      A :class:`~jbandits.types.Policy`; output is the recommended arm ``[] int32``.

    Ties go to the lowest index ("first"), where the paper leaves them arbitrary or
    random; see :mod:`jbandits.policies` for the default arm permutation.

    References:
      Faella, Finzi, Sauro. Rapidly finding the best arm using variance. ECAI 2020
      (not consulted; provisional rule).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    _validate.in_range("gamma", gamma, 0.0)
    table = _phases.resolve(
        "vbr_provisional", sr_schedule_by_k, num_arms, budget, schedule
    )

    bound = _phases.max_ends(table.ends, table.num_phases)

    def choose(stats, active):
        young = active & (stats.counts < 2)
        least = arms.least_pulled(stats.counts, active)
        widest = arms.argmax_masked(vbr_width(stats, gamma), active)
        return jnp.where(young.any(), least, widest)

    def init_fn(key, arm_mask):
        del key
        sched, active = _phases.start(table, arm_mask)
        stats = arms.init_stats(num_arms)
        first = _phases.first_or_idle(choose(stats, active), active)
        zero = jnp.zeros((), jnp.int32)
        return VBRState(stats, active, zero, zero, first, sched)

    def step_fn(state, key, reward):
        del key
        sched = state.sched
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        upper = arms.mean(stats) + vbr_width(stats, gamma)
        phase = _phases.phases_done(t, sched.ends, sched.num_phases)
        active = _phases.drop(
            upper, state.active, phase - state.phase, bound, execution=execution
        )
        done = phase >= sched.num_phases
        arm = jnp.where(done, -1, choose(stats, active))
        return VBRState(stats, active, phase, t, arm.astype(jnp.int32), sched)

    def output_fn(state):
        return _phases.current_best(state.stats, state.active)

    return Policy(init_fn, step_fn, output_fn, "identification")
