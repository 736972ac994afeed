"""SHAdaVar: sequential halving with unknown variances.

Lalitha, Kalantari, Ma, Deoras, Kveton, UAI 2023, Algorithm 4.

Stages as their sequential halving (Algorithm 1). In stage s (local step c = 1, 2, ...;
N_i the stage-s pulls of arm i so far):

    c <= |A_s| n0 :  pull the ((c - 1) mod |A_s|) + 1-th active arm (round robin)
    otherwise     :  pull argmax_{i in A_s} U_i / N_i   (ties first), with
                     U_i = s2_i / (1 - 2 sqrt(ln(1/delta) / (N_i - 1)))

where s2_i is the unbiased stage-local sample variance and U_i = +inf when the
denominator is <= 0. n0 = floor(4 ln(1/delta)) + 2 (13 at delta = 0.05), the
smallest integer N with N - 1 > 4 ln(1/delta), instead of the non-integer
4 log(1/delta) + 1 printed in Algorithm 4, line 3 (our reading: the
smallest N with N - 1 > 4 ln(1/delta)).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.identification import _halving
from jbandits.policies.identification.sequential_halving import EQUAL_STAGES


def shadavar_n0(delta: ArrayLike) -> Array:
    """Round-robin pulls per arm per stage: floor(4 ln(1/delta)) + 2."""
    return (jnp.floor(4.0 * jnp.log(1.0 / jnp.asarray(delta))) + 2).astype(jnp.int32)


def shadavar_denominator(delta: ArrayLike, counts: ArrayLike) -> Array:
    """1 - 2 sqrt(ln(1/delta) / (N - 1)) (N >= 2)."""
    counts = jnp.asarray(counts)
    return 1.0 - 2.0 * jnp.sqrt(jnp.log(1.0 / delta) / jnp.maximum(counts - 1.0, 1.0))


def shadavar_index(local: arms.ArmStats, delta: ArrayLike) -> Array:
    """U_i / N_i with U_i = +inf when the denominator is <= 0 (or N_i < 2)."""
    den = shadavar_denominator(delta, local.counts)
    ok = (den > 0) & (local.counts >= 2)
    upper = jnp.where(ok, arms.var_unbiased(local) / jnp.where(ok, den, 1.0), jnp.inf)
    return upper / jnp.maximum(local.counts, 1.0)


@registry.policy("shadavar", shared=EQUAL_STAGES)
def shadavar(
    num_arms: int, *, delta: ArrayLike = 0.05, table, execution: Execution
) -> Policy:
    """SHAdaVar(delta) for fixed-budget BAI with unknown heterogeneous variances.

    Args:
      num_arms: static K_max (including padded arms).
      delta: confidence level in (0, 1) of the variance upper bound (traced;
        Lalitha et al. use 0.05).

    Returns:
      A :class:`~jbandits.core.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

    References:
      Lalitha et al. (UAI 2023), Algorithm 4; the paper as cited by :func:`shvar`.
    """
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    n0 = shadavar_n0(delta)

    def choose(local, active, c):
        size = jnp.maximum(jnp.sum(active), 1)
        robin = arms.nth_active(active, jnp.mod(c, size))
        greedy = arms.argmax_masked(shadavar_index(local, delta), active)
        return jnp.where(c < size * n0, robin, greedy)

    return _halving.halving_policy(num_arms, table, choose, execution=execution)
