"""Beta tails and quantiles: the Bayes-UCB index of a Beta posterior.

* :func:`beta_upper_quantile`: the ``x`` with ``P(X > x) = alpha`` for
  ``X ~ Beta(a, b)``, by bisection on ``I_{1-x}(b, a)`` (the Bayes-UCB index of
  Kaufmann, Cappé, Garivier, AISTATS 2012, Algorithm 1, Beta posterior). Working with
  the tail ``alpha`` avoids forming ``1 - alpha`` in float32.
* :func:`beta_quantile_newton`: the same quantile, warm-started
  from a previous point: fixed Newton steps on ``ln P(X > x)`` in ``ln(1 - x)``, the
  tail from a fixed-length continued fraction (:func:`beta_sf`) with a Stirling-form
  prefactor (:func:`beta_log_kernel`; accurate in float32 for counts ~6e4, where
  ``betainc`` is off by up to 8e-5 in the quantile), then a snap to the dyadic grid
  that the bisection would return.
* :func:`beta_root_ceiling`, :func:`beta_sf_after_pull` (used by Bayes-UCB's lazily
  certified cells): a grid point above the quantile from the tangent of the concave
  ``ln P(X > x)`` in ``ln(1 - x)``, and the tail after one more success or failure by
  the recurrences of ``I_x(a, b)`` (DLMF 8.17.20-21).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.scipy.special import betainc

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks.numerics.iterations import (
    BETA_CF_ITERS,
    BETA_GRID_BITS,
    BETA_ITERS,
    BETA_NEWTON,
    _float,
    _iters,
)
from jbandits.policies.blocks.numerics.special import log1pmx, stirling_error

_HALF_LOG_2PI = 0.9189385332046727


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


def beta_log_norm(a: ArrayLike, b: ArrayLike, *, integer: bool = False) -> Array:
    """The ``x``-free part of :func:`beta_log_kernel` (compute once per ``(a, b)``).

    ``integer`` (static): ``a`` and ``b`` are whole numbers (:func:`stirling_error`).
    """
    dtype = _float(a, b)
    a, b = jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype))
    # one evaluation for the three
    se = stirling_error(jnp.stack([a, b, a + b]), integer=integer)
    return 0.5 * jnp.log(a * b / (a + b)) - _HALF_LOG_2PI - (se[0] + se[1] - se[2])


def beta_log_kernel(a: Array, b: Array, x: Array, log_norm: Array) -> Array:
    """``ln[x^a (1 - x)^b / B(a, b)]`` without large cancelling terms.

    With ``n = a + b`` and ``d = n x - a = b - n (1 - x)`` (formed from the smaller of
    ``x``, ``1 - x``), ``e1 = d / a``, ``e2 = -d / b`` (``a e1 + b e2 = 0``), it equals
    ``a log1pmx(e1) + b log1pmx(e2) + log_norm`` (Stirling's formula for
    ``B(a, b)``); float32 keeps ~1e-5 relative accuracy for ``a, b`` up to ``1e5``,
    where ``gammaln(a + b)`` alone is off by ``~0.05``.
    """
    n = a + b
    d = jnp.where(x > 0.5, b - n * (1.0 - x), n * x - a)
    return a * log1pmx(d / a) + b * log1pmx(-d / b) + log_norm


def _betacf(a: Array, b: Array, x: Array, num_terms: int) -> Array:
    """Backward-evaluated continued fraction (DLMF 8.17.22), unrolled."""
    t = jnp.zeros_like(x)
    apb = a + b
    for m in range(num_terms, 0, -1):
        t = -(a + m) * (apb + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0) * (1.0 + t))
        t = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m) * (1.0 + t))
    t = -apb * x / ((a + 1.0) * (1.0 + t))
    return 1.0 / (1.0 + t)


def beta_sf(
    a: Array, b: Array, x: Array, log_norm: Array, num_terms: int
) -> tuple[Array, Array]:
    """``(ln P(X > x), P(X > x) / pdf(x))`` for ``X ~ Beta(a, b)``, fixed cost.

    ``P(X > x) = I_{1-x}(b, a)`` from its continued fraction (``num_terms`` Lentz
    steps, each two partial fractions) where that converges fast
    (``1 - x < (b + 1)/(a + b + 2)``, the upper tail), else ``1 - I_x(a, b)``. The
    prefactor comes from :func:`beta_log_kernel`; in the upper tail the logarithm is
    formed as ``ln kernel + ln cf - ln b`` (no underflow far in the tail). The ratio
    (Mills ratio) is the Newton step scale of :func:`beta_quantile_newton`.
    """
    y = 1.0 - x
    direct = y < (b + 1.0) / (a + b + 2.0)
    p = jnp.where(direct, b, a)
    cf = _betacf(p, jnp.where(direct, a, b), jnp.where(direct, y, x), num_terms)
    log_kernel = beta_log_kernel(a, b, x, log_norm)
    kernel = jnp.exp(log_kernel)
    upper = 1.0 - kernel * cf / p
    log_tail = jnp.where(
        direct, log_kernel + jnp.log(cf / p), jnp.log(jnp.where(direct, 1.0, upper))
    )
    ratio = jnp.where(direct, cf * x * y / p, upper * x * y / kernel)
    return log_tail, ratio


def beta_newton_step(
    x: Array, log_tail: Array, ratio: Array, log_alpha: Array
) -> Array:
    """One Newton step for ``ln P(X > x) = ln alpha`` in ``w = ln(1 - x)``.

    ``ln P(X > x)`` is concave and increasing in ``w`` (``ln(1 - X)`` has a
    log-concave density for ``a, b >= 1``), so the step never leaves ``(0, 1)``
    and, after the first step, approaches the root monotonically from above in
    ``x``. ``dw = -(ln tail - ln alpha) ratio / (1 - x)``. Where that is not finite
    (zero density or zero tail: ``x in {0, 1}``, or ``x`` deep in a tail) the step
    falls back to ``(1 + x) / 2`` when the root lies above ``x`` and ``x / 2`` below.
    """
    gap = log_tail - log_alpha
    u = 1.0 - x
    dw = -gap * ratio / u
    fallback = jnp.where(gap > 0, (1.0 + x) / 2.0, x / 2.0)
    x_new = jnp.where(jnp.isfinite(dw), 1.0 - u * jnp.exp(dw), fallback)
    return jnp.where(gap == 0, x, x_new)


def beta_halley_step(
    a: Array, b: Array, x: Array, log_tail: Array, ratio: Array, log_alpha: Array
) -> Array:
    """One Halley step for ``ln P(X > x) = ln alpha``, ``X ~ Beta(a, b)``, in
    ``w = ln(1 - x)``; :func:`beta_newton_step` where it is not finite or leaves
    ``(0, 1)``.

    With ``f(w) = ln P(X > x)``: ``f' = (1 - x) / ratio`` (``ratio`` the Mills ratio
    ``P(X > x) / pdf(x)``) and, from ``d ln pdf / dx = (a - 1) / x - (b - 1) / (1 - x)``,
    ``f'' = f' (b - (a - 1) (1 - x) / x - f')``. The step
    ``dw = -(f / f') / (1 - f f'' / (2 f'^2))`` (``f`` taken minus ``ln alpha``)
    converges cubically; it only chooses where to evaluate next (Bayes-UCB's pulled
    arm), so its rounding never decides a result.
    """
    gap = log_tail - log_alpha
    u = 1.0 - x
    f1 = u / ratio
    f2 = f1 * (b - (a - 1.0) * u / x - f1)
    dw = -gap / f1 / (1.0 - gap * f2 / (2.0 * f1 * f1))
    x_new = 1.0 - u * jnp.exp(dw)
    ok = jnp.isfinite(x_new) & (x_new > 0.0) & (x_new < 1.0)
    return jnp.where(ok, x_new, beta_newton_step(x, log_tail, ratio, log_alpha))


def beta_root_ceiling(
    x: Array, log_tail: Array, ratio: Array, log_alpha: Array, bits: int
) -> Array:
    """Smallest multiple ``U`` of ``2^-bits`` that the point ``x`` proves ``>= x*``.

    ``x*`` is the root of ``ln P(X > x) = ln alpha``, ``X ~ Beta(a, b)``, ``a, b >= 1``,
    and ``(log_tail, ratio)`` are :func:`beta_sf` at ``x``. ``ln P(X > x)`` is
    concave in ``w = ln(1 - x)`` (see :func:`beta_newton_step`), so its tangent at
    ``x`` lies above it and the tangent's root ``1 - (1 - x) exp(dw)`` is ``>= x*``
    whichever side of the root ``x`` lies on. ``1 - x`` at that root is shrunk by 4
    units in its last place (the rounding of the step) before it is floored to the
    grid; a step that is not finite bounds nothing (1). Where
    ``ln P(X > x) <= ln alpha`` the point itself is above the root:
    ``x* <= ceil(x)``.
    """
    scale = 2.0**bits
    gap = log_tail - log_alpha
    u = 1.0 - x
    dw = -gap * ratio / u
    u_root = u * jnp.exp(dw)
    u_root = u_root - 4.0 * jnp.finfo(u_root.dtype).eps * u_root
    tangent = jnp.where(jnp.isfinite(dw), 1.0 - jnp.floor(u_root * scale) / scale, 1.0)
    own = jnp.where(gap <= 0, jnp.ceil(x * scale) / scale, 1.0)
    return jnp.clip(jnp.minimum(tangent, own), 0.0, 1.0)


def beta_sf_after_pull(
    a: Array, b: Array, x: Array, log_tail: Array, ratio: Array, success: Array
) -> tuple[Array, Array]:
    """:func:`beta_sf` at ``x`` for ``Beta(a + 1, b)`` (``success``) or ``Beta(a, b + 1)``.

    From the values for ``Beta(a, b)`` by the recurrences of the regularised
    incomplete beta function (DLMF 8.17.20-21): with ``c = x (1 - x) / ratio``,
    ``P_{a+1,b}(X > x) = P (1 + c / a)`` and ``P_{a,b+1}(X > x) = P (1 - c / b)``;
    the densities differ by the factors ``x (a + b) / a`` and
    ``(1 - x) (a + b) / b``. Rounding grows where ``c / b`` nears 1, so the result
    only serves to choose where to evaluate next (Bayes-UCB's pulled arm).
    """
    xy = x * (1.0 - x)
    up_tail = log_tail + jnp.log1p(xy / (a * ratio))
    up_ratio = (ratio * a + xy) / (x * (a + b))
    down_tail = log_tail + jnp.log1p(-xy / (b * ratio))
    down_ratio = (ratio * b - xy) / ((1.0 - x) * (a + b))
    return (
        jnp.where(success, up_tail, down_tail),
        jnp.where(success, up_ratio, down_ratio),
    )


def beta_quantile_newton(
    a: ArrayLike,
    b: ArrayLike,
    alpha: ArrayLike,
    x: ArrayLike,
    log_tail: ArrayLike,
    ratio: ArrayLike,
    *,
    num_newton: int | None = None,
    grid_bits: int | None = None,
    num_terms: int | None = None,
) -> tuple[Array, tuple[Array, Array, Array]]:
    """Warm-started ``x`` with ``P(X > x) = alpha``, ``X ~ Beta(a, b)``, ``a, b >= 1``.

    Starts from a point ``x`` whose ``(log_tail, ratio) = beta_sf(a, b, x)`` are
    known (e.g. the previous call's snapped point, or ``(0, 0, inf)`` for any
    ``(a, b)``), takes ``num_newton`` Newton steps (:func:`beta_newton_step`; the
    first reuses ``(log_tail, ratio)``, each
    later one evaluates :func:`beta_sf` once), then snaps: ``g`` = the nearest
    multiple of ``2^-grid_bits``, one more ``beta_sf`` at ``g``, and the result is
    ``g + 2^-(grid_bits+1)`` when ``P(X > g) > alpha`` else ``g - 2^-(grid_bits+1)``
    (clipped to ``[2^-(bits+1), 1 - 2^-(bits+1)]``). Iterates are capped at the last
    grid point below 1, so a root closer to 1 than the grid gives ``1 - 2^-(bits+1)``. When the Newton iterate is within
    half a cell of the root this is exactly the midpoint that ``grid_bits`` bisection
    halvings of ``[0, 1]`` return, so equal posteriors reached along different warm
    starts give bit-identical quantiles.

    Returns:
      ``(quantile, (g, log_tail(g), ratio(g)))``: the second part is the warm start of
      the next call. Cost: ``num_newton`` evaluations of :func:`beta_sf`.
    """
    dtype = _float(a, b, alpha, x)
    a, b, alpha, x, log_tail, ratio = (
        jnp.asarray(v, dtype) for v in (a, b, alpha, x, log_tail, ratio)
    )
    a, b, alpha, x, log_tail, ratio = jnp.broadcast_arrays(
        a, b, alpha, x, log_tail, ratio
    )
    newton = _iters(BETA_NEWTON, dtype, num_newton)
    bits = _iters(BETA_GRID_BITS, dtype, grid_bits)
    terms = _iters(BETA_CF_ITERS, dtype, num_terms)
    log_norm = beta_log_norm(a, b)
    log_alpha = jnp.log(alpha)
    scale = 2.0**bits
    top = 1.0 - 1.0 / scale  # the last grid point below 1 (never stored: tail 0)
    for i in range(newton):
        if i > 0:
            log_tail, ratio = beta_sf(a, b, x, log_norm, terms)
        x = jnp.minimum(beta_newton_step(x, log_tail, ratio, log_alpha), top)
    g = jnp.clip(jnp.round(x * scale) / scale, 0.0, top)
    log_tail, ratio = beta_sf(a, b, g, log_norm, terms)
    half = 0.5 / scale
    above = log_tail > log_alpha
    q = jnp.clip(jnp.where(above, g + half, g - half), half, 1.0 - half)
    return q, (g, log_tail, ratio)
