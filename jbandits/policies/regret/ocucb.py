"""OCUCB, horizon-dependent form (Lattimore, arXiv:1507.07880, 2015).

After one pull per arm, pull ``argmax_j mean_j + sqrt((alpha / z_j) ln(psi T / t))``
with ``t = n + 1``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.regret._index import counts_at_least_one, index_policy


def ocucb_index(
    stats: arms.ArmStats,
    n: ArrayLike,
    horizon: ArrayLike,
    alpha: ArrayLike,
    psi: ArrayLike,
) -> Array:
    """``mean_j + sqrt((alpha / z_j) max(ln(psi T / (n + 1)), 0))``."""
    z = counts_at_least_one(stats)
    t = (jnp.asarray(n) + 1).astype(z.dtype)
    log_term = jnp.maximum(jnp.log(psi * horizon / t), 0.0)
    return arms.mean(stats) + jnp.sqrt(alpha / z * log_term)


@registry.policy("ocucb")
def ocucb(
    num_arms: int,
    *,
    horizon: ArrayLike,
    alpha: ArrayLike = 3.0,
    psi: ArrayLike = 2.0,
    tie_break: str = "random",
) -> Policy:
    """Optimally Confident UCB (the 2015 horizon-dependent version).

    Index (Lattimore 2015, Algorithm 1): ``mean_j + sqrt((alpha / z_j) * ln(psi * T /
    t))``, ``t = n + 1``.
    For ``t <= T`` and ``psi >= 1`` the log is ``>= 0``; it is clamped at 0 so that a
    run past its horizon stays NaN-free (the clamp never binds for ``t <= psi T``).

    Args:
      num_arms: static K_max.
      horizon: T (traced; it fixes no shape).
      alpha: default 3 (Lattimore's experiments); the EUCBV-paper preset is 2.
      psi: default 2; must be >= 1.
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the empirical best real arm.

    References:
      Lattimore. Optimally confident UCB: improved regret for finite-armed bandits.
      arXiv:1507.07880, 2015.
    """
    _validate.in_range("horizon", horizon, 1.0)
    _validate.in_range("alpha", alpha, 0.0)
    _validate.in_range("psi", psi, 1.0)

    def index_fn(stats, n, num_real):
        del num_real
        return ocucb_index(stats, n, horizon, alpha, psi)

    return index_policy(num_arms, index_fn, tie_break, variance=False)
