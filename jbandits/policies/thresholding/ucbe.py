"""UCBE for thresholds (UCB-E of Audibert, Bubeck, Munos, COLT 2010, as adapted by
Locatelli et al., ICML 2016, and used by Mukherjee et al., IJCAI 2017).

After one pull per arm, pull ``argmin_i |mean_i - tau| - sqrt(a / n_i)``. The
exploration parameter ``a`` is an explicit (traced) input; :func:`ucbe_oracle_a`
computes the oracle value from an instance on the host.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import gap_index_policy

VARIANTS = ("paper", "authors_code")


@registry.policy("ucbe")
def ucbe(
    num_arms: int,
    *,
    threshold: ArrayLike,
    a: ArrayLike,
    variant: str = "paper",
    tie_break: str = "first",
) -> Policy:
    """UCB-E adapted to the thresholding bandit.

    Args:
      num_arms: static K.
      threshold: tau (traced).
      a: exploration parameter > 0 (traced), e.g. :func:`ucbe_oracle_a`.
      variant: static, "paper" or "authors_code". The policy is the same for both (the
        authors' code differs only in how a was computed, see :func:`ucbe_oracle_a`;
        its initialisation bug, means not updated during the first K pulls, is not
        copied).
      tie_break: static, "first" (lowest index) or "random" (see :mod:`jbandits.policies`).

    Output: labels ``1{mean_i >= tau}``.

    References:
      Audibert, Bubeck, Munos. Best arm identification in multi-armed bandits. COLT
      2010. Mukherjee et al. IJCAI 2017 (thresholding adaptation).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("variant", variant, VARIANTS)
    _validate.finite("threshold", threshold)
    _validate.in_range("a", a, 0.0, low_open=True)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)

    def width(stats):
        return jnp.sqrt(a / jnp.maximum(stats.counts, 1.0))

    return gap_index_policy(
        num_arms, threshold, width, tie_break=tie_break, variance=False
    )
