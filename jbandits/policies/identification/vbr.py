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

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.identification.successive_rejects import (
    SCHEDULE,
    SRState,
    rejects_policy,
)

VBRState = SRState  # VBR runs the Successive Rejects engine and its state


def vbr_width(stats: arms.ArmStats, gamma: ArrayLike) -> Array:
    """gamma * sigma_hat / sqrt(n) (0 for n < 2), computed as gamma sqrt(s2 / n).

    One correctly rounded sqrt: XLA may rewrite ``a / sqrt(n)`` into ``a * rsqrt(n)``,
    which breaks exact ties between arms (and float equality with the reference).
    """
    return gamma * jnp.sqrt(arms.var_unbiased(stats) / jnp.maximum(stats.counts, 1.0))


@registry.policy("vbr_provisional", shared=SCHEDULE)
def vbr_provisional(
    num_arms: int, *, gamma: ArrayLike = 1.96, table, execution: Execution
) -> Policy:
    """Provisional Variance-Based Rejects (UNVERIFIED placeholder).

    Args:
      num_arms: static K_max (including padded arms).
      gamma: interval multiplier >= 0 (traced; Lalitha et al., UAI 2023, use 1.96).

    Returns:
      A :class:`~jbandits.core.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

    References:
      Faella, Finzi, Sauro. Rapidly finding the best arm using variance. ECAI 2020
      (not consulted; provisional rule).
    """
    _validate.in_range("gamma", gamma, 0.0)

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
