"""UCB1 (Auer, Cesa-Bianchi, Fischer, Machine Learning 2002).

After one pull per arm, pull ``argmax_j mean_j + sqrt(alpha * ln(n) / z_j)`` with ``n``
the number of completed pulls.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.regret._index import counts_at_least_one, index_policy


def ucb1_index(stats: arms.ArmStats, n: ArrayLike, alpha: ArrayLike) -> Array:
    """``mean_j + sqrt(alpha ln(n) / z_j)`` (``z_j`` guarded by ``max(z_j, 1)``)."""
    z = counts_at_least_one(stats)
    log_n = jnp.log(jnp.maximum(n, 1).astype(z.dtype))
    return arms.mean(stats) + jnp.sqrt(alpha * log_n / z)


@registry.policy("ucb1")
def ucb1(
    num_arms: int,
    *,
    alpha: ArrayLike = 2.0,
    tie_break: str = "random",
    execution: Execution | None = None,
) -> Policy:
    """UCB1.

    Index (Auer et al. 2002, Fig. 1): ``mean_j + sqrt(alpha * ln(n) / z_j)``, ``n`` =
    completed pulls (at the first index decision ``n = K >= 2``, so ``ln n > 0``).

    Args:
      num_arms: static K_max (padded arms included).
      alpha: exploration constant (traced), default 2 (the paper's ``sqrt(2 ln n / z)``);
        ``alpha = 0`` is the greedy policy.
      tie_break: static, "random" (default) or "first" (lowest index).
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Returns:
      A regret :class:`~jbandits.core.types.Policy`; ``output`` is the real arm with the
      largest empirical mean (lowest index on ties).

    Examples:
      >>> import jax, jax.numpy as jnp
      >>> from jbandits.policies.regret import ucb1
      >>> policy = ucb1(num_arms=3)
      >>> int(policy.init(jax.random.key(0), jnp.ones(3, bool)).arm)
      0

    References:
      Auer, Cesa-Bianchi, Fischer. Finite-time analysis of the multiarmed bandit
      problem. Machine Learning 47, 2002.
    """
    _validate.in_range("alpha", alpha, 0.0)

    def index_fn(stats, n, num_real):
        del num_real
        return ucb1_index(stats, n, alpha)

    return index_policy(
        num_arms, index_fn, tie_break, variance=False,
        execution=Execution.resolve(execution),
    )  # fmt: skip
