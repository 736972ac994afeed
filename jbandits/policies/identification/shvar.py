"""SHVar: sequential halving with known heterogeneous variances.

Lalitha, Kalantari, Ma, Deoras, Kveton, UAI 2023, Algorithm 3.

Stages as their sequential halving (:mod:`.sequential_halving`, variant "equal_stages"). At
the c-th step of stage s, with N_i the stage-s pulls of arm i so far, pull

    argmax_{i in A_s} sigma_i^2 / N_i,      sigma_i^2 / 0 := +inf   (our convention at N
    = 0)

Ties: among the maximisers the arm with the fewest stage pulls, then the lowest
index. This equals "ties first" whenever tied arms have equal counts (so equal
sigma gives SH's round robin pull for pull) and makes the rule "all sigma = 0 ->
round robin" hold (a literal lowest-index rule would give arm 0 every pull there).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.identification import _halving
from jbandits.policies.identification.sequential_halving import EQUAL_STAGES


def shvar_index(variances: ArrayLike, counts: jnp.ndarray) -> jnp.ndarray:
    """sigma^2 / N with +inf for N = 0."""
    variances = jnp.asarray(variances, counts.dtype)
    return jnp.where(counts > 0, variances / jnp.maximum(counts, 1.0), jnp.inf)


@registry.policy("shvar", shared=EQUAL_STAGES)
def shvar(
    num_arms: int, *, variances: ArrayLike, table, execution: Execution
) -> Policy:
    """SHVar for fixed-budget BAI when the reward variances are known.

    Args:
      num_arms: static K_max (including padded arms).
      variances: ``[K]`` true reward variances sigma_i^2 >= 0 (traced; unrealistic
        oracle input; entries of padded arms are ignored).

    Returns:
      A :class:`~jbandits.core.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

    References:
      Lalitha, Kalantari, Ma, Deoras, Kveton. Fixed-budget best-arm identification
      with heterogeneous reward variances. UAI 2023 (Algorithm 3).
    """
    _validate.in_range("variances", variances, 0.0)
    if jnp.shape(variances) != (num_arms,):
        raise ValueError(
            f"variances must have shape ({num_arms},), got {jnp.shape(variances)}"
        )

    def choose(local, active, c):
        del c
        score = shvar_index(variances, local.counts)
        best = score[arms.argmax_masked(score, active)]
        return arms.least_pulled(local.counts, active & (score == best))

    return _halving.halving_policy(num_arms, table, choose, execution=execution)
