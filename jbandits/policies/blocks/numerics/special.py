"""Elementwise special functions: the standard normal upper quantile,
``ln(1 + e) - e`` without cancellation (:func:`log1pmx`) and the error of
Stirling's formula for ``ln Gamma`` (:func:`stirling_error`), accurate in float32
where ``gammaln`` minus Stirling's formula cancels.
"""

from __future__ import annotations

import decimal

import jax.numpy as jnp
from jax.scipy.special import ndtri

from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks.numerics.iterations import _float

# B_2k / (2k (2k - 1)), k = 1..8: Stirling series of ln Gamma
_STIRLING = (
    1 / 12,
    -1 / 360,
    1 / 1260,
    -1 / 1680,
    1 / 1188,
    -691 / 360360,
    1 / 156,
    -3617 / 122400,
)


def normal_upper_quantile(alpha: ArrayLike) -> Array:
    """``z`` with ``P(Z > z) = alpha`` for ``Z ~ N(0, 1)``: ``-ndtri(alpha)``.

    ``alpha = 1`` gives ``-inf`` and ``alpha = 0`` gives ``+inf``.
    """
    return -ndtri(jnp.asarray(alpha, _float(alpha)))


def log1pmx(e: ArrayLike) -> Array:
    """``ln(1 + e) - e`` for ``e >= -1``, without cancellation for small ``|e|``.

    For ``|e| <= 1/4``: with ``s = e / (2 + e)``, ``ln(1 + e) = 2 atanh(s)`` and
    ``e = 2 s / (1 - s)``, so ``ln(1 + e) - e = 2 s^3 (1/3 + s^2/5 + ... + s^8/11)
    - 2 s^2 / (1 - s)``, the sum to ``s^8/11`` in float32 and ``s^18/21`` in float64
    (``|s| <= 1/7``: truncation ``< 1e-10`` / ``< 1e-17`` relative).
    """
    e = jnp.asarray(e, _float(e))
    small = jnp.abs(e) <= 0.25
    s = jnp.where(small, e, 0.0)
    s = s / (2.0 + s)
    s2 = s * s
    terms = 10 if e.dtype == jnp.float64 else 5
    series = jnp.zeros_like(s)
    for k in range(terms - 1, -1, -1):  # Horner: sum_k s^(2k) / (2k + 3)
        series = 1.0 / (2 * k + 3) + s2 * series
    near = 2.0 * s * s2 * series - 2.0 * s2 / (1.0 - s)
    far = jnp.log1p(jnp.where(small, 0.5, e)) - e
    return jnp.where(small, near, far)


def _stirling_shifts(z: Array, count: int) -> Array:
    """``se(z) - se(z + count) = sum_{k < count} (w_k + 1/2) ln(1 + 1/w_k) - 1``,
    ``w_k = z + k``, for ``z > 0``, summed from the smallest term.

    For ``w >= 1``, with ``s = 1 / (2 w + 1)``: ``ln(1 + 1/w) = 2 atanh(s)`` and
    ``w + 1/2 = 1 / (2 s)``, so a term is ``sum_{j >= 1} s^(2j) / (2j + 1)`` (``s <= 1/3``:
    8 terms in float32, 16 in float64, truncation ``< 1e-9`` / ``< 1e-17`` relative),
    free of the cancellation of the direct form, which serves ``0 < w < 1`` (only
    ``w_0`` can be). The terms
    are one array with a trailing axis of ``count`` (one kernel each for the
    reciprocal and the series, where separate terms would cost two each on XLA:CPU).
    """
    w = z[..., None] + jnp.arange(count, dtype=z.dtype)
    s = 1.0 / (2.0 * w + 1.0)
    s2 = s * s
    terms = 16 if z.dtype == jnp.float64 else 8
    series = jnp.zeros_like(s)
    for j in range(terms, 0, -1):  # Horner: sum_j s^(2j) / (2j + 1)
        series = s2 * (1.0 / (2 * j + 1) + series)
    total = series[..., count - 1]
    for k in range(count - 2, 0, -1):
        total = total + series[..., k]
    # only the first term can have w < 1
    small = z < 1.0
    direct = (z + 0.5) * jnp.log1p(1.0 / jnp.where(small, z, 1.0)) - 1.0
    total = total + jnp.where(small, direct, series[..., 0])
    return total


def _stirling_table(count: int) -> tuple[float, ...]:
    """``se(n)`` for ``n = 1 .. count``, from ``ln (n - 1)!`` in 60-digit decimals."""
    with decimal.localcontext(decimal.Context(prec=60)):  # (prec= needs 3.11)
        pi = decimal.Decimal(  # 60 digits
            "3.14159265358979323846264338327950288419716939937510582097494"
        )
        half_log_2pi = (2 * pi).ln() / 2
        out, log_fact = [], decimal.Decimal(0)  # log_fact = ln (n - 1)!
        for n in map(decimal.Decimal, range(1, count + 1)):
            out.append(
                float(
                    log_fact - (n - decimal.Decimal("0.5")) * n.ln() + n - half_log_2pi
                )
            )
            log_fact += n.ln()
    return tuple(out)


_STIRLING_SMALL = _stirling_table(9)  # se(1) .. se(9)


def stirling_error(z: ArrayLike, *, integer: bool = False) -> Array:
    """``ln Gamma(z) - [(z - 1/2) ln z - z + ln(2 pi) / 2]`` for ``z > 0``.

    Asymptotic series ``sum_k B_2k / (2k (2k - 1) z^(2k-1))``, 8 terms, for
    ``z >= 10`` (next term ``< 1e-17``). Below 10: the series at ``z + 10`` plus the
    ten differences ``se(w) - se(w + 1)``, ``w = z, ..., z + 9``
    (:func:`_stirling_shifts`; for ``w >= 1`` a positive series, so float32 keeps
    ~1e-8 absolute where ``gammaln`` minus Stirling's formula cancels to ~3e-7).
    With ``integer=True`` (static: every ``z`` is a whole number ``>= 1``, such as
    the shapes of a Beta posterior on binary rewards) the values below 10 come from
    a table of ``se(1) .. se(9)`` computed in 60-digit decimals and rounded once,
    without the shifts (~30 of the ~40 reciprocals and series of a value).
    """
    z = jnp.asarray(z, _float(z))
    big = z >= 10.0
    r = 1.0 / jnp.where(big, z, z + 10.0)
    r2 = r * r
    series = jnp.zeros_like(r)
    for coef in reversed(_STIRLING):
        series = coef + r2 * series
    series = r * series
    if integer:
        small = jnp.zeros_like(z)
        for n, value in enumerate(_STIRLING_SMALL, start=1):
            small = jnp.where(z == n, value, small)
        return jnp.where(big, series, small)
    shifts = _stirling_shifts(jnp.where(big, 10.0, z), 10)
    return jnp.where(big, series, series + shifts)
