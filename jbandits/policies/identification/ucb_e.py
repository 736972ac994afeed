"""UCB-E (Audibert, Bubeck, Munos, COLT 2010), fixed-budget best-arm identification.

After one pull per arm (the index is ``+inf`` for unpulled arms), pull
``argmax_i B_i`` with ``B_i = mean_i + sqrt(a / n_i)``; output ``argmax_i mean_i``.
The exploration parameter ``a`` is oracle-tuned from the budget and the complexity
``H1`` of the true BAI gaps (:func:`ucb_e_oracle_a`).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import best_arm_index_policy


def ucb_e_index(stats: arms.ArmStats, a: ArrayLike) -> Array:
    """B_i = mean_i + sqrt(a / n_i) (``+inf`` for n_i = 0)."""
    n = stats.counts
    bonus = jnp.sqrt(a / jnp.maximum(n, 1.0))
    return jnp.where(n > 0, arms.mean(stats) + bonus, jnp.inf)


@registry.policy("ucb_e")
def ucb_e(num_arms: int, *, a: ArrayLike, tie_break: str = "first") -> Policy:
    """UCB-E for best-arm identification with a fixed budget.

    Args:
      num_arms: static K (including padded arms).
      a: exploration parameter a > 0 (traced); see :func:`ucb_e_oracle_a`.
      tie_break: static, "first" (lowest index; default) or "random" (see :mod:`jbandits.policies`).

    Output: the best arm ``argmax_i mean_i`` over pulled real arms (first on ties).

    References:
      Audibert, Bubeck, Munos. Best arm identification in multi-armed bandits. COLT
      2010.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.in_range("a", a, 0.0, low_open=True)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)

    return best_arm_index_policy(
        num_arms,
        lambda stats, mask: ucb_e_index(stats, a),
        "identification",
        tie_break=tie_break,
        variance=False,
        local=True,
    )
