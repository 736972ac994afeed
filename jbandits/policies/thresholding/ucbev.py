"""UCBEV for thresholds (Mukherjee et al., IJCAI 2017, Section 4; GapE-V of Gabillon,
Ghavamzadeh, Lazaric, Bubeck, NIPS 2011).

Paper variant (our reading of Mukherjee et al., Section 4, "identical to UCBE"): two
pulls per arm, then pull ``argmin_i |mean_i - tau| - w_i``
with the empirical-Bernstein width ``w_i = sqrt(2 a s2_i / n_i) + 7 a b / (3 (n_i - 1))``
(s2 = unbiased sample variance). ``variant="authors_code"`` (the authors' experiment
code): one pull per arm, biased variance v and ``w_i = sqrt(2 a v_i / n_i) + 7 a b /
(3 n_i - 1)``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import gap_index_policy

VARIANTS = ("paper", "authors_code")


@registry.policy("ucbev")
def ucbev(
    num_arms: int,
    *,
    threshold: ArrayLike,
    a: ArrayLike,
    b: ArrayLike = 1.0,
    variant: str = "paper",
    tie_break: str = "first",
) -> Policy:
    """UCB-E with empirical-Bernstein widths (GapE-V style) for the thresholding bandit.

    Args:
      num_arms: static K.
      threshold: tau (traced).
      a: exploration parameter > 0 (traced), e.g. :func:`ucbev_oracle_a`.
      b: reward range (traced), default 1.
      variant: static, "paper" or "authors_code" (module docstring).
      tie_break: static, "first" (lowest index) or "random" (see :mod:`jbandits.policies`).

    Output: labels ``1{mean_i >= tau}``.

    References:
      Gabillon, Ghavamzadeh, Lazaric, Bubeck. Multi-bandit best arm identification.
      NIPS 2011. Mukherjee et al. IJCAI 2017 (thresholding adaptation).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    variant = _validate.choice("variant", variant, VARIANTS)
    _validate.finite("threshold", threshold)
    _validate.in_range("a", a, 0.0, low_open=True)
    _validate.in_range("b", b, 0.0, low_open=True)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    authors = variant == "authors_code"
    passes = 1 if authors else 2

    def width(stats):
        n = jnp.maximum(stats.counts, 1.0)
        if authors:
            var = arms.var_biased(stats)
            bias = 7.0 * a * b / (3.0 * n - 1.0)
        else:
            var = arms.var_unbiased(stats)
            bias = 7.0 * a * b / (3.0 * jnp.maximum(n - 1.0, 1.0))
        return jnp.sqrt(2.0 * a * var / n) + bias

    return gap_index_policy(
        num_arms, threshold, width, tie_break=tie_break, passes=passes
    )
