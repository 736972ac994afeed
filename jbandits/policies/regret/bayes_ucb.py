"""Bayes-UCB (Kaufmann, Cappé, Garivier, AISTATS 2012), Beta and Gaussian posteriors.

Pull the arm with the largest upper posterior quantile

    q_j(t) = Quantile(1 - alpha_t; posterior_j),   alpha_t = 1 / (t (ln T)^c),

with ``t = n + 1`` the 1-based index of the pull being decided. The computation works
with the tail probability ``alpha_t`` (never ``1 - alpha_t``, which loses ~6 % of
``alpha`` in float32 near ``t ~ 1e6``).

* ``posterior="beta"``: ``Beta(1 + succ_j, 1 + fail_j)`` on binarised rewards (as in
  Thompson sampling). The index is the midpoint of the ``2^-num_iters`` dyadic cell
  ``(lo, lo + 2^-num_iters]`` holding the quantile (what ``num_iters`` bisection
  halvings return), computed lazily (``_beta_cells._beta_choose``): an arm is
  resolved to its cell only when needed to tell the arg-max and its exact ties apart.
  Per arm the state keeps the last point ``x_j`` where the tail was evaluated, with
  ``(ln P(X > x_j), Mills ratio)``, the posterior's log-norm and a grid point ``lo_j``
  below the quantile. As ``alpha`` only falls between two pulls of an arm, ``lo_j``
  stays valid, and ``ln P(X > x)`` being concave in ``ln(1 - x)`` (log-concavity of the
  density of ``ln(1 - X)`` for ``a, b >= 1``) turns the stored tangent at ``x_j`` into a
  grid point above the quantile at no cost
  (:func:`jbandits.policies.blocks.numerics.beta_root_ceiling`). Per decision the pulled arm takes one
  Halley step guided by the tail recurrences (DLMF 8.17.20-21) and one tail evaluation a
  cell below it; while several arms can still be the arg-max and one is not resolved,
  the open one with the highest ceiling is probed at one grid point (a data-dependent
  ``lax.while_loop``). A lone contender is the arg-max unresolved; arms that cannot be
  the arg-max get index ``-inf``: the pulled arm and the exact ties are those of the
  full index vector. ``Execution.fixed_bisection`` gives the same cells (bar a root
  within rounding error of a grid point) by ``num_iters`` halvings of every arm in a
  loop of static trip count (slower: ``benchmarks/notes_bayes_ucb.md``).
* ``posterior="gauss"``: the Gaussian model of Thompson sampling, prior ``N(0, s2)`` and
  noise variance ``s2 = noise_var``, so the posterior is
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

from jbandits.core import numbers, registry
from jbandits.core import prng as _prng
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, numerics
from jbandits.policies.regret._beta_cells import _beta_choose
from jbandits.policies.regret.thompson import POSTERIORS, add_success


class BayesUCBState(NamedTuple):
    stats: arms.ArmStats  # raw rewards: counts and sums ([K] each; no M2)
    succ: Array  # [K] float: binarised successes (Beta only; stays 0 for "gauss")
    quant: tuple  # 5 x [K] float: Beta (x, ln P(X > x), Mills ratio, log-norm, lo)
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
    if numbers.absent(horizon):
        return 1.0 / t
    log_horizon = jnp.maximum(jnp.log(jnp.asarray(horizon, t.dtype)), 1.0)
    return numbers.given(horizon, 1.0 / t, 1.0 / (t * log_horizon**c))


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
    mean, scale = gauss_posterior(stats, noise_var)
    return mean + scale * numerics.normal_upper_quantile(alpha)


def gauss_posterior(stats: arms.ArmStats, noise_var: ArrayLike) -> tuple[Array, Array]:
    """``[K]`` means ``S / (k + 1)`` and scales ``sqrt(s2 / (k + 1))`` of the Gaussian
    posteriors ``N(S / (k + 1), s2 / (k + 1))``."""
    shrink = stats.counts + 1.0
    return stats.sums / shrink, jnp.sqrt(noise_var / shrink)


@registry.policy("bayes_ucb", static=("num_iters",), optional=("horizon",))
def bayes_ucb(
    num_arms: int,
    *,
    posterior: str = "beta",
    c: ArrayLike = 0.0,
    horizon: ArrayLike | None = None,
    noise_var: ArrayLike = 1.0,
    tie_break: str = "random",
    num_iters: int | None = None,
    execution: Execution | None = None,
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
        (``numerics.BETA_GRID_BITS``), at most 23 / 52 (the cells' midpoints must be
        exact in the dtype).
      execution: static :class:`~jbandits.core.execution.Execution`, how the step is
        compiled (never what it computes); the batched runner sets it. Default:
        :meth:`Execution.default() <jbandits.core.execution.Execution.default>`.

    Returns:
      A regret :class:`~jbandits.core.types.Policy`; ``output`` is the empirical best arm.

    References:
      Kaufmann, Cappé, Garivier. On Bayesian upper confidence bounds for bandit
      problems. AISTATS 2012.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    _validate.choice("posterior", posterior, POSTERIORS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("c", c, 0.0)
    _validate.in_range("noise_var", noise_var, 0.0, low_open=True)
    if num_iters is not None:
        num_iters = _validate.static_int("num_iters", num_iters, minimum=1)
    if numbers.absent(horizon):
        if _validate.is_concrete(c) and np.any(np.asarray(c) != 0):
            raise ValueError("horizon is required when c != 0 (alpha = 1/(t (ln T)^c))")
    else:
        _validate.in_range("horizon", horizon, 1.0)

    # from execution.gauss_kept_arms arms the Gaussian posterior's mean and scale are
    # kept per arm, as extra rows of the statistics (benchmarks/notes_policies.md)
    kept = posterior == "gauss" and num_arms >= execution.gauss_kept_arms

    def _gauss_rows(stats):
        """``[2, K]``: the rows kept, :func:`gauss_posterior`'s means and scales."""
        return jnp.stack(gauss_posterior(stats, noise_var))

    def choose(key_tie, t, stats, succ, quant, arm_mask, changed, success=None):
        alpha = tail_level(t + 1, c, horizon)
        if posterior == "beta":
            a, b = 1.0 + succ, 1.0 + stats.counts - succ
            bits = numerics._iters(numerics.BETA_GRID_BITS, a.dtype, num_iters)
            # grid points and midpoints stay exact in the dtype (2^-23 in float32),
            # so every probe moves a bound by at least one cell
            bits = min(bits, jnp.finfo(a.dtype).nmant)
            index, quant = _beta_choose(
                a,
                b,
                quant,
                jnp.log(alpha),
                changed,
                success,
                arm_mask,
                bits,
                execution.fixed_bisection,
            )
        else:
            if kept:  # the rows kept with the statistics
                mean, scale = stats.extra[0], stats.extra[1]
            else:
                mean, scale = gauss_posterior(stats, noise_var)
            index = mean + scale * numerics.normal_upper_quantile(alpha)
        arm = arms.argmax_masked(index, arm_mask, key=key_tie, tie_break=tie_break)
        return arm, quant

    def init_fn(key, arm_mask):
        _, key_tie = _prng.split(key)
        stats = arms.init_stats(num_arms, variance=False, extra=2 * kept)
        if kept:
            stats = arms.with_extra(stats, _gauss_rows(stats))
        succ = jnp.zeros_like(stats.counts)
        # P(X > 0) = 1 (ln 0) and an infinite Mills ratio are exact for every (a, b)
        ones = jnp.ones_like(succ)
        quant = (succ, succ, jnp.full_like(succ, jnp.inf))
        quant += (numerics.beta_log_norm(ones, ones, integer=True), succ)
        t = jnp.zeros((), jnp.int32)
        arm, quant = choose(key_tie, t, stats, succ, quant, arm_mask, None)
        return BayesUCBState(stats, succ, quant, arm_mask, t, arm)

    def step_fn(state, key, reward):
        key_bin, key_tie = _prng.split(key)
        derive = _gauss_rows if kept else None
        stats = arms.update(state.stats, state.arm, reward, derive=derive)
        if posterior == "beta":
            succ, won = add_success(state.succ, state.arm, key_bin, reward)
        else:
            succ, won = state.succ, None
        t = state.t + 1
        arm, quant = choose(
            key_tie, t, stats, succ, state.quant, state.arm_mask, state.arm,
            None if won is None else won > 0,
        )  # fmt: skip
        return BayesUCBState(stats, succ, quant, state.arm_mask, t, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.arm_mask)

    return Policy(init_fn, step_fn, output_fn, "regret")
