"""KL-UCB, Bernoulli and Gaussian KL (Garivier and Cappe, COLT 2011).

After one pull of each real arm (round robin in index order), pull

    argmax_j u_j,   u_j = max{q : z_j kl(mu_j, q) <= ln(n) + c ln(ln(n))},

with ``n`` the number of completed pulls (the paper's ``t``) and ``z_j`` the
pulls of arm ``j``. In fixed-shape form ``d_j = max(ln n + c ln(max(ln n, 1)), 0) /
max(z_j, 1)`` and ``u_j = klucb(mu_j, d_j)``:

* ``kl="bernoulli"``: bisection on ``[mu, min(1, mu + sqrt(d/2))]`` with a constant
  trip count (24 float32 / 50 float64; :func:`jbandits.policies.blocks.numerics.klucb_bernoulli`).
  Rewards are assumed in ``[0, 1]`` (means outside it are clipped).
* ``kl="gauss"`` ("KL-UCB-Gauss"): ``kl = (p - q)^2 / (2 sigma2)``, closed form
  ``u = mu + sqrt(2 sigma2 d)``. With ``sigma2 = 1`` and ``c = 0`` this is UCB1's
  index with ``alpha = 2``.

The forced pulls and the arg-max come from the shared index-policy skeleton
(:mod:`jbandits.policies.regret._index`). The step key breaks exact ties among the maximal indices (``tie_break="random"``).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, numerics
from jbandits.policies.regret._index import index_policy

KLS = ("bernoulli", "gauss")


def exploration_level(n: ArrayLike, counts: Array, c: ArrayLike = 0.0) -> Array:
    """``d_j = max(ln n + c ln(max(ln n, 1)), 0) / max(z_j, 1)``."""
    log_n = jnp.log(jnp.maximum(jnp.asarray(n, counts.dtype), 1.0))
    level = jnp.maximum(log_n + c * jnp.log(jnp.maximum(log_n, 1.0)), 0.0)
    return level / jnp.maximum(counts, 1.0)


def klucb_index(
    stats: arms.ArmStats,
    n: ArrayLike,
    *,
    kl: str = "bernoulli",
    c: ArrayLike = 0.0,
    sigma2: ArrayLike = 1.0,
) -> Array:
    """``[K]`` KL-UCB indices after ``n`` completed pulls."""
    d = exploration_level(n, stats.counts, c)
    mu = arms.mean(stats)
    if kl == "bernoulli":
        return numerics.klucb_bernoulli(mu, d)
    return numerics.klucb_gaussian(mu, d, sigma2)


@registry.policy("klucb")
def klucb(
    num_arms: int,
    *,
    kl: str = "bernoulli",
    c: ArrayLike = 0.0,
    sigma2: ArrayLike = 1.0,
    tie_break: str = "random",
) -> Policy:
    """KL-UCB.

    Args:
      num_arms: static K_max (real arms are given by ``arm_mask`` at ``init``).
      kl: static, ``"bernoulli"`` (rewards in ``[0, 1]``) or ``"gauss"``.
      c: weight of ``ln ln n`` in the exploration level (traced, ``>= 0``); the paper
        uses ``c = 0`` in experiments and ``c = 3`` in its theorem.
      sigma2: Gaussian KL variance (traced, ``> 0``); ignored by ``"bernoulli"``.
        The default 1 is pymaBandits' ``klucbGauss`` default.
      tie_break: static, ``"random"`` (default) or ``"first"``: "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret :class:`~jbandits.core.types.Policy`; ``output`` is the empirical best arm.

    References:
      Garivier, Cappé. The KL-UCB algorithm for bounded stochastic bandits and
      beyond. COLT 2011 (arXiv:1102.2490).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("kl", kl, KLS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("c", c, 0.0)
    _validate.in_range("sigma2", sigma2, 0.0, low_open=True)

    def index_fn(stats, n, num_real):
        del num_real
        return klucb_index(stats, n, kl=kl, c=c, sigma2=sigma2)

    return index_policy(num_arms, index_fn, tie_break, variance=False)
