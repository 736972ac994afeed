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

from typing import Any

import jax.numpy as jnp

from jbandits import _validate, arms, registry, schedules
from jbandits.execution import Execution
from jbandits.policies import _phases
from jbandits.policies.identification.successive_rejects import (
    SRState,
    rejects_policy,
    sr_schedule_by_k,
)
from jbandits.policies.identification.successive_rejects import (
    prepare as sr_prepare,
)
from jbandits.types import Array, ArrayLike, Policy

VBRState = SRState  # VBR runs the Successive Rejects engine and its state


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
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Returns:
      A :class:`~jbandits.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

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

    def choose(stats, active):
        young = active & (stats.counts < 2)
        least = arms.least_pulled(stats.counts, active)
        widest = arms.argmax_masked(vbr_width(stats, gamma), active)
        return jnp.where(young.any(), least, widest)

    return rejects_policy(
        num_arms,
        table,
        choose,
        lambda stats: arms.mean(stats) + vbr_width(stats, gamma),
        execution=execution,
    )
