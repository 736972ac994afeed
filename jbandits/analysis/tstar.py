"""The characteristic time ``T*(mu)`` and the optimal proportions ``w*(mu)`` of
fixed-confidence best-arm identification (host, NumPy float64).

Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed Confidence", COLT
2016 (GK16), Theorem 1 and Sec. 2.2 (Lemmas 3-4, Theorem 5, Appendix A.2)::

    T*(mu)^-1 = sup_{w in simplex} inf_{lambda in Alt(mu)} sum_a w_a d(mu_a, lambda_a)
              = sup_w min_{a != 1} (w_1 + w_a) I_{w_1 / (w_1 + w_a)}(mu_1, mu_a)

With arm 1 the (unique) best, ``m_a(x) = (mu_1 + x mu_a) / (1 + x)`` and
``g_a(x) = d(mu_1, m_a(x)) + x d(mu_a, m_a(x))`` (increasing from ``[0, inf)`` onto
``[0, d(mu_1, mu_a))``), ``x_a = g_a^-1``::

    F(y) = sum_{a >= 2} d(mu_1, m_a(x_a(y))) / d(mu_a, m_a(x_a(y))),   F(y*) = 1
    w*_a = x_a(y*) / (1 + sum_b x_b(y*))   (x_1 = 1),   T* = (1 + sum_a x_a(y*)) / y*

``beta`` in ``(0, 1)`` gives the beta-optimal exponent of the top-two papers (Russo,
"Simple Bayesian Algorithms for Best-Arm Identification", Operations Research 68(6),
2020, Sec. 5 ``Gamma*_beta``; Shang, de Heide, Kaufmann, Menard & Valko, AISTATS 2020,
eq. (6)): the best arm's proportion is fixed to ``beta`` and the others equalise their
transportation costs ``(beta + w_a) I_{beta / (beta + w_a)}(mu_1, mu_a) = beta
g_a(w_a / beta)``; so ``w_a = beta x_a(y)`` with ``sum_{a >= 2} x_a(y) = (1 - beta) /
beta`` and ``Gamma*_beta = beta y``, ``T*_beta = 1 / (beta y)``.

Divergences: Gaussian ``d(x, y) = (x - y)^2 / (2 sigma^2)`` (so ``w*`` does not depend on
``sigma`` and ``T*`` scales as ``sigma^2``); Bernoulli ``kl(x, y)``, from ``x``, ``1 -
x``, ``y``, ``1 - y`` and ``x - y`` computed where each is accurate (``1 - m_a(x) = ((1 -
mu_1) + x (1 - mu_a)) / (1 + x)``, ``mu_1 - m_a(x) = x Delta_a / (1 + x)``), as
``(x - y)^2 / (y (1 - y)) + x L((x - y) / y) + (1 - x) L((y - x) / (1 - y))`` with
``L(e) = ln(1 + e) - e`` when both arguments of ``L`` are at most 1 in absolute value
(no cancellation between the textbook form's two terms when ``x`` is close to ``y``),
as ``x ln(x / y) + (1 - x) ln((1 - x) / (1 - y))`` otherwise (where the first form
would cancel; each ``ln(1 + e)`` as ``log1p(e)`` for ``|e| <= 1/2``).

Bernoulli means 0 and 1 are allowed and computed exactly (``0 ln 0 = 0``): with a unique
best arm every ``m_a(x)`` with ``0 < x < inf`` lies strictly inside ``(0, 1)``, where all
the divergences involved are finite, so ``T*`` and ``w*`` are finite and well defined
(e.g. Shang et al.'s instance ``(1, 0.8, 0.75, 0.7)`` has ``T* = 17.0263``). A mean 1
that is not the unique best is a tie with the best (refused, below); ``d(mu_1, mu_2)``
may be infinite (``mu_2 = 0``), which the bracket below does not use.

Root finding: ``x_a(y)`` by bisection on ``g_a(x) = y`` over ``[0, X]`` (``X`` doubled
until ``g_a(X) > y``), taking the Newton steps that stay inside the bracket, to float64
resolution (:func:`_xs`); ``y*`` by Brent's method (``xtol = 1e-300``, ``rtol = 4 eps``)
over ``(0, y_c]``, where ``y_c = g_2(x_c)`` with ``m_2(x_c)`` the Chernoff point of arms 1
and 2 (``d(mu_1, m) = d(mu_2, m)``, so the second arm's term of ``F`` is 1 there and
``F(y_c) >= 1``): ``m = (mu_1 + mu_2) / 2`` (Gaussian), ``logit(m) = (phi(mu_1) -
phi(mu_2)) / (mu_1 - mu_2)`` with ``phi(p) = p ln p + (1 - p) ln(1 - p)`` (Bernoulli);
``x_c`` is doubled while rounding leaves ``F(y_c) <= 1``. ``tests/test_tstar.py`` checks
the result against SLSQP on the max-min definition itself.

The traced, fixed-iteration JAX version that policies call at every step is
:mod:`jbandits.policies.blocks.tstar`; this module is the host oracle (experiments'
``T* log(1/delta)`` lines, tests).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

FAMILIES = ("bernoulli", "gaussian")
_EPS = np.finfo(np.float64).eps
_RTOL = 4.0 * _EPS
_XTOL = 1e-300


def characteristic_time(
    means, family: str = "bernoulli", sigma: float = 1.0, beta=None, *, arm_mask=None
) -> tuple[float, np.ndarray]:
    """``(T*, w*)`` of one instance (GK16 Theorem 5; the module docstring).

    Args:
      means: ``[K]`` means, in any order (the best need not be first).
      family: ``"bernoulli"`` (means in ``[0, 1]``) or ``"gaussian"`` (known ``sigma``).
      sigma: the Gaussian standard deviation (``> 0``; checked, unused for Bernoulli).
      beta: None for ``T*(mu)`` and ``w*(mu)``; a number in ``(0, 1)`` for the
        beta-optimal ``T*_beta = 1 / Gamma*_beta`` and ``w^beta`` (``w^beta`` of the best
        arm is ``beta``).
      arm_mask: optional ``[K]`` bool of the real arms; padded arms get weight 0.

    Returns:
      ``T*`` (a float; ``T* log(1/delta)`` is the asymptotic expected stopping time of an
      optimal delta-correct rule) and ``w*`` (``[K]`` float64, in the input order, summing
      to 1).

    Raises:
      ValueError: fewer than 2 real arms; means not finite; Bernoulli means outside
        ``[0, 1]``; ``sigma`` not a finite number > 0; ``beta`` outside ``(0, 1)``; an
        unknown family; a best mean shared by two arms (``T*`` is infinite: no number of
        samples separates two arms of equal means).
    """
    mu, keep = _instance(means, family, sigma, arm_mask)
    if beta is not None:
        beta = float(beta)
        if not 0.0 < beta < 1.0:
            raise ValueError(f"beta must lie in (0, 1), got {beta!r}")
    pair = _pair(family, float(sigma))
    best = int(np.argmax(mu))
    others = np.delete(mu, best)
    mu1 = float(mu[best])
    if beta is None:
        y, x = _solve_optimal(pair, mu1, others, family)
        t_star = (1.0 + x.sum()) / y
        w_real = np.insert(x, best, 1.0) / (1.0 + x.sum())
    else:
        y, x = _solve_beta(pair, mu1, others, beta)
        t_star = 1.0 / (beta * y)
        w_real = np.insert(beta * x, best, beta)
    w = np.zeros(keep.size)
    w[keep] = w_real
    return float(t_star), w


def _instance(means, family, sigma, arm_mask) -> tuple[np.ndarray, np.ndarray]:
    """The real means ``[K_real]`` (checked) and the real-arm mask ``[K]``."""
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
    try:
        sigma = float(sigma)
    except (TypeError, ValueError) as err:
        raise ValueError(f"sigma must be a number > 0, got {sigma!r}") from err
    if not (math.isfinite(sigma) and sigma > 0.0):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    mu = np.asarray(means, dtype=np.float64)
    if mu.ndim != 1:
        raise ValueError(f"means must be one instance [K], got shape {mu.shape}")
    keep = np.ones(mu.shape, bool) if arm_mask is None else np.asarray(arm_mask, bool)
    if keep.shape != mu.shape:
        raise ValueError(f"arm_mask shape {keep.shape} != means shape {mu.shape}")
    mu = mu[keep]
    if mu.size < 2:
        raise ValueError(
            f"best-arm identification needs at least 2 (real) arms, got {mu.size}"
        )
    if not np.all(np.isfinite(mu)):
        raise ValueError(f"means must be finite, got {mu!r}")
    if family == "bernoulli" and (mu.min() < 0.0 or mu.max() > 1.0):
        raise ValueError(f"Bernoulli means must lie in [0, 1], got {mu!r}")
    tied = np.flatnonzero(mu == mu.max())
    if tied.size > 1:
        raise ValueError(
            f"the best mean {mu.max()!r} is shared by {tied.size} (real) arms: T* is "
            "infinite (no number of samples tells equal means apart; GK16 assume a "
            "unique best arm)"
        )
    return mu, keep


def _log1pmx(e: np.ndarray) -> np.ndarray:
    """``ln(1 + e) - e`` for ``e >= -1``: the atanh series for ``|e| <= 1/4``."""
    e = np.asarray(e, dtype=np.float64)
    small = np.abs(e) <= 0.25
    s = np.where(small, e, 0.0) / (2.0 + np.where(small, e, 0.0))
    s2 = s * s
    series = np.zeros_like(s)
    for k in range(11, -1, -1):  # sum_k s^(2k) / (2k + 3): |s| <= 1/7, 1e-21 relative
        series = 1.0 / (2 * k + 3) + s2 * series
    near = 2.0 * s * s2 * series - 2.0 * s2 / (1.0 - s)
    with np.errstate(divide="ignore", invalid="ignore"):
        far = np.log1p(np.where(small, 0.5, e)) - e
    return np.where(small, near, far)


def _log_ratio(e, ratio):
    """``ln(ratio)``, ``ratio = 1 + e``: ``log1p(e)`` for ``|e| <= 1/2``."""
    return np.where(np.abs(e) <= 0.5, np.log1p(e), np.log(ratio))


def _kl_parts(p, pc, q, qc, diff) -> np.ndarray:
    """Bernoulli ``kl(p, q)`` from ``p``, ``pc = 1 - p``, ``q``, ``qc = 1 - q`` and
    ``diff = p - q``, each computed where it is accurate (the complements of means near
    1 and the difference of close means are not recomputed from rounded values); the
    two forms of the module docstring."""
    inside = (q > 0.0) & (qc > 0.0)
    qs, qcs = np.where(inside, q, 0.5), np.where(inside, qc, 0.5)
    with np.errstate(invalid="ignore", divide="ignore"):
        e_low, e_high = (
            np.where(p > 0.0, diff / qs, 0.0),
            np.where(pc > 0.0, -diff / qcs, 0.0),
        )
        series = diff * diff / (qs * qcs) + p * _log1pmx(e_low) + pc * _log1pmx(e_high)
        plain = np.where(p > 0.0, p * _log_ratio(e_low, p / qs), 0.0)
        plain = plain + np.where(pc > 0.0, pc * _log_ratio(e_high, pc / qcs), 0.0)
    close = (np.abs(e_low) <= 1.0) & (np.abs(e_high) <= 1.0)
    value = np.where(close, series, plain)
    return np.where(inside, value, np.where(diff == 0.0, 0.0, np.inf))


def kl_bernoulli(p, q) -> np.ndarray:
    """``kl(p, q)`` for ``p, q`` in ``[0, 1]`` (``0 ln 0 = 0``; ``+inf`` for ``q in
    {0, 1}``, ``q != p``), free of cancellation for ``q`` near ``p``."""
    p, q = np.broadcast_arrays(np.asarray(p, np.float64), np.asarray(q, np.float64))
    return _kl_parts(p, 1.0 - p, q, 1.0 - q, p - q)


def _pair(family: str, sigma: float):
    """``(mu_1, mu_a, x) -> (d(mu_1, m_a(x)), d(mu_a, m_a(x)))``, vectorised, with
    ``mu_1 - m = x Delta / (1 + x)``, ``mu_a - m = -Delta / (1 + x)`` and (Bernoulli)
    ``1 - m = ((1 - mu_1) + x (1 - mu_a)) / (1 + x)``."""

    def pair(mu1, mua, x):
        s = 1.0 + x
        delta = mu1 - mua
        if family == "gaussian":
            scale = delta * delta / (2.0 * sigma * sigma * s * s)
            return x * x * scale, scale
        m = (mu1 + x * mua) / s
        mc = ((1.0 - mu1) + x * (1.0 - mua)) / s
        d1 = _kl_parts(mu1, 1.0 - mu1, m, mc, x * delta / s)
        return d1, _kl_parts(mua, 1.0 - mua, m, mc, -delta / s)

    return pair


def _meet(mu1: float, mua, x):
    return (mu1 + x * mua) / (1.0 + x)


def _g(pair, mu1: float, mua, x):
    """``g_a(x)`` (vectorised; ``g(0) = 0``, where ``x d(mu_a, mu_1)`` could be
    ``0 * inf`` for ``mu_1 = 1, mu_a = 0``)."""
    x = np.asarray(x, np.float64)
    d1, da = pair(mu1, mua, x)
    with np.errstate(invalid="ignore"):
        return np.where(x > 0.0, d1 + x * da, 0.0)


def _xs(pair, mu1: float, others: np.ndarray, y: float) -> np.ndarray:
    """``x_a(y) = g_a^-1(y)`` for every other arm (``0 <= y < d(mu_1, mu_a)``).

    Bisection on ``[lo, hi]`` (``hi`` doubled from 1 until ``g_a(hi) > y``) with Newton
    steps (``g_a'(x) = d(mu_a, m_a(x))``, GK16 A.2) taken when they stay inside the
    bracket (Numerical Recipes' ``rtsafe``), until ``|g_a(x) - y| <= 2 eps y``, the
    bracket is within 4 ulp, or a Newton step below 64 ulp has been taken (quadratic
    convergence: then within ~1 ulp). The rounding of ``m_a(x)`` can make ``g_a`` jump
    between neighbouring ``x`` by more than that, where Newton then cycles: after 60
    steps a bracket of ``1e-12`` relative is accepted, after 200 one of ``1e-9``.
    """
    others = np.asarray(others, np.float64)
    if y <= 0.0:
        return np.zeros_like(others)
    lo = np.zeros_like(others)
    hi = np.ones_like(others)
    for _ in range(2100):
        low = _g(pair, mu1, others, hi) <= y
        if not low.any():
            break
        lo, hi = np.where(low, hi, lo), np.where(low, 2.0 * hi, hi)
    else:
        raise ValueError(f"no x with g(x) = {y!r} (mu_1 = {mu1!r})")
    x = 0.5 * (lo + hi)
    settled = np.zeros(x.shape, bool)
    for count in range(400):
        gx = _g(pair, mu1, others, x)
        lo, hi = np.where(gx < y, x, lo), np.where(gx < y, hi, x)
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = x + (y - gx) / pair(mu1, others, x)[1]
        inside = (newton >= lo) & (newton <= hi)
        tiny = inside & (np.abs(newton - x) <= 64.0 * _EPS * x)
        fits = np.abs(gx - y) <= 2.0 * _EPS * y
        step = np.where(inside, newton, 0.5 * (lo + hi))
        x = np.where(settled | (fits & ~tiny), x, step)
        width = (hi - lo) / hi
        settled |= fits | tiny | (width <= 4.0 * _EPS)
        settled |= ((count >= 60) & (width <= 1e-12)) | (
            (count >= 200) & (width <= 1e-9)
        )
        if settled.all():
            return x
    raise ValueError(f"x_a(y) did not converge (mu_1 = {mu1!r}, y = {y!r})")


def _ratio_sum(pair, mu1: float, others: np.ndarray, y: float) -> float:
    """``F(y)`` of GK16 eq. (6)."""
    d1, da = pair(mu1, others, _xs(pair, mu1, others, y))
    return float(np.sum(d1 / da))


def _chernoff_x(mu1: float, mu2: float, family: str) -> float:
    """``x_c`` with ``m_2(x_c)`` the Chernoff point ``d(mu_1, m) = d(mu_2, m)``."""
    if family == "gaussian":
        return 1.0

    def phi(p):
        return sum(v * math.log(v) for v in (p, 1.0 - p) if v > 0.0)

    m = 1.0 / (1.0 + math.exp(-(phi(mu1) - phi(mu2)) / (mu1 - mu2)))
    m = min(max(m, mu2 + 1e-3 * (mu1 - mu2)), mu1 - 1e-3 * (mu1 - mu2))
    return (mu1 - m) / (m - mu2)


def _upper(pair, mu1: float, mu2: float, x: float, f, target: float) -> float:
    """``y = g_2(x)``, raised (``x`` doubled) until ``f(y) > target``."""
    for _ in range(200):
        y = float(_g(pair, mu1, mu2, x))
        if f(y) > target:
            return y
        x = 2.0 * x
    raise ValueError("no upper bracket for y* (means too close for float64?)")


def _solve_optimal(pair, mu1: float, others: np.ndarray, family: str):
    """``(y*, x(y*))`` with ``F(y*) = 1``."""
    mu2 = float(others.max())

    def f(y):
        return _ratio_sum(pair, mu1, others, y)

    hi = _upper(pair, mu1, mu2, _chernoff_x(mu1, mu2, family), f, 1.0)
    y = brentq(lambda v: f(v) - 1.0, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)
    return y, _xs(pair, mu1, others, y)


def _solve_beta(pair, mu1: float, others: np.ndarray, beta: float):
    """``(y, x(y))`` with ``sum_a x_a(y) = (1 - beta) / beta``."""
    target = (1.0 - beta) / beta
    mu2 = float(others.max())

    def f(y):
        return float(_xs(pair, mu1, others, y).sum())

    hi = _upper(pair, mu1, mu2, target, f, target)
    y = brentq(lambda v: f(v) - target, 0.0, hi, xtol=_XTOL, rtol=_RTOL, maxiter=500)
    return y, _xs(pair, mu1, others, y)
