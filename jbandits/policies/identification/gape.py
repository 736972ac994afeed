"""GapE (Gabillon, Ghavamzadeh, Lazaric, Bubeck, NIPS 2011), single bandit, fixed budget.

After one pull per arm, pull ``argmax_k B_k`` with

    Delta_k = mean_k - max_{j != k} mean_j,    B_k = -|Delta_k| + b sqrt(a / n_k),

and output ``argmax_k mean_k``. ``a`` and the reward range ``b`` are oracle-tuned as in
Lalitha et al. (UAI 2023) (:func:`gape_oracle_params`).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import best_arm_index_policy


def empirical_gaps(stats: arms.ArmStats, arm_mask: Array) -> Array:
    """``Delta_k = mean_k - max_{j != k} mean_j`` over real arms (Gabillon et al., NIPS
    2011).

    With ``j1`` the first arg-max and ``v1 >= v2`` the two largest means,
    ``max_{j != k} mean_j`` is ``v2`` for ``k = j1`` and ``v1`` otherwise.
    """
    mu = arms.mean(stats)
    idx = jnp.arange(mu.shape[-1])
    j1 = arms.argmax_masked(mu, arm_mask)
    v1 = mu[j1]
    v2 = jnp.max(jnp.where(arm_mask & (idx != j1), mu, -jnp.inf))
    return mu - jnp.where(idx == j1, v2, v1)


def gape_index(
    stats: arms.ArmStats, arm_mask: Array, a: ArrayLike, b: ArrayLike
) -> Array:
    """B_k = -|Delta_k| + b sqrt(a / n_k) (n_k >= 1 after the initial pulls).

    ``b sqrt(a / n_k)`` is evaluated as ``sqrt(a (b b) / n_k)`` so that no product
    feeds the sum: XLA on CPU would contract it into an FMA, rounded differently from
    the plain-Python reference (and possibly differently between two fusions).
    """
    n = jnp.maximum(stats.counts, 1.0)
    return -jnp.abs(empirical_gaps(stats, arm_mask)) + jnp.sqrt(a * (b * b) / n)


@registry.policy("gape")
def gape(
    num_arms: int, *, a: ArrayLike, b: ArrayLike = 1.0, tie_break: str = "first"
) -> Policy:
    """GapE for best-arm identification in one bandit with a fixed budget.

    Args:
      num_arms: static K (including padded arms).
      a: exploration parameter a > 0 (traced); see :func:`gape_oracle_params`.
      b: reward range b > 0 (traced; rewards in [0, b]).
      tie_break: static, "first" (lowest index; default) or "random" (see :mod:`jbandits.policies`).

    Output: the best arm ``argmax_k mean_k`` over pulled real arms (first on ties).

    References:
      Gabillon, Ghavamzadeh, Lazaric, Bubeck. Multi-bandit best arm identification.
      NIPS 2011. Lalitha et al. Fixed-budget best-arm identification with
      heterogeneous reward variances. UAI 2023 (tuning).
    """
    return gap_policy(num_arms, gape_index, a, b, tie_break, variance=False)


def gap_policy(
    num_arms, index, a, b, tie_break, passes: int = 1, variance: bool = True
) -> Policy:
    """A GapE-family policy: ``passes`` round-robin pulls per real arm, then
    ``argmax_k index(stats, arm_mask, a, b)``; output the best empirical arm.
    ``variance=False``: the index reads no variance (no second moment is kept)."""
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.in_range("a", a, 0.0, low_open=True)
    _validate.in_range("b", b, 0.0, low_open=True)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    return best_arm_index_policy(
        num_arms,
        lambda stats, mask: index(stats, mask, a, b),
        "identification",
        passes=passes,
        tie_break=tie_break,
        variance=variance,
    )
