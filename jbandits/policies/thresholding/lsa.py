"""LSA, the Logarithmic-Sample Algorithm (Tao et al., NeurIPS 2019, Alg. 1).

After one pull per arm, pull ``argmin_i alpha * n_i * (mean_i - theta)^2 + ln(n_i) / 2``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import threshold_index_policy


def lsa_index(stats: arms.ArmStats, threshold: ArrayLike, alpha: ArrayLike) -> Array:
    n = stats.counts
    dev = arms.mean(stats) - threshold
    return alpha * n * dev * dev + 0.5 * jnp.log(jnp.maximum(n, 1.0))


@registry.policy("lsa")
def lsa(
    num_arms: int,
    *,
    threshold: ArrayLike,
    alpha: ArrayLike = 1.35,
    tie_break: str = "first",
) -> Policy:
    """LSA for thresholding bandits with aggregate regret.

    Args:
      num_arms: static K.
      threshold: theta (traced).
      alpha: universal parameter alpha > 0 (traced); Tao et al. (NeurIPS 2019,
        Sec. 5) use 1.35 in their experiments.
      tie_break: static, "first" (lowest index) or "random" (see
        :mod:`jbandits.policies`).

    References:
      Tao, Blanco, Peng, Zhou. Thresholding Bandit with Optimal Aggregate Regret.
      NeurIPS 2019.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.finite("threshold", threshold)
    _validate.in_range("alpha", alpha, 0.0, low_open=True)

    def index(stats, mask):
        return lsa_index(stats, threshold, alpha)

    return threshold_index_policy(
        num_arms, index, threshold, tie_break=tie_break, variance=False
    )
