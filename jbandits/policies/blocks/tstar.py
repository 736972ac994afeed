"""Optimal proportions ``w*(mu)`` and characteristic time ``T*(mu)`` of best-arm
identification, traced and fixed-iteration (JAX).

Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed Confidence", COLT 2016
(GK16), Sec. 2.2 (Lemma 4, Theorem 5, Appendix A.2). With arm 1 the unique best,
``m_a(x) = (mu_1 + x mu_a) / (1 + x)``, ``g_a(x) = d(mu_1, m_a(x)) + x d(mu_a, m_a(x))``
and ``x_a = g_a^-1``::

    F(y) = sum_{a >= 2} d(mu_1, m_a(x_a(y))) / d(mu_a, m_a(x_a(y))) = 1   at y = y*
    w*_a = x_a(y*) / (1 + sum_b x_b(y*))  (x_1 = 1),   T* = (1 + sum_a x_a(y*)) / y*

:func:`beta_optimal_weights` fixes the best arm's proportion to ``beta`` and equalises
the others' transportation costs (Russo, Operations Research 2020, ``Gamma*_beta``;
Shang et al., AISTATS 2020, eq. (6)): ``sum_{a >= 2} x_a(y) = (1 - beta) / beta``,
``w_a = beta x_a(y)``, ``T*_beta = 1 / (beta y)``. The host oracle (float64, Brent's
method, run to convergence) is :func:`jbandits.analysis.tstar.characteristic_time`.

How it is solved: elementwise arithmetic over arms, sums over arms and ``where``, in
Python-unrolled loops of fixed length (no while / scan / cond, no gather, no
data-dependent shape: jit-, vmap- and kernel-safe; ``tests/test_tstar.py`` checks the
primitives); every number (means, ``sigma``, ``beta``, ``arm_mask``) may be traced.

* Gaussian (``d = (x - y)^2 / (2 sigma^2)``): ``x_a(y) = y / (d_a - y)``, closed form.
  With ``u = y / d_2`` (``d_2`` of the second-best mean) and ``c_a = (Delta_2 /
  Delta_a)^2``, ``x_a = c_a u / (1 - c_a u)``; ``sqrt(sum x_a^2) = 1`` (resp. ``sum x_a =
  (1 - beta) / beta``) is solved by Newton's method from ``u = 1/2`` (resp. ``1 -
  beta``), where ``x_2 = 1`` (resp. ``(1 - beta) / beta``): the start is at or right of
  the root, and both left-hand sides are convex increasing in ``u`` (a norm, resp. a
  sum, of convex increasing ``x_a``), so the iterates decrease monotonically to the
  root. :data:`GAUSS_NEWTON` steps (float32 reaches its floor in 4, float64 in 6 on
  ``K = 1000`` instances).
* Bernoulli (``d = kl``): outer unknown ``y``, inner ``x_a(y)``. ``g_a`` is concave
  increasing with ``g_a(0) = 0`` and ``g_a'(x) = d(mu_a, m_a(x))`` (GK16 A.2): a Newton
  step on ``g_a(x) = y`` lands at or left of the root from either side (then increases
  monotonically to it), the chord through the origin ``x y / g_a(x)`` on the side of
  ``x``; from the right the Newton step is taken unless it falls below half the chord's
  (far from the root; it can be negative), then the chord's. The outer Newton solves
  ``F(y) = 1`` (``F`` is convex in ``y``: checked numerically on 300 random instances,
  not proved) resp. ``sum_a x_a(y) = (1 - beta) / beta`` (convex), with ``F'(y) =
  sum_a Delta_a^2 y / ((1 + x_a)^3 m_a (1 - m_a) d(mu_a, m_a)^3)`` resp. ``x_a'(y) = 1 /
  d(mu_a, m_a)``, from the right: ``y_0 = g_2(x_c)``, ``m_2(x_c)`` the Chernoff point of
  the two best means (``d(mu_1, m) = d(mu_2, m)``: the second arm's term of ``F`` is 1
  there), resp. ``y_0 = g_2((1 - beta) / beta)``; iterates are kept in ``[y / 4,
  g_2(2 x_0 + 1)]`` (left of the pole ``d(mu_1, mu_2)``). Each outer step warm-starts
  the inner iterates from the previous ones. :data:`BERNOULLI_ITERS` = (outer steps,
  inner steps per outer step, inner steps at ``y_0``, inner steps at the final ``y``).

``kl(p, q)`` is evaluated from ``p``, ``1 - p``, ``q``, ``1 - q`` and ``p - q``, each
computed from the means where it is accurate (``1 - m_a(x) = ((1 - mu_1) + x (1 -
mu_a)) / (1 + x)``, ``mu_1 - m_a(x) = x Delta_a / (1 + x)``; ``1 - mu`` is exact for
``mu >= 1/2``), as ``(p - q)^2 / (q (1 - q)) + p L(e_1) + (1 - p) L(e_2)`` with ``e_1 =
(p - q) / q``, ``e_2 = (q - p) / (1 - q)`` and ``L(e) = ln(1 + e) - e`` (a series for
``|e| <= 1/4``) when both ``|e| <= 1``, as ``p ln(1 + e_1) + (1 - p) ln(1 + e_2)``
otherwise; ``ln(1 + e)`` takes one logarithm (:func:`_ln1p`). The first form has no
cancellation for ``q`` near ``p`` (where the textbook form loses every float32 digit
for means 1e-3 apart), the second none for ``q`` far from ``p`` relative to ``q`` or
``1 - q`` (where the first cancels).

Defined outputs for the empirical means a running policy meets (``K`` = real arms):

* a unique best and ``K >= 2``: the solution above; padded arms weigh exactly 0,
  whatever their means hold (NaN included).
* the largest real mean shared by ``L >= 2`` arms (ties; all means equal): ``T* = +inf``
  and ``w = 1/L`` on the tied arms, 0 elsewhere. This is the limit of ``w*`` as the tie
  is approached (``x_2 -> 1``, the other ``x_a -> 0``) and what the authors' Julia code
  returns (``OptimalWeights`` of Kaufmann's ``BAI_epsBAI_code``, ``BAIalgos.jl``;
  ``optimal_weights`` of Shang's ``BestArm.jl``, which returns ``1/T* = 0``). Their
  ``TrackAndStop`` (D-Tracking) samples a random tied arm and skips the stopping test
  instead of using the weights, their ``TrackAndStopC`` adds these weights; a policy
  tells the case by ``isinf(T*)``.
* ``K = 1``: ``T* = 0`` and ``w = 1`` on that arm (nothing to identify); ``K = 0``:
  ``T* = +inf``, ``w = 0``.
* Bernoulli means exactly 0 or 1: computed exactly, not clipped. With a unique best,
  ``m_a(x)`` lies strictly inside ``(0, 1)`` for ``0 < x < inf``, where every divergence
  used is finite, so ``w*`` and ``T*`` are finite (best mean 1, second mean 0: ``w* =
  (1/2, 1/2)``, ``T* = 1 / ln 2``). The authors' code (``dBernoulli`` of ``KLfunctions.jl``
  / ``kl_functions.jl``) moves a first argument 0 or 1 to ``eps()`` / ``1 - eps()``
  (2.2e-16 away), which changes ``T*`` and ``w*`` by about that much relative: the same
  numbers. Their ``y`` bracket is ``[0, d(mu_1, mu_2)]``, doubled from 1/2 while
  ``F < 1`` when that divergence is infinite; ours does not use it. Koolen's code
  for Degenne, Koolen & Menard, NeurIPS 2019 (``tidnabbil``, as copied in
  ``rctzeng/NeurIPS2021-FWS``) keeps sampling a Bernoulli arm while its mean is 0 or 1
  at the start; that is a sampling rule, not this block's. A Bernoulli mean outside
  ``[0, 1]`` gives NaN.

Accuracy against the float64 host oracle (random instances, ``K`` up to 300, arms in
random order, padded arms; ``tests/test_tstar.py`` and its sweeps): float64 within 1e-14
relative on ``w*`` and ``T*``; float32 within 2e-6 (optimal weights) and 5e-6
(``beta``-optimal, ``beta = 0.1``: ``x_a`` up to 9 amplify the rounding) relative, every
weight included (the smallest are 1e-7).

Cost per call and per arm (padded arms included). Bernoulli: one ``kl`` is about 90
flops and 2 logarithms, one inner step (two ``kl``, the Newton and chord steps) about
200 flops and 4 logarithms, one outer step the same plus the two sums; float32 ``8 * 2
+ 8 + 3 = 27`` inner and 8 outer steps: about 7,000 flops and 140 logarithms (float64:
30 inner steps, about 7,700 flops and 150 logarithms); plus a few hundred scalar flops
for the Chernoff point. On the 2-core CPU of the tests, ``vmap`` over 1000 instances:
about 0.5-0.7 us per instance and arm (K = 5 and 20). Gaussian: about 10 flops per arm
per Newton step, 6 (float32) / 8 (float64) steps, no logarithm.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
from jax.scipy.special import xlogy

from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike

FAMILIES = ("bernoulli", "gaussian")
# Newton steps of the Gaussian solve
GAUSS_NEWTON = {"float32": 6, "float64": 8}
# Bernoulli: (outer Newton steps, inner steps per outer step, inner steps at y_0,
# inner steps at the final y)
BERNOULLI_ITERS = {"float32": (8, 2, 8, 3), "float64": (8, 2, 10, 4)}
_CHERNOFF_NEWTON = 2  # Newton corrections of the closed-form Chernoff point


def optimal_weights(
    family: str, means: ArrayLike, arm_mask: ArrayLike, sigma: ArrayLike = 1.0
) -> tuple[Array, Array]:
    """``(T*, w*)``: the characteristic time ``[]`` and the optimal proportions ``[K]``
    of GK16 Theorem 5 (module docstring), for means ``[K]`` in any order.

    ``family`` (static): ``"bernoulli"`` or ``"gaussian"`` (known ``sigma``; ``w*`` does
    not depend on it and ``T*`` scales as ``sigma^2``). ``arm_mask [K]`` bool marks the
    real arms. ``means`` and ``sigma`` may be tracers; batch with ``jax.vmap``. A
    ``sigma <= 0`` raises ValueError, or gives NaN when traced.

    Ties for the best (``T* = +inf``, ``w`` uniform on the tied arms), one real arm
    (``T* = 0``) and Bernoulli means 0 / 1 (exact) are defined: module docstring.
    """
    return _weights(family, means, arm_mask, sigma, None)


def beta_optimal_weights(
    family: str,
    means: ArrayLike,
    arm_mask: ArrayLike,
    beta: ArrayLike,
    sigma: ArrayLike = 1.0,
) -> tuple[Array, Array]:
    """``(T*_beta, w^beta)``: the best arm's proportion fixed to ``beta`` in ``(0, 1)``
    (traced), the others equalising their transportation costs (module docstring).

    ``T*_beta = 1 / Gamma*_beta`` of Russo (2020) / Shang et al. (2020); the outputs for
    ties, one arm and Bernoulli edge means are those of :func:`optimal_weights`. A
    ``beta`` outside ``(0, 1)`` raises ValueError, or gives NaN when traced.
    """
    _validate.in_range("beta", beta, 0.0, 1.0, low_open=True, high_open=True)
    return _weights(family, means, arm_mask, sigma, beta)


class _Instance(NamedTuple):
    mu1: Array  # [] best mean (a stand-in when there is no unique best)
    mu2: Array  # [] second-best mean (idem)
    mu: Array  # [K] means of the other real arms; mu2 elsewhere
    gap: Array  # [K] mu1 - mu (> 0)
    others: Array  # [K] bool: real arms other than the best
    best: Array  # [K] bool: the unique best arm (all False without one)
    top: Array  # [K] bool: the real arms of the largest mean (ties included)
    real: Array  # [K] bool: arm_mask
    ok: Array  # [] bool: a unique best among >= 2 real arms


def _instance(family: str, means, arm_mask, dtype) -> _Instance:
    means = jnp.asarray(means, dtype)
    real = jnp.broadcast_to(jnp.asarray(arm_mask, bool), means.shape)
    mu1 = jnp.max(jnp.where(real, means, -jnp.inf), axis=-1)
    top = real & (means == mu1)
    others = real & ~top
    ok = (jnp.sum(top) == 1) & jnp.any(others)
    mu2 = jnp.max(jnp.where(others, means, -jnp.inf), axis=-1)
    stand_in = (0.75, 0.25) if family == "bernoulli" else (1.0, 0.0)
    mu1 = jnp.where(ok, mu1, stand_in[0])
    mu2 = jnp.where(ok, mu2, stand_in[1])
    mu = jnp.where(others & ok, means, mu2)
    return _Instance(mu1, mu2, mu, mu1 - mu, others & ok, top & ok, top, real, ok)


def _weights(family: str, means, arm_mask, sigma, beta) -> tuple[Array, Array]:
    _validate.choice("family", family, FAMILIES)
    _validate.in_range("sigma", sigma, 0.0, low_open=True)
    extra = () if beta is None else (beta,)
    dtype = jnp.result_type(float, means, sigma, *extra)
    inst = _instance(family, means, arm_mask, dtype)
    sigma = jnp.asarray(sigma, dtype)
    beta = None if beta is None else jnp.asarray(beta, dtype)
    solve = _gaussian if family == "gaussian" else _bernoulli
    t_star, x = solve(inst, beta, dtype)  # x: [K], 0 off the other real arms
    if family == "gaussian":
        t_star = t_star * sigma * sigma
    if beta is None:
        scale = 1.0 / (1.0 + jnp.sum(x))
        w = jnp.where(inst.best, scale, x * scale)
    else:
        w = jnp.where(inst.best, beta, beta * x)
    # no unique best (or fewer than 2 real arms): uniform over the tied best arms
    n_top = jnp.sum(inst.top)
    tied = jnp.where(inst.top, 1.0 / jnp.maximum(n_top, 1), 0.0).astype(dtype)
    w = jnp.where(inst.ok, w, tied)
    fallback = jnp.where(jnp.sum(inst.real) == 1, 0.0, jnp.inf).astype(dtype)
    t_star = jnp.where(inst.ok, t_star, fallback)
    # a traced sigma <= 0 or beta outside (0, 1) (concrete ones raise above): NaN
    valid = sigma > 0.0
    if beta is not None:
        valid = valid & (beta > 0.0) & (beta < 1.0)
    return jnp.where(valid, t_star, jnp.nan), jnp.where(valid, w, jnp.nan)


# ------------------------------------------------------------------ Gaussian
def _gaussian(inst: _Instance, beta, dtype) -> tuple[Array, Array]:
    """``(T*`` at ``sigma = 1``, ``x [K])``: Newton on ``u = y / d_2`` (module docstring)."""
    gap2 = (inst.mu1 - inst.mu2) ** 2
    c = jnp.where(inst.others, gap2 / (inst.mu1 - inst.mu) ** 2, 0.0)
    target = None if beta is None else (1.0 - beta) / beta
    u = jnp.asarray(0.5, dtype) if beta is None else 1.0 - beta
    steps = GAUSS_NEWTON["float64" if dtype == jnp.float64 else "float32"]
    for _ in range(steps):
        den = 1.0 - c * u
        x = c * u / den
        dx = c / (den * den)
        if beta is None:
            norm = jnp.sqrt(jnp.sum(x * x))
            u = u - (norm - 1.0) * norm / jnp.sum(x * dx)
        else:
            u = u - (jnp.sum(x) - target) / jnp.sum(dx)
    x = c * u / (1.0 - c * u)
    y = u * gap2 / 2.0
    t_star = (1.0 + jnp.sum(x)) / y if beta is None else 1.0 / (beta * y)
    return t_star, x


# ------------------------------------------------------------------ Bernoulli
def _ln1p(e, ratio):
    """``ln(1 + e)`` given ``e`` and ``ratio = 1 + e``, each computed accurately, with one
    logarithm: ``ln(ratio)`` for ``e < -1/2`` (where ``e`` may round to -1), else
    ``ln(u) e / (u - 1)`` with ``u = 1 + e`` rounded (D. Goldberg, "What every computer
    scientist should know about floating-point arithmetic", ACM Computing Surveys 23(1),
    1991, Theorem 4: within a few ulp of ``log1p(e)``), ``e`` when ``u = 1``."""
    low = e < -0.5
    u = jnp.where(low, ratio, 1.0 + e)
    log = jnp.log(u)
    step = u - 1.0
    flat = step == 0.0
    scaled = log * (e / jnp.where(flat, 1.0, step))
    return jnp.where(low, log, jnp.where(flat, e, scaled))


def _series(e):
    """``ln(1 + e) - e`` for ``|e| <= 1/4`` without transcendental functions: with ``s =
    e / (2 + e)``, ``2 s^3 (1/3 + s^2/5 + ...) - 2 s^2 / (1 - s)`` (the series of
    :func:`jbandits.policies.blocks.numerics.log1pmx`; ``|s| <= 1/7``, to ``s^8/11`` in
    float32 and ``s^18/21`` in float64)."""
    s = e / (2.0 + e)
    s2 = s * s
    terms = 10 if e.dtype == jnp.float64 else 5
    total = jnp.zeros_like(s)
    for k in range(terms - 1, -1, -1):
        total = 1.0 / (2 * k + 3) + s2 * total
    return 2.0 * s * s2 * total - 2.0 * s2 / (1.0 - s)


def _kl(p, pc, q, qc, diff) -> Array:
    """Bernoulli ``kl(p, q)`` from ``p``, ``pc = 1 - p``, ``q``, ``qc = 1 - q`` (``q``,
    ``qc > 0``) and ``diff = p - q``, each computed where it is accurate (module
    docstring); ``p`` or ``pc = 0`` is exact (``0 ln 0 = 0``). Two logarithms."""
    inv_q, inv_qc = 1.0 / q, 1.0 / qc
    terms = []
    for weight, e, ratio in (
        (p, diff * inv_q, p * inv_q),
        (pc, -diff * inv_qc, pc * inv_qc),
    ):
        real = weight > 0.0
        e = jnp.where(real, e, 0.0)
        log = _ln1p(e, jnp.where(real, ratio, 1.0))  # ln(1 + e)
        small = jnp.abs(e) <= 0.25
        lmx = jnp.where(small, _series(jnp.where(small, e, 0.0)), log - e)
        terms.append((weight, e, log, lmx))
    (p, e1, log1, lmx1), (pc, e2, log2, lmx2) = terms
    close = (jnp.abs(e1) <= 1.0) & (jnp.abs(e2) <= 1.0)
    series = diff * diff * inv_q * inv_qc + p * lmx1 + pc * lmx2
    return jnp.where(close, series, p * log1 + pc * log2)


def _pair(inst: _Instance, x):
    """``(d(mu_1, m), d(mu_a, m), m (1 - m))`` at ``m = m_a(x)``, with ``mu_1 - m = x
    Delta_a / (1 + x)``, ``mu_a - m = -Delta_a / (1 + x)`` and ``1 - m = ((1 - mu_1) + x
    (1 - mu_a)) / (1 + x)``."""
    inv_s = 1.0 / (1.0 + x)
    m = (inst.mu1 + x * inst.mu) * inv_s
    mc = ((1.0 - inst.mu1) + x * (1.0 - inst.mu)) * inv_s
    d1 = _kl(inst.mu1, 1.0 - inst.mu1, m, mc, x * inst.gap * inv_s)
    da = _kl(inst.mu, 1.0 - inst.mu, m, mc, -inst.gap * inv_s)
    return d1, da, m * mc


def _inner(inst: _Instance, y, x, steps: int):
    """``steps`` safeguarded Newton steps on ``g_a(x) = y``, from ``x``.

    ``g_a`` is concave with ``g_a(0) = 0``: the Newton step lands at or left of the root
    (from either side), the chord through the origin ``x y / g_a(x)`` on the same side
    as ``x``. From the right, the Newton step is taken unless it falls below half the
    chord's (far from the root, where it could even be negative); then the chord's.
    """
    for _ in range(steps):
        d1, da, _ = _pair(inst, x)
        g = d1 + x * da
        newton = x + (y - g) / da  # <= the root (g concave)
        chord = x * (y / g)  # on the side of x (g concave, g(0) = 0)
        x = jnp.where((g > y) & (newton < 0.5 * chord), chord, newton)
    return x


def _chernoff_x(inst: _Instance) -> Array:
    """``x_c`` with ``m_2(x_c) = m*``, ``d(mu_1, m*) = d(mu_2, m*)``, for the two best
    means. ``logit(m*) = (phi(mu_1) - phi(mu_2)) / (mu_1 - mu_2)`` with ``phi(p) = p ln p
    + (1 - p) ln(1 - p)`` starts Newton's method on ``D(t) = d(mu_1, m) - d(mu_2, m)``,
    ``m = mu_2 + t (mu_1 - mu_2)``, ``D'(t) = -(mu_1 - mu_2)^2 / (m (1 - m))``, which
    undoes the formula's cancellation for close means; ``t`` is kept in
    ``[1e-3, 1 - 1e-3]``."""
    mu1, mu2 = inst.mu1, inst.mu2
    gap = mu1 - mu2

    def phi(p):
        return xlogy(p, p) + xlogy(1.0 - p, 1.0 - p)

    m = 1.0 / (1.0 + jnp.exp(-(phi(mu1) - phi(mu2)) / gap))
    t = jnp.clip((m - mu2) / gap, 1e-3, 1.0 - 1e-3)
    for _ in range(_CHERNOFF_NEWTON):
        m, mc = mu2 + t * gap, (1.0 - mu2) - t * gap
        diff = _kl(mu1, 1.0 - mu1, m, mc, (1.0 - t) * gap) - _kl(
            mu2, 1.0 - mu2, m, mc, -t * gap
        )
        t = jnp.clip(t + diff * m * mc / (gap * gap), 1e-3, 1.0 - 1e-3)
    return (1.0 - t) / t


def _g2(inst: _Instance, x):
    """``g_2(x)`` for the second-best mean."""
    two = inst._replace(mu=inst.mu2, gap=inst.mu1 - inst.mu2)
    d1, d2, _ = _pair(two, x)
    return d1 + x * d2


def _bernoulli(inst: _Instance, beta, dtype) -> tuple[Array, Array]:
    """``(T*, x [K])``: outer Newton on ``y`` from the right, inner on ``x_a(y)``."""
    outer, inner, first, last = BERNOULLI_ITERS[
        "float64" if dtype == jnp.float64 else "float32"
    ]
    target = None if beta is None else (1.0 - beta) / beta
    x0 = _chernoff_x(inst) if beta is None else target
    y0 = _g2(inst, x0)
    y_cap = _g2(inst, 2.0 * x0 + 1.0)  # stays left of the pole d(mu_1, mu_2)
    x = _inner(inst, y0, jnp.full(inst.mu.shape, x0, dtype), first)
    y = y0
    for _ in range(outer):
        d1, da, var = _pair(inst, x)
        if beta is None:
            value = jnp.sum(jnp.where(inst.others, d1 / da, 0.0)) - 1.0
            term = inst.gap**2 * y / ((1.0 + x) ** 3 * var * da**3)
        else:
            value = jnp.sum(jnp.where(inst.others, x, 0.0)) - target
            term = 1.0 / da
        slope = jnp.sum(jnp.where(inst.others, term, 0.0))
        y = jnp.clip(y - value / slope, 0.25 * y, y_cap)
        x = _inner(inst, y, x, inner)
    x = jnp.where(inst.others, _inner(inst, y, x, last), 0.0)
    t_star = (1.0 + jnp.sum(x)) / y if beta is None else 1.0 / (beta * y)
    return t_star, x
