"""KL confidence bounds: upper and lower, Bernoulli by bisection, Gaussian in closed
form (Kaufmann & Kalyanakrishnan, COLT 2013, eqs. (4)-(5)).

For an arm with ``N`` pulls and empirical mean ``p``, at exploration rate ``beta``::

    u = max{q in [p, 1] : N d(p, q) <= beta}        (KK13 eq. (4))
    l = min{q in [0, p] : N d(p, q) <= beta}        (KK13 eq. (5))

Every function takes the *level* ``level = beta / N`` (the bound's radius in KL
units), elementwise over arms:

* :func:`kl_upper` / :func:`kl_lower` for ``family`` in :data:`FAMILIES`;
* :func:`kl_interval` gives both from ``(counts, beta)``.

Bernoulli (``d = kl``): the upper bound is
:func:`jbandits.policies.blocks.numerics.klucb_bernoulli` (bisection on
``[p, min(1, p + sqrt(level / 2))]``, Pinsker's inequality ``kl(p, q) >= 2 (p - q)^2``
bounding the root); the lower bound is the mirror bisection on
``[max(0, p - sqrt(level / 2)), p]``. Both run a fixed number of halvings
(:data:`jbandits.policies.blocks.numerics.KLUCB_ITERS`: 24 in float32, 50 in float64)
and return the midpoint of the final bracket; ``level = 0`` gives exactly ``p``,
``p = 0`` gives a lower bound of exactly 0 and ``p = 1`` an upper bound of exactly 1.
Means outside ``[0, 1]`` are clipped into it (as ``klucb_bernoulli``
does); negative levels count as 0.

Gaussian with known standard deviation sigma (``d(x, y) = (x - y)^2 / (2 sigma^2)``):
``p +- sqrt(2 sigma^2 level)``, evaluated as ``sqrt(2 * (sigma * sigma) * level)``.

Everything is branch-free and fixed-shape (jit / vmap / scan), works in float32 and
float64, and accepts traced ``level`` and ``sigma``; ``family`` is a static string.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks import numerics
from jbandits.policies.blocks.numerics import kl_bernoulli, klucb_bernoulli

FAMILIES = ("bernoulli", "gaussian")


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")


def _dtype(*xs: ArrayLike):
    return jnp.result_type(float, *xs)


def _iters(dtype, num_iters: int | None) -> int:
    return numerics._iters(numerics.KLUCB_ITERS, dtype, num_iters)


def _gauss_radius(level: Array, sigma: ArrayLike) -> Array:
    sigma = jnp.asarray(sigma, level.dtype)
    return jnp.sqrt(2.0 * (sigma * sigma) * level)


def kl_lower_bernoulli(
    mean: ArrayLike, level: ArrayLike, num_iters: int | None = None
) -> Array:
    """Bernoulli KL lower bound ``min{q in [0, mean] : kl(mean, q) <= level}``.

    Bisection on ``[max(0, mean - sqrt(level / 2)), mean]`` (Pinsker), ``num_iters``
    halvings (static; default 24 in float32 / 50 in float64), the midpoint of the
    final bracket returned. ``mean`` is clipped into ``[0, 1]``, ``level`` below 0
    counts as 0.
    """
    dtype = _dtype(mean, level)
    mean = jnp.clip(jnp.asarray(mean, dtype), 0.0, 1.0)
    level = jnp.maximum(jnp.asarray(level, dtype), 0.0)
    mean, level = jnp.broadcast_arrays(mean, level)
    lo = jnp.maximum(0.0, mean - jnp.sqrt(level / 2.0))
    hi = mean

    def body(_, bracket):
        lo, hi = bracket
        mid = (lo + hi) / 2.0
        too_far = kl_bernoulli(mean, mid) > level
        return jnp.where(too_far, mid, lo), jnp.where(too_far, hi, mid)

    lo, hi = jax.lax.fori_loop(0, _iters(dtype, num_iters), body, (lo, hi))
    return (lo + hi) / 2.0


def _kl_bound(upper: bool, family: str, mean, level, sigma, num_iters) -> Array:
    """:func:`kl_upper` (``upper``) or :func:`kl_lower`: one body, the side static."""
    _check_family(family)
    if family == "bernoulli":
        bisect = klucb_bernoulli if upper else kl_lower_bernoulli
        return bisect(mean, level, num_iters)
    dtype = _dtype(mean, level, sigma)
    level = jnp.maximum(jnp.asarray(level, dtype), 0.0)
    mean = jnp.asarray(mean, dtype)
    radius = _gauss_radius(level, sigma)
    return mean + radius if upper else mean - radius


def kl_upper(
    family: str,
    mean: ArrayLike,
    level: ArrayLike,
    sigma: ArrayLike = 1.0,
    num_iters: int | None = None,
) -> Array:
    """``max{q >= mean : d(mean, q) <= level}`` (KK13 eq. (4) with ``level = beta /
    N``); ``sigma`` is used by ``"gaussian"`` only."""
    return _kl_bound(True, family, mean, level, sigma, num_iters)


def kl_lower(family: str, mean, level, sigma=1.0, num_iters=None) -> Array:
    """``min{q <= mean : d(mean, q) <= level}`` (KK13 eq. (5)); the arguments (and
    their types) as :func:`kl_upper`'s."""
    return _kl_bound(False, family, mean, level, sigma, num_iters)


def kl_interval(
    family: str,
    means: ArrayLike,
    counts: ArrayLike,
    beta: ArrayLike,
    sigma: ArrayLike = 1.0,
    num_iters: int | None = None,
) -> tuple[Array, Array]:
    """``(lower, upper)``: KK13's ``l_a(t), u_a(t)`` for arms with ``counts`` pulls
    (arms never pulled count as one pull) at exploration rate ``beta``."""
    dtype = _dtype(means, counts, beta)
    level = jnp.asarray(beta, dtype) / jnp.maximum(jnp.asarray(counts, dtype), 1.0)
    return (
        kl_lower(family, means, level, sigma, num_iters),
        kl_upper(family, means, level, sigma, num_iters),
    )
