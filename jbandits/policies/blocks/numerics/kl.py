"""KL divergences and the KL-UCB bounds built on them.

* :func:`kl_bernoulli`, :func:`kl_gaussian`: KL divergences between two Bernoulli /
  two equal-variance Gaussian laws, written with ``xlogy`` so that ``p in {0, 1}`` is
  exact (0 log 0 = 0).
* :func:`klucb_bernoulli`: ``max{q : kl(mu, q) <= d}`` by bisection on
  ``[mu, min(1, mu + sqrt(d / 2))]`` (Pinsker's inequality kl(p, q) >= 2 (p - q)^2
  bounds the root; the KL-UCB index of Garivier and Cappé, COLT 2011).
* :func:`klucb_gaussian`: the closed form ``mu + sqrt(2 sigma^2 d)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import xlogy

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks.numerics.iterations import KLUCB_ITERS, _float, _iters


def kl_bernoulli(p: ArrayLike, q: ArrayLike) -> Array:
    """``kl(p, q) = p ln(p/q) + (1-p) ln((1-p)/(1-q))`` for ``p, q in [0, 1]``.

    Exact at ``p in {0, 1}`` (``0 ln 0 = 0``); ``+inf`` when ``q in {0, 1}`` and
    ``p != q``.
    """
    dtype = _float(p, q)
    p, q = jnp.asarray(p, dtype), jnp.asarray(q, dtype)
    return xlogy(p, p) - xlogy(p, q) + xlogy(1.0 - p, 1.0 - p) - xlogy(1.0 - p, 1.0 - q)


def kl_gaussian(p: ArrayLike, q: ArrayLike, sigma2: ArrayLike = 1.0) -> Array:
    """``(p - q)^2 / (2 sigma^2)``: KL between ``N(p, sigma^2)`` and ``N(q, sigma^2)``."""
    dtype = _float(p, q, sigma2)
    p, q = jnp.asarray(p, dtype), jnp.asarray(q, dtype)
    return (p - q) ** 2 / (2.0 * jnp.asarray(sigma2, dtype))


def klucb_bernoulli(mu: ArrayLike, d: ArrayLike, num_iters: int | None = None) -> Array:
    """Bernoulli KL-UCB bound ``max{q in [mu, 1] : kl(mu, q) <= d}`` by bisection.

    Args:
      mu: empirical means; values outside ``[0, 1]`` are clipped into it.
      d: exploration level per arm (``>= 0``), e.g. ``ln(n) / z``.
      num_iters: static trip count; default 24 (float32) / 50 (float64).

    Returns:
      The midpoint of the final bracket (as pymaBandits). ``mu = 1`` gives exactly 1;
      ``d = 0`` gives exactly ``mu``.
    """
    dtype = _float(mu, d)
    mu = jnp.clip(jnp.asarray(mu, dtype), 0.0, 1.0)
    d = jnp.maximum(jnp.asarray(d, dtype), 0.0)
    mu, d = jnp.broadcast_arrays(mu, d)
    lo = mu
    hi = jnp.minimum(1.0, mu + jnp.sqrt(d / 2.0))  # Pinsker: kl(p, q) >= 2 (p - q)^2

    def body(_, bracket):
        lo, hi = bracket
        mid = (lo + hi) / 2.0
        too_far = kl_bernoulli(mu, mid) > d
        return jnp.where(too_far, lo, mid), jnp.where(too_far, mid, hi)

    lo, hi = jax.lax.fori_loop(0, _iters(KLUCB_ITERS, dtype, num_iters), body, (lo, hi))
    return (lo + hi) / 2.0


def klucb_gaussian(mu: ArrayLike, d: ArrayLike, sigma2: ArrayLike = 1.0) -> Array:
    """Gaussian KL-UCB bound ``mu + sqrt(2 sigma^2 d)`` (closed form of the same max)."""
    dtype = _float(mu, d, sigma2)
    d = jnp.maximum(jnp.asarray(d, dtype), 0.0)
    return jnp.asarray(mu, dtype) + jnp.sqrt(2.0 * jnp.asarray(sigma2, dtype) * d)
