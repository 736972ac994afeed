"""APT (Locatelli, Gutzeit, Carpentier, ICML 2016), as used by Mukherjee et al.
(IJCAI 2017) and Tao et al. (NeurIPS 2019).

After one pull per arm, pull ``argmin_i sqrt(n_i) * (|mean_i - tau| + eps)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import threshold_index_policy


def apt_index(stats: arms.ArmStats, threshold: ArrayLike, epsilon: ArrayLike) -> Array:
    """B_i = sqrt(n_i) * (|mean_i - tau| + eps)."""
    gap = jnp.abs(arms.mean(stats) - threshold) + epsilon
    return jnp.sqrt(stats.counts) * gap


@registry.policy("apt", optional=("epsilon",))
def apt(
    num_arms: int,
    *,
    threshold: ArrayLike,
    epsilon: ArrayLike | None = None,
    tie_break: str = "first",
    variant: str = "paper",
    execution: Execution | None = None,
) -> Policy:
    """Anytime Parameter-free Thresholding.

    Args:
      num_arms: static K.
      threshold: tau (traced).
      epsilon: margin eps >= 0 (traced). Mukherjee et al. (IJCAI 2017) use 0.05; Tao et
        al. (NeurIPS 2019) sweep {0, .025, .05, .1}.
        Default: 0 (``variant="paper"``) or 0.01 (``"authors_code"``).
      tie_break: static, "first" (lowest index) or "random" (see :mod:`jbandits.policies`).
      variant: static, "paper" or "authors_code"; only the default epsilon differs
        (the AugUCB authors' experiment code calls APT with eps = 0.01).
      execution: static :class:`~jbandits.core.execution.Execution`: how the step
        compiles (``one_hot_arms``: the GPU form), never which arms it pulls.
        Default: :meth:`Execution.default() <jbandits.core.execution.Execution.default>`.

    Output: labels ``1{mean_i >= tau}``.

    References:
      Locatelli, Gutzeit, Carpentier. An optimal algorithm for the thresholding bandit
      problem. ICML 2016.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.finite("threshold", threshold)
    variant = _validate.choice("variant", variant, ("paper", "authors_code"))
    epsilon = numbers.given(epsilon, 0.01 if variant == "authors_code" else 0.0)
    _validate.in_range("epsilon", epsilon, 0.0)

    def index(stats, mask):
        return apt_index(stats, threshold, epsilon)

    return threshold_index_policy(
        num_arms, index, threshold, tie_break=tie_break, variance=False,
        execution=Execution.resolve(execution),
    )  # fmt: skip
