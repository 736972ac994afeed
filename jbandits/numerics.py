"""Fixed-iteration numerics shared by the KL/Bayesian regret policies (spec §3).

Everything here is elementwise (vectorised over arms), branch-free and runs a
**constant** number of iterations, so it compiles to one fixed-shape loop under
``jit``/``vmap``/``scan``:

* :func:`kl_bernoulli`, :func:`kl_gaussian`: KL divergences between two Bernoulli /
  two equal-variance Gaussian laws, written with ``xlogy`` so that ``p in {0, 1}`` is
  exact (spec §2.10).
* :func:`klucb_bernoulli`: ``max{q : kl(mu, q) <= d}`` by bisection on
  ``[mu, min(1, mu + sqrt(d / 2))]`` (Pinsker bound; spec §3.1).
* :func:`klucb_gaussian`: the closed form ``mu + sqrt(2 sigma^2 d)``.
* :func:`beta_upper_quantile`: the ``x`` with ``P(X > x) = alpha`` for
  ``X ~ Beta(a, b)``, by bisection on ``I_{1-x}(b, a)`` (spec §3.2). Working with the
  tail ``alpha`` avoids forming ``1 - alpha`` in float32.
* :func:`normal_upper_quantile`: ``z_alpha = -ndtri(alpha)`` (spec §3.3).

Iteration counts default to the spec's accuracy-driven values, chosen from the dtype
of the inputs: KL-UCB 24 (float32) / 50 (float64), Beta quantile 30 / 50. The
starting bracket has width <= 1, so after ``k`` halvings the midpoint is within
``2^-(k+1)`` of the root (KL-UCB: ``<= 3e-8`` at 24 iterations; Beta: ``<= 5e-10`` at
30 iterations, plus the accuracy of ``betainc``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import betainc, ndtri, xlogy

from jbandits.types import Array, ArrayLike

KLUCB_ITERS = {"float32": 24, "float64": 50}
BETA_ITERS = {"float32": 30, "float64": 50}


def _float(*xs: ArrayLike) -> jnp.dtype:
    return jnp.result_type(float, *xs)


def _iters(table: dict, dtype, num_iters: int | None) -> int:
    if num_iters is not None:
        return int(num_iters)
    return table["float64" if jnp.dtype(dtype) == jnp.float64 else "float32"]


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


def beta_upper_quantile(
    a: ArrayLike, b: ArrayLike, alpha: ArrayLike, num_iters: int | None = None
) -> Array:
    """``x`` with ``P(X > x) = alpha`` for ``X ~ Beta(a, b)``, by bisection on ``[0, 1]``.

    The tail ``P(X > x) = I_{1-x}(b, a)`` decreases in ``x``; each step keeps the half
    whose ends bracket ``alpha``. ``alpha >= 1`` converges to 0, ``alpha <= 0`` to 1.

    Args:
      a, b: Beta parameters (``> 0``), broadcast together with ``alpha``.
      alpha: upper-tail probability (e.g. ``1 / t`` for Bayes-UCB).
      num_iters: static trip count; default 30 (float32) / 50 (float64).

    Returns:
      The midpoint of the final bracket.
    """
    dtype = _float(a, b, alpha)
    a, b, alpha = (jnp.asarray(x, dtype) for x in (a, b, alpha))
    a, b, alpha = jnp.broadcast_arrays(a, b, alpha)
    lo, hi = jnp.zeros_like(a), jnp.ones_like(a)

    def body(_, bracket):
        lo, hi = bracket
        mid = (lo + hi) / 2.0
        above = betainc(b, a, 1.0 - mid) > alpha  # tail at mid still above alpha
        return jnp.where(above, mid, lo), jnp.where(above, hi, mid)

    lo, hi = jax.lax.fori_loop(0, _iters(BETA_ITERS, dtype, num_iters), body, (lo, hi))
    return (lo + hi) / 2.0


def normal_upper_quantile(alpha: ArrayLike) -> Array:
    """``z`` with ``P(Z > z) = alpha`` for ``Z ~ N(0, 1)``: ``-ndtri(alpha)``.

    ``alpha = 1`` gives ``-inf`` and ``alpha = 0`` gives ``+inf``.
    """
    return -ndtri(jnp.asarray(alpha, _float(alpha)))
