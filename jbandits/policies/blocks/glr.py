"""The generalized likelihood ratio (Chernoff) stopping rule of best-arm identification.

Garivier & Kaufmann, "Optimal Best Arm Identification with Fixed Confidence", COLT 2016
(GK16), Sec. 3.2, eqs. (7)-(8): for arms ``a, b`` with counts ``N`` and empirical means
``mu``, and ``m = (N_a mu_a + N_b mu_b) / (N_a + N_b)``::

    Z_{a,b} = N_a d(mu_a, m) + N_b d(mu_b, m)   if mu_a >= mu_b,   Z_{a,b} = -Z_{b,a} otherwise
    Z(t)    = max_a min_{b != a} Z_{a,b}        stop at the first t with Z(t) > beta(t, delta)

and recommend the empirical best. With the transportation cost ``W(i, j) = max(Z_{i,j},
0)`` of Shang et al., "Fixed-Confidence Guarantees for Bayesian Best-Arm
Identification", AISTATS 2020 (Sec. 3, ``W_n``; 0 when ``mu_j >= mu_i``), ``Z(t) =
min_{j != leader} W(leader, j)`` where ``leader`` is the empirical best (0 when it is not
unique: a tied arm has ``W = 0``). ``d`` is the divergence of the family
(:func:`divergence`): Bernoulli ``kl``, Gaussian ``(x - y)^2 / (2 sigma^2)``; in the
Gaussian case ``Z_{a,b} = (mu_a - mu_b)^2 / (2 sigma^2 (1/N_a + 1/N_b))``, which is what
is evaluated (the same number, without the midpoint).

Conventions (everything is elementwise over arms, branch-free, jit/vmap-safe, float32 and
float64; ``family``, ``name`` and the threshold name are static strings, every number may
be a tracer):

* An arm with ``N = 0`` has no mean: every ``Z`` involving it is 0 (the limit of the
  definition as ``N -> 0``), whatever ``means`` holds there (NaN included). So while a
  real arm is unpulled ``Z(t) = 0`` and no threshold is crossed. Padded arms
  (``arm_mask`` False) are never the leader or the challenger and have ``W = +inf``.
* With a single real arm (pulled) there is no alternative: ``Z(t) = +inf`` and the
  challenger is ``-1``.
* Ties: the leader is the lowest-index arm among the pulled real arms of largest mean
  (before any pull, the first real arm), the challenger the lowest-index minimiser of
  ``W``. Policies whose paper breaks ties at random permute arms or call
  :func:`transport_costs` with their own random arg-min.
* Every pair is evaluated sorted by mean (so ``Z_{a,b} = -Z_{b,a}`` bit for bit, and
  equal means give exactly 0). The Bernoulli ``kl`` to the midpoint is evaluated from
  the differences ``mu_a - m = (mu_a - mu_b) N_b / (N_a + N_b)`` in a form without
  cancellation (``_kl_gap``): within 1e-6 of Z in float32 at 1e6 pulls per arm, where
  the textbook form loses 3e-3. Bernoulli means must lie in ``[0, 1]`` (a mean outside
  gives NaN: it is not clipped).

Thresholds ``beta(t, delta)`` (:func:`threshold`; ``t`` = the number of samples observed,
``K`` = the number of real arms, ``C_G`` = :func:`c_gaussian`). Each is evaluated as
``time part + constant part``, the constant (:func:`threshold_constant`, depending on
``delta`` and ``K`` only) in the order written here:

* ``"practical"``: ``log(log t + 1) + log(1/delta)`` = ``log((log t + 1)/delta)``, GK16
  Sec. 6 and the authors' code (``explo``). NOT covered by any theorem: GK16 call it
  "not (yet) allowed by theory"; use it to reproduce the papers' experiments.
* ``"gk16"``: ``log(2t) + log((K - 1)/delta)`` = ``log(2t(K - 1)/delta)``, GK16
  Theorem 10 (delta-correct for Bernoulli arms whatever the sampling rule); Bernoulli
  only.
* ``"kk21"``: ``4 log(4 + log(t/2)) + 2 C_G(log((K - 1)/delta)/2)``: Kaufmann & Koolen,
  "Mixture Martingales Revisited ...", JMLR 2021, Theorem 9, as the pairwise BAI
  threshold of M. Jourdan's PhD thesis ("Solving Pure Exploration Problems with the Top
  Two Approach", eq. 2.3, Lemma 2.2); Gaussian only. (The Bernoulli / exponential-family
  calibration of KK21 was not verified from the paper and is not implemented.)
* ``"t3c"``: ``4 log(4 + log t) + 2 C_G(log((K - 1)/delta)/2)``, Shang et al. 2020,
  Theorem 1, eq. (7) (the Gaussian model of that theorem); Gaussian only.
* ``"bounded"``: ``2 log(1 + t/2) + (log(1/delta) + 2 + log(K - 1))``, Jourdan,
  Degenne, Baudry, de Heide & Kaufmann, "Top Two Algorithms Revisited", NeurIPS 2022
  (thesis Lemma 4.2, eq. 4.4; the NeurIPS poster), calibrated for distributions bounded
  in ``[0, 1]``: Bernoulli only (whose KL transportation cost is the bounded one).
* ``"delta_correct"``: the default with a proof for the family: ``"gk16"`` (Bernoulli),
  ``"kk21"`` (Gaussian).

For ``t < 1`` (nothing observed) every threshold is ``+inf``. Values at ``delta = 0.1``,
``t = 1000``, ``K = 4`` (host computations in float64, checked by tests/test_glr.py):
4.370, 11.002, 15.819, 16.082, 17.834.

The Gaussian thresholds bound the GLR of the divergence ``(x - y)^2 / (2 sigma^2)``, so
they hold for the GLR computed with the same ``sigma`` as the rewards' known standard
deviation.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax.scipy.special import zeta

from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike
from jbandits.policies.blocks import arms, numerics

FAMILIES = ("bernoulli", "gaussian")
THRESHOLDS = ("practical", "delta_correct", "gk16", "kk21", "t3c", "bounded")
# the families each threshold is proved (or, "practical", used) for
THRESHOLD_FAMILIES = {
    "practical": FAMILIES,
    "gk16": ("bernoulli",),
    "kk21": ("gaussian",),
    "t3c": ("gaussian",),
    "bounded": ("bernoulli",),
}
DELTA_CORRECT = {"bernoulli": "gk16", "gaussian": "kk21"}
# golden-section steps of c_gaussian: the bracket of s (below) shrinks by 0.618 a step,
# to 7e-6 (float32) / 3e-12 (float64); the objective's curvature in s is about 1/2 at the
# minimum, so the value is then within 1e-10 / 1e-23 of the minimum (far below eps)
CG_ITERS = {"float32": 32, "float64": 60}
_CG_BRACKET = (1.3862943611198906, 40.0)  # s = -log(1 - lambda): lambda in [3/4, 1)
_INV_PHI = 0.6180339887498949  # (sqrt(5) - 1) / 2


def _float(*xs) -> jnp.dtype:
    return jnp.result_type(float, *xs)


def divergence(
    family: str, x: ArrayLike, y: ArrayLike, sigma: ArrayLike = 1.0
) -> Array:
    """``d(x, y)``: Bernoulli ``kl(x, y)`` (exact at 0 and 1, as
    :func:`jbandits.policies.blocks.numerics.kl_bernoulli`) or Gaussian
    ``(x - y)^2 / (2 sigma^2)`` (``sigma`` is ignored for Bernoulli). Broadcasts."""
    _validate.choice("family", family, FAMILIES)
    if family == "bernoulli":
        return numerics.kl_bernoulli(x, y)
    dtype = _float(x, y, sigma)
    sigma = jnp.asarray(sigma, dtype)
    return numerics.kl_gaussian(x, y, sigma * sigma)


def pairwise_glr(
    family: str,
    n_a: ArrayLike,
    mu_a: ArrayLike,
    n_b: ArrayLike,
    mu_b: ArrayLike,
    sigma: ArrayLike = 1.0,
) -> Array:
    """``Z_{a,b}`` of GK16 eqs. (7)-(8) (module docstring); broadcasts.

    ``N_a d(mu_a, m) + N_b d(mu_b, m)`` if ``mu_a >= mu_b``, else ``-Z_{b,a}``; 0 when
    either count is 0. Evaluated on the pair sorted by mean, so that ``Z_{a,b} =
    -Z_{b,a}`` exactly and equal means give exactly 0.
    """
    _validate.choice("family", family, FAMILIES)
    dtype = _float(n_a, mu_a, n_b, mu_b, sigma)
    n_a, mu_a, n_b, mu_b = (jnp.asarray(v, dtype) for v in (n_a, mu_a, n_b, mu_b))
    n_a, mu_a, n_b, mu_b = jnp.broadcast_arrays(n_a, mu_a, n_b, mu_b)
    pulled = (n_a > 0) & (n_b > 0)
    # unpulled arms: stand-in counts and means (the result is 0 there), so that
    # garbage in their means (NaN, out of range) reaches no arithmetic
    n_a, n_b = jnp.where(pulled, n_a, 1.0), jnp.where(pulled, n_b, 1.0)
    mu_a, mu_b = jnp.where(pulled, mu_a, 0.0), jnp.where(pulled, mu_b, 0.0)
    a_first = mu_a >= mu_b
    hi, lo = jnp.where(a_first, mu_a, mu_b), jnp.where(a_first, mu_b, mu_a)
    n_hi, n_lo = jnp.where(a_first, n_a, n_b), jnp.where(a_first, n_b, n_a)
    total = n_hi + n_lo
    gap = hi - lo
    if family == "gaussian":
        sigma = jnp.asarray(sigma, dtype)
        z = (n_hi * n_lo / total) * (gap * gap) / (2.0 * sigma * sigma)
    else:
        z = _bernoulli_pair(hi, lo, gap, n_hi / total, n_lo / total)
        z = jnp.where(gap > 0, n_hi * z[0] + n_lo * z[1], 0.0)
    return jnp.where(pulled, jnp.where(a_first, z, -z), 0.0)


def _kl_gap(x: Array, one_minus_x: Array, y: Array, one_minus_y: Array, d: Array):
    """``kl(x, y)`` from ``d = x - y`` (and ``1 - x``, ``y``, ``1 - y``) given
    separately, ``0 < y < 1``: ``d^2 / (y (1 - y)) + x L(d / y) + (1 - x) L(-d / (1 -
    y))`` with ``L(e) = ln(1 + e) - e`` (:func:`jbandits.policies.blocks.numerics.
    log1pmx`), the textbook ``x ln(x/y) + (1-x) ln((1-x)/(1-y))`` regrouped: its two
    terms cancel to ``~ d^2 / (2 y (1 - y))`` when x is close to y, which in float32
    loses 1e-3 of Z at N = 1e6 pulls, and this form does not. ``x = 0`` or ``x = 1``
    drop their term (``0 ln 0 = 0``; there ``L`` is evaluated at -1)."""
    first = jnp.where(x > 0, x * numerics.log1pmx(d / y), 0.0)
    second = jnp.where(
        one_minus_x > 0, one_minus_x * numerics.log1pmx(-d / one_minus_y), 0.0
    )
    return d * d / (y * one_minus_y) + first + second


def _bernoulli_pair(hi: Array, lo: Array, gap: Array, w_hi: Array, w_lo: Array):
    """``(kl(hi, m), kl(lo, m))`` at ``m = w_hi hi + w_lo lo`` (``w_hi + w_lo = 1``),
    for ``gap = hi - lo > 0`` (other entries are discarded by the caller).

    The differences to the midpoint are formed from ``gap`` (``hi - m = gap w_lo``,
    ``lo - m = -gap w_hi``) and ``m``, ``1 - m`` from the nearer end (``m = lo + gap
    w_hi``, ``1 - m = (1 - hi) + gap w_lo``), so that none carries the rounding of the
    weighted average and both are positive whenever ``gap > 0``."""
    up, down = gap * w_lo, gap * w_hi  # hi - m, m - lo
    safe = gap > 0
    m = jnp.where(safe, lo + down, 0.5)
    one_minus_m = jnp.where(safe, (1.0 - hi) + up, 0.5)
    kl_hi = _kl_gap(hi, 1.0 - hi, m, one_minus_m, up)
    kl_lo = _kl_gap(lo, 1.0 - lo, m, one_minus_m, -down)
    return kl_hi, kl_lo


def transport_costs(
    family: str,
    counts: Array,
    means: Array,
    leader: ArrayLike,
    arm_mask: Array,
    sigma: ArrayLike = 1.0,
) -> Array:
    """``[K]``: ``W(leader, j) = max(Z_{leader,j}, 0)`` (Shang et al. 2020, ``W_n``; 0
    where ``mu_j >= mu_leader`` or either arm is unpulled), ``+inf`` at ``j == leader``
    and at padded arms."""
    counts, means = jnp.asarray(counts), jnp.asarray(means)
    leader = jnp.asarray(leader, jnp.int32)
    at = jnp.maximum(leader, 0)  # -1 (no real arm): every arm is padded anyway
    z = pairwise_glr(family, counts[at], means[at], counts, means, sigma)
    others = arm_mask & (jnp.arange(counts.shape[-1]) != leader)
    return jnp.where(others, jnp.maximum(z, 0.0), jnp.inf)


class GLR(NamedTuple):
    """The GLR statistic at one time and the arms it is computed from."""

    value: (
        Array  # [] Z(t) = min_{j != leader} W(leader, j) (0 if the best is not unique)
    )
    leader: Array  # [] int32: empirical best (lowest index among ties; real arms only)
    challenger: Array  # [] int32: argmin_j W(leader, j) (lowest index; -1 if K = 1)


def glr(
    family: str,
    counts: Array,
    means: Array,
    arm_mask: Array,
    sigma: ArrayLike = 1.0,
) -> GLR:
    """The GLR statistic ``Z(t)`` of GK16 Sec. 3.2 over ``[K]`` counts and means.

    Leader: the empirical best among pulled real arms (unpulled arms rank last), lowest
    index on ties. ``value`` is 0 while any real arm is unpulled (module docstring),
    ``+inf`` with a single (pulled) real arm.
    """
    counts, means = jnp.asarray(counts), jnp.asarray(means)
    arm_mask = jnp.asarray(arm_mask, bool)
    pulled = counts > 0
    leader = arms.argmax_masked(jnp.where(pulled, means, -jnp.inf), arm_mask)
    costs = transport_costs(family, counts, means, leader, arm_mask, sigma)
    others = arm_mask & (jnp.arange(counts.shape[-1]) != leader)
    challenger = arms.argmin_masked(costs, others)
    value = jnp.where(jnp.all(pulled | ~arm_mask), jnp.min(costs), 0.0)
    return GLR(value.astype(costs.dtype), leader, challenger)


def _golden_min(objective, lo: Array, hi: Array, num_iters: int) -> Array:
    """Minimum value of a unimodal ``objective`` on ``[lo, hi]`` by golden-section
    search with a fixed number of steps (one new evaluation per step)."""
    a, b = lo, hi
    c, d = b - _INV_PHI * (b - a), a + _INV_PHI * (b - a)
    fc, fd = objective(c), objective(d)

    def body(_, carry):
        a, b, c, d, fc, fd = carry
        left = fc < fd  # minimum in [a, d]: d <- c, c new; else in [c, b]: c <- d
        a, b = jnp.where(left, a, c), jnp.where(left, d, b)
        new = jnp.where(left, b - _INV_PHI * (b - a), a + _INV_PHI * (b - a))
        f_new = objective(new)
        c, d = jnp.where(left, new, d), jnp.where(left, c, new)
        fc, fd = jnp.where(left, f_new, fd), jnp.where(left, fc, f_new)
        return a, b, c, d, fc, fd

    a, b, c, d, fc, fd = jax.lax.fori_loop(0, num_iters, body, (a, b, c, d, fc, fd))
    return jnp.minimum(fc, fd)


def c_gaussian(x: ArrayLike) -> Array:
    """``C_G(x) = min_{lambda in (1/2, 1]} (g_G(lambda) + x) / lambda`` with
    ``g_G(lambda) = 2 lambda - 2 lambda log(4 lambda) + log zeta(2 lambda) - log(1 -
    lambda) / 2`` (Kaufmann & Koolen, JMLR 2021, Theorem 9; Jourdan's thesis, Lemma B.1;
    ``zeta`` is Riemann's). ``C_G(x) ~ x + log x``; ``C_G(1) = 2.507``, ``C_G(5) =
    6.757``, ``C_G(20) = 22.203``. Elementwise.

    Evaluated as a golden-section search (:data:`CG_ITERS` steps) over ``s = -log(1 -
    lambda)`` in ``[log 4, 40]``, so that ``log(1 - lambda) = -s`` is exact as lambda
    approaches 1 (the minimiser satisfies ``1 - lambda ~ 1/(2x)`` for large x). The
    objective is unimodal for ``lambda >= 3/4`` (``g_G`` is convex there, so ``lambda
    g_G' - g_G`` increases) and its minimiser is above 0.909 for every ``x >= 0``, the
    range used by the thresholds; ``x`` is meaningful for ``x >= 0`` only.
    """
    dtype = _float(x)
    x = jnp.asarray(x, dtype)

    def objective(s):
        lam = -jnp.expm1(-s)
        g = 2 * lam - 2 * lam * jnp.log(4 * lam) + jnp.log(zeta(2 * lam, 1.0)) + s / 2
        return (g + x) / lam

    lo, hi = (jnp.full_like(x, v) for v in _CG_BRACKET)
    iters = CG_ITERS["float64" if dtype == jnp.float64 else "float32"]
    return _golden_min(objective, lo, hi, iters)


def _resolve(name: str, family: str) -> str:
    """The concrete threshold ``name`` stands for; ValueError when it is not proved
    (or, for "practical", used) for ``family``."""
    _validate.choice("threshold", name, THRESHOLDS)
    _validate.choice("family", family, FAMILIES)
    if name == "delta_correct":
        return DELTA_CORRECT[family]
    if family not in THRESHOLD_FAMILIES[name]:
        proved = " and ".join(THRESHOLD_FAMILIES[name])
        raise ValueError(
            f"threshold {name!r} is calibrated for {proved} arms only, not {family}: "
            f"use 'delta_correct' (here {DELTA_CORRECT[family]!r}) or 'practical'"
        )
    return name


def threshold_constant(
    name: str, delta: ArrayLike, num_arms: ArrayLike, family: str
) -> Array:
    """The part of ``beta(t, delta)`` that does not depend on ``t`` (module docstring).

    A policy may compute it once (in ``init``) and pass it to :func:`threshold` /
    :func:`stops` as ``constant=``: for "kk21" and "t3c" it holds a golden-section
    search (:func:`c_gaussian`). ``num_arms``: the number of real arms (may be traced).
    """
    name = _resolve(name, family)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    dtype = _float(delta)
    delta = jnp.asarray(delta, dtype)
    others = jnp.asarray(num_arms, dtype) - 1.0
    if name == "practical":
        return jnp.log(1.0 / delta)
    if name == "gk16":
        return jnp.log(others / delta)
    if name == "bounded":
        return jnp.log(1.0 / delta) + 2.0 + jnp.log(others)
    return 2.0 * c_gaussian(jnp.log(others / delta) / 2.0)  # kk21, t3c


def threshold(
    name: str,
    t: ArrayLike,
    delta: ArrayLike,
    num_arms: ArrayLike,
    family: str,
    *,
    constant: ArrayLike | None = None,
) -> Array:
    """``beta(t, delta)`` of the threshold ``name`` (static; module docstring).

    Args:
      name: one of :data:`THRESHOLDS`.
      t: the number of samples observed (``+inf`` is returned for ``t < 1``).
      delta: the confidence, in ``(0, 1)`` (checked when concrete).
      num_arms: the number of real arms ``K`` (e.g. ``arm_mask.sum()``; may be traced).
      family: "bernoulli" or "gaussian"; a threshold not calibrated for the family
        raises ValueError ("gk16" and "bounded" are Bernoulli, "kk21" and "t3c"
        Gaussian only).
      constant: :func:`threshold_constant` of the same arguments, if precomputed.

    Returns:
      ``[]`` (or broadcast) float array.
    """
    resolved = _resolve(name, family)
    if constant is None:
        constant = threshold_constant(name, delta, num_arms, family)
    dtype = _float(t, delta, constant)
    t = jnp.asarray(t, dtype)
    ts = jnp.maximum(t, 1.0)  # t < 1 is answered +inf below; no log of 0 is formed
    if resolved == "practical":
        timed = jnp.log(jnp.log(ts) + 1.0)
    elif resolved == "gk16":
        timed = jnp.log(2.0 * ts)
    elif resolved == "kk21":
        timed = 4.0 * jnp.log(4.0 + jnp.log(ts / 2.0))
    elif resolved == "t3c":
        timed = 4.0 * jnp.log(4.0 + jnp.log(ts))
    else:  # bounded
        timed = 2.0 * jnp.log(1.0 + ts / 2.0)
    return jnp.where(t >= 1.0, timed + jnp.asarray(constant, dtype), jnp.inf)


def stops(
    family: str,
    counts: Array,
    means: Array,
    arm_mask: Array,
    t: ArrayLike,
    delta: ArrayLike,
    sigma: ArrayLike = 1.0,
    threshold_name: str = "practical",
    *,
    constant: ArrayLike | None = None,
) -> tuple[Array, GLR]:
    """``(Z(t) > beta(t, delta), the GLR)``: the Chernoff stopping rule (GK16 eq. (8)).

    ``K`` in the threshold is the number of real arms ``arm_mask.sum()``; ``t`` is the
    number of samples observed; ``constant`` as in :func:`threshold`.
    """
    stat = glr(family, counts, means, arm_mask, sigma)
    num_real = jnp.sum(jnp.asarray(arm_mask, bool))
    beta = threshold(threshold_name, t, delta, num_real, family, constant=constant)
    return stat.value > beta, stat
