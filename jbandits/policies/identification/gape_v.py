"""GapE-V (Gabillon, Ghavamzadeh, Lazaric, Bubeck, NIPS 2011), variance-aware GapE.

After two pulls per arm (round robin, index order), pull ``argmax_k B_k`` with

    B_k = -|Delta_k| + sqrt(2 a s_k^2 / n_k) + 7 a b / (3 (n_k - 1)),

``Delta_k`` the empirical gap of GapE (:func:`~jbandits.policies.identification.gape.
empirical_gaps`) and ``s_k^2`` the unbiased sample variance; output ``argmax_k mean_k``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.identification.gape import empirical_gaps, gap_policy


def gape_v_index(
    stats: arms.ArmStats, arm_mask: Array, a: ArrayLike, b: ArrayLike
) -> Array:
    """B_k = -|Delta_k| + sqrt(2 a s_k^2 / n_k) + 7 a b / (3 (n_k - 1)) (n_k >= 2)."""
    n = jnp.maximum(stats.counts, 2.0)
    var = arms.var_unbiased(stats)
    gap = jnp.abs(empirical_gaps(stats, arm_mask))
    # summed left to right, in the paper's order (exact float reproducibility)
    return -gap + jnp.sqrt(2 * a * var / n) + 7 * a * b / (3 * (n - 1))


@registry.policy("gape_v")
def gape_v(
    num_arms: int, *, a: ArrayLike, b: ArrayLike = 1.0, tie_break: str = "first"
) -> Policy:
    """GapE-V for best-arm identification in one bandit with a fixed budget.

    Args:
      a: exploration parameter a > 0 (traced); see :func:`gape_v_oracle_params`.
      num_arms, b, tie_break: as for :func:`~jbandits.policies.identification.gape.gape`
        (static K; reward range b > 0, default 1; "first", the default, or "random").

    Needs a budget of at least 2K for the two initial pulls per arm. Output: the best
    arm ``argmax_k mean_k`` over pulled real arms (first on ties).

    References:
      The papers cited by :func:`~jbandits.policies.identification.gape.gape`
      (Gabillon et al., NIPS 2011; Lalitha et al., UAI 2023, for the tuning).
    """
    return gap_policy(num_arms, gape_v_index, a, b, tie_break, passes=2)
