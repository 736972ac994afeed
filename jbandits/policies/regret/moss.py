"""MOSS (Audibert and Bubeck, COLT 2009): horizon and anytime forms.

After one pull per arm, pull ``argmax_j mean_j + sqrt(alpha max(ln(H / (K z_j)), 0) / z_j)``
with ``H = T`` (horizon form) or ``H = t = n + 1`` (anytime form).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.regret._index import counts_at_least_one, index_policy


def moss_index(
    stats: arms.ArmStats, h: ArrayLike, num_real: ArrayLike, alpha: ArrayLike
) -> Array:
    """``mean_j + sqrt(alpha max(ln(h / (K z_j)), 0) / z_j)``; ``h`` = T or ``n + 1``."""
    z = counts_at_least_one(stats)
    log_term = jnp.maximum(jnp.log(jnp.asarray(h, z.dtype) / (num_real * z)), 0.0)
    return arms.mean(stats) + jnp.sqrt(alpha * log_term / z)


@registry.policy("moss", optional=("horizon",))
def moss(
    num_arms: int,
    *,
    horizon: ArrayLike | None = None,
    alpha: ArrayLike = 1.0,
    anytime: bool = False,
    tie_break: str = "random",
) -> Policy:
    """MOSS (Minimax Optimal Strategy in the Stochastic case).

    Index (Audibert and Bubeck 2009): ``mean_j + sqrt(alpha * max(ln(H / (K * z_j)), 0)
    / z_j)``, with ``K`` the number of real arms. The clamp at 0 is part of the
    algorithm: once ``z_j >= H / K`` the bonus is exactly 0 and ties between equal means
    are exact.

    Args:
      num_arms: static K_max.
      horizon: T (traced), required for the horizon form (``anytime=False``) and ignored
        by the anytime form. Unlike EUCBV / UCB-Improved it fixes no shape, so it may be
        swept.
      alpha: exploration constant (traced), default 1 (rewards in [0, 1]).
      anytime: static; ``True`` replaces T by ``t = n + 1`` (the EUCBV-paper preset).
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the empirical best real arm.

    References:
      Audibert, Bubeck. Minimax policies for adversarial and stochastic bandits.
      COLT 2009.
    """
    anytime = bool(anytime)
    _validate.in_range("alpha", alpha, 0.0)
    if not anytime:
        if numbers.absent(horizon):
            raise ValueError(
                "horizon must be given for the horizon form (anytime=False)"
            )
        _validate.in_range("horizon", horizon, 1.0)

    def index_fn(stats, n, num_real):
        return moss_index(stats, n + 1 if anytime else horizon, num_real, alpha)

    return index_policy(num_arms, index_fn, tie_break, variance=False)
