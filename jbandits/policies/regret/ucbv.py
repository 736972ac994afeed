"""UCB-V (Audibert, Munos, Szepesvari, Theoretical Computer Science 2009).

After one pull per arm, pull the arm maximising
``mean_j + sqrt(2 v_j E / z_j) + c 3 b E / z_j`` with ``E = zeta ln(t)``, ``t = n + 1``
and ``v_j`` the biased (1/z) empirical variance.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.regret._index import counts_at_least_one, index_policy


def ucbv_index(
    stats: arms.ArmStats, n: ArrayLike, zeta: ArrayLike, c: ArrayLike, b: ArrayLike
) -> Array:
    """``mean_j + sqrt(2 v_j E / z_j) + c 3 b E / z_j`` with ``E = zeta ln(n + 1)``."""
    z = counts_at_least_one(stats)
    v = arms.var_biased(stats)
    e = zeta * jnp.log((jnp.asarray(n) + 1).astype(z.dtype))
    return arms.mean(stats) + jnp.sqrt(2.0 * v * e / z) + c * 3.0 * b * e / z


@registry.policy("ucbv")
def ucbv(
    num_arms: int,
    *,
    zeta: ArrayLike = 1.2,
    c: ArrayLike = 1.0,
    b: ArrayLike = 1.0,
    tie_break: str = "random",
) -> Policy:
    """UCB-V.

    Index (Audibert et al. 2009, Section 2): ``B_j = mean_j + sqrt(2 v_j E / z_j) + c *
    3 * b * E / z_j`` with ``E = zeta * ln(n + 1)`` (``n`` completed pulls) and ``v_j =
    M2_j / z_j`` (Welford, biased: 0 after one sample). Rewards are not clipped.

    Args:
      num_arms: static K_max.
      zeta: exploration exponent (traced), default 1.2 (theory needs zeta > 1). The
        EUCBV-paper preset is ``zeta=1, c=1/3`` (the experiments of Mukherjee et al.,
        AAAI 2018).
      c: weight of the linear term (traced), default 1.
      b: reward range [0, b] (traced), default 1.
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the empirical best real arm.

    References:
      Audibert, Munos, Szepesvari. Exploration-exploitation tradeoff using variance
      estimates in multi-armed bandits. Theoretical Computer Science 410(19), 2009.
    """
    _validate.in_range("zeta", zeta, 0.0)
    _validate.in_range("c", c, 0.0)
    _validate.in_range("b", b, 0.0, low_open=True)

    def index_fn(stats, n, num_real):
        del num_real
        return ucbv_index(stats, n, zeta, c, b)

    return index_policy(num_arms, index_fn, tie_break)
