"""Bayes-UCB, Beta and Gaussian posteriors (Kaufmann, Cappe, Garivier,
AISTATS 2012).

Pull the arm with the largest upper posterior quantile

    q_j(t) = Quantile(1 - alpha_t; posterior_j),   alpha_t = 1 / (t (ln T)^c),

with ``t = n + 1`` the 1-based index of the pull being decided. The
computation works with the tail probability ``alpha_t`` (never ``1 - alpha_t``, which
loses ~6 % of ``alpha`` in float32 near ``t ~ 1e6``).

* ``posterior="beta"``: ``Beta(1 + succ_j, 1 + fail_j)`` on binarised rewards (as in
  Thompson sampling). The quantile is warm-started from the previous decision
  (:func:`jbandits.numerics.beta_quantile_newton`): the state keeps, per arm, the
  last snapped point ``g_j`` with ``(ln P(X > g_j), Mills ratio)``. Per decision
  the arm just pulled re-evaluates them under its new posterior and takes
  ``CHANGED_ARM_NEWTON`` Newton steps alone (scalar work), then all arms take
  ``BETA_NEWTON`` Newton steps and the dyadic snap: ``BETA_NEWTON`` ``[K]``-wide
  evaluations of the tail's fixed-length continued fraction per decision instead of
  30 ``betainc`` bisection steps. The index is the midpoint of the
  ``2^-num_iters`` dyadic cell holding the quantile (= ``num_iters`` bisection
  halvings) once the warm-started Newton iterate is within half a cell.
* ``posterior="gauss"``: the Gaussian model of Thompson sampling, prior ``N(0, s2)``
  and noise variance ``s2 = noise_var``, so the posterior is
  ``N(S_j / (k_j + 1), s2 / (k_j + 1))`` and
  ``q_j = S_j / (k_j + 1) + sqrt(s2 / (k_j + 1)) z_alpha``, ``z_alpha = -ndtri(alpha)``.

No forced initial pulls. At ``t = 1`` (and ``c = 0``) every quantile is equal (0 for
Beta, ``-inf`` for Gauss), so the first arm comes from the tie-break: uniform over the
real arms under ``tie_break="random"``.

Randomness: the key of a decision is split as
``key_bin, key_tie = jax.random.split(key)``; ``key_bin`` binarises the reward just
observed (Beta only), ``key_tie`` breaks ties among the maximal quantiles.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jbandits import _prng, _validate, arms, numerics
from jbandits.policies.regret.thompson import POSTERIORS, binarise
from jbandits.types import Array, ArrayLike, Policy

CHANGED_ARM_NEWTON = 3  # extra Newton steps of the arm whose posterior just changed


class BayesUCBState(NamedTuple):
    stats: arms.ArmStats  # raw rewards: counts, sums, M2 ([K] each)
    succ: Array  # [K] float: binarised successes (Beta only; stays 0 for "gauss")
    quant: tuple  # 3 x [K] float: Beta warm start (g, ln P(X > g), Mills ratio)
    arm_mask: Array  # [K] bool: real arms
    t: Array  # [] int32: pulls done (n)
    arm: Array  # [] int32: next arm


def tail_level(
    t: ArrayLike, c: ArrayLike = 0.0, horizon: ArrayLike | None = None
) -> Array:
    """``alpha_t = 1 / (t (ln T)^c)`` for the 1-based pull index ``t``.

    Without ``horizon`` the factor ``(ln T)^c`` is 1 (the ``c = 0`` level ``1/t``).
    ``ln T`` is floored at 1 (binding only for ``T <= 2``) so that ``alpha_t <= 1``.
    """
    t = jnp.asarray(t, jnp.result_type(float))
    if horizon is None:
        return 1.0 / t
    log_horizon = jnp.maximum(jnp.log(jnp.asarray(horizon, t.dtype)), 1.0)
    return 1.0 / (t * log_horizon**c)


def bayes_ucb_index(
    stats: arms.ArmStats,
    succ: Array,
    alpha: ArrayLike,
    *,
    posterior: str = "beta",
    noise_var: ArrayLike = 1.0,
    num_iters: int | None = None,
) -> Array:
    """``[K]`` upper posterior quantiles at tail probability ``alpha``."""
    if posterior == "beta":
        return numerics.beta_upper_quantile(
            1.0 + succ, 1.0 + stats.counts - succ, alpha, num_iters
        )
    shrink = stats.counts + 1.0
    z = numerics.normal_upper_quantile(alpha)
    return stats.sums / shrink + jnp.sqrt(noise_var / shrink) * z


def _beta_index(stats, succ, quant, alpha, changed, grid_bits):
    """Warm-started Beta(1 + S, 1 + F) upper quantiles; returns (index, new warm start).

    ``changed`` (int32 arm or None at init): its warm start is re-evaluated under the
    new posterior and refined alone first (cheap: one arm), then every arm is refined.
    """
    a, b = 1.0 + succ, 1.0 + stats.counts - succ
    if changed is not None:
        aj, bj, xj = a[changed], b[changed], quant[0][changed]
        lt, ratio = numerics.beta_sf(
            aj, bj, xj, numerics.beta_log_norm(aj, bj), _terms(a.dtype)
        )
        _, warm = numerics.beta_quantile_newton(
            aj, bj, alpha, xj, lt, ratio,
            num_newton=CHANGED_ARM_NEWTON, grid_bits=grid_bits,
        )  # fmt: skip
        quant = tuple(q.at[changed].set(w) for q, w in zip(quant, warm, strict=True))
    return numerics.beta_quantile_newton(a, b, alpha, *quant, grid_bits=grid_bits)


def _terms(dtype) -> int:
    return numerics._iters(numerics.BETA_CF_ITERS, dtype, None)


def bayes_ucb(
    num_arms: int,
    *,
    posterior: str = "beta",
    c: ArrayLike = 0.0,
    horizon: ArrayLike | None = None,
    noise_var: ArrayLike = 1.0,
    tie_break: str = "random",
    num_iters: int | None = None,
) -> Policy:
    """Bayes-UCB.

    Args:
      num_arms: static K_max (real arms are given by ``arm_mask`` at ``init``).
      posterior: static, ``"beta"`` (rewards in ``[0, 1]``, binarised) or ``"gauss"``.
      c: exponent of ``(ln T)^c`` in the tail level (traced, ``>= 0``); the paper's
        experiments and pymaBandits use ``c = 0`` (level ``1 - 1/t``), the theory
        ``c >= 5``. A concrete ``c != 0`` needs ``horizon``.
      horizon: T (traced), only used with ``c``.
      noise_var: Gaussian model's variance ``s2`` (traced, ``> 0``); ignored by Beta.
      tie_break: static, ``"random"`` (default) or ``"first"``: "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.
      num_iters: static resolution of the Beta quantile: the index is the midpoint
        of the ``2^-num_iters`` dyadic cell holding it, as ``num_iters`` bisection
        halvings return; default 20 (float32) / 40 (float64)
        (``numerics.BETA_GRID_BITS``).

    Returns:
      A regret :class:`~jbandits.types.Policy`; ``output`` is the empirical best arm.

    References:
      Kaufmann, Cappé, Garivier. On Bayesian upper confidence bounds for bandit
      problems. AISTATS 2012.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("posterior", posterior, POSTERIORS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("c", c, 0.0)
    _validate.in_range("noise_var", noise_var, 0.0, low_open=True)
    if num_iters is not None:
        num_iters = _validate.static_int("num_iters", num_iters, minimum=1)
    if horizon is None:
        if _validate.is_concrete(c) and np.any(np.asarray(c) != 0):
            raise ValueError("horizon is required when c != 0 (alpha = 1/(t (ln T)^c))")
    else:
        _validate.in_range("horizon", horizon, 1.0)

    def choose(key_tie, t, stats, succ, quant, arm_mask, changed):
        alpha = tail_level(t + 1, c, horizon)
        if posterior == "beta":
            index, quant = _beta_index(stats, succ, quant, alpha, changed, num_iters)
        else:
            index = bayes_ucb_index(
                stats, succ, alpha, posterior=posterior, noise_var=noise_var
            )
        arm = arms.argmax_masked(index, arm_mask, key=key_tie, tie_break=tie_break)
        return arm, quant

    def init_fn(key, arm_mask):
        _, key_tie = _prng.split(key)
        stats = arms.init_stats(num_arms)
        succ = jnp.zeros_like(stats.counts)
        # P(X > 0) = 1 (ln 0) and an infinite Mills ratio are exact for every (a, b)
        quant = (succ, succ, jnp.full_like(succ, jnp.inf))
        t = jnp.zeros((), jnp.int32)
        arm, quant = choose(key_tie, t, stats, succ, quant, arm_mask, None)
        return BayesUCBState(stats, succ, quant, arm_mask, t, arm)

    def step_fn(state, key, reward):
        key_bin, key_tie = _prng.split(key)
        stats = arms.update(state.stats, state.arm, reward)
        if posterior == "beta":
            hit = arms.one_hot(state.arm, num_arms)
            succ = state.succ + jnp.where(hit, binarise(key_bin, reward), 0.0)
        else:
            succ = state.succ
        t = state.t + 1
        arm, quant = choose(
            key_tie, t, stats, succ, state.quant, state.arm_mask, state.arm
        )
        return BayesUCBState(stats, succ, quant, state.arm_mask, t, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")
