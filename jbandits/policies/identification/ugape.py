"""UGapE (Gabillon, Ghavamzadeh, Lazaric, NIPS 2012): (eps, m) identification.

One arm-selection rule, SELECT-ARM (Gabillon, Ghavamzadeh, Lazaric, NIPS 2012, Fig. 2),
serves two settings:

* :func:`ugapeb`, fixed budget n (Fig. 1, left): returns the set ``J(t)`` with the
  smallest ``B_J(t)`` over ``t in {K+1, ..., n}`` (ties -> latest t);
* :func:`ugapec`, fixed confidence delta (Fig. 1, right): stops as soon as
  ``B_J(t) < eps`` and returns ``J(t)``.

SELECT-ARM at time t, with statistics after t - 1 pulls and widths ``beta_k``::

    U_k = mean_k + beta_k,  L_k = mean_k - beta_k
    B_k = (m-th largest U_i over i != k) - L_k
    J   = the m arms with the smallest B_k (stable: lowest index first)
    u   = argmax_{j not in J} U_j,  l = argmin_{i in J} L_i   (ties: larger beta, first)
    I   = l if beta_l >= beta_u else u                        (tie -> l)

Widths (``confidence``, static): "hoeffding" (Gabillon et al., Eq. 4) ``beta_k = b
sqrt(a / T_k)``;
"bernstein" (UNVERIFIED reconstruction of the technical report's App. B)
``beta_k = sqrt(2 a s_k^2 / T_k) + 7 a b / (3 (T_k - 1))`` with the unbiased sample
variance and two initial pulls per arm. In the fixed-confidence setting ``a`` is
``a_t = c ln(c0 K (t - 1)^3 / delta)``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms

CONFIDENCES = ("hoeffding", "bernstein")


class Selection(NamedTuple):
    """Every quantity of one SELECT-ARM call (padded arms: index ``+inf``)."""

    upper: Array  # [K] U_k
    lower: Array  # [K] L_k
    index: Array  # [K] B_k
    chosen: Array  # [K] bool: J(t)
    index_chosen: Array  # [] B_J(t) = max_{k in J} B_k
    u: Array  # [] int32: best arm outside J (-1 if every real arm is in J)
    l: Array  # [] int32: worst arm inside J
    arm: Array  # [] int32: I(t), the arm to pull


def ugape_width(
    stats: arms.ArmStats, confidence: str, a: ArrayLike, b: ArrayLike
) -> Array:
    """Confidence widths ``beta_k`` from the pull counts ``T_k`` (module docstring).

    Hoeffding's ``b sqrt(a / T_k)`` is evaluated as ``sqrt(a (b b) / T_k)``: no product
    then feeds a sum downstream, which XLA on CPU would contract into an FMA (rounded
    differently from the plain-Python reference and between fusions).
    """
    if confidence == "hoeffding":
        return jnp.sqrt(a * (b * b) / jnp.maximum(stats.counts, 1.0))
    n = jnp.maximum(stats.counts, 2.0)
    return jnp.sqrt(2 * a * arms.var_unbiased(stats) / n) + 7 * a * b / (3 * (n - 1))


def ugapec_exploration(
    pulls: ArrayLike, num_real: ArrayLike, delta: ArrayLike, c: ArrayLike, c0: ArrayLike
) -> Array:
    """``a_t = c ln(c0 K (t - 1)^3 / delta)`` with ``t - 1 = pulls`` (Gabillon et al.,
    NIPS 2012, Eq. 4)."""
    pulls = jnp.asarray(pulls, jnp.result_type(float))
    num_real = jnp.asarray(num_real, pulls.dtype)
    return c * jnp.log(c0 * num_real * pulls**3 / delta)


def _first_of_best(primary: Array, beta: Array, eligible: Array) -> Array:
    """arg-max of ``primary`` over ``eligible``; ties -> larger ``beta``, then first;
    ``-1`` when no arm is eligible.

    One lexicographic sort rather than ``primary == max(primary)``: XLA on CPU may
    contract ``mean +- b * sqrt(.)`` into an FMA in one fusion and not in another, so
    a recomputed ``primary`` need not equal its own maximum bit for bit.
    """
    # NaN primaries rank last among the eligible arms; ineligible arms (key NaN) after
    # every eligible one, so an ineligible arm is never returned
    key = jnp.where(eligible, jnp.where(jnp.isnan(primary), jnp.inf, -primary), jnp.nan)
    order = jnp.lexsort((jnp.arange(primary.shape[-1]), -beta, key))
    return jnp.where(jnp.any(eligible), order[0], -1).astype(jnp.int32)


def select_arm(means: Array, beta: Array, arm_mask: Array, m: int) -> Selection:
    """UGapE's SELECT-ARM (Gabillon et al., NIPS 2012, Fig. 2) on ``[K]`` means and
    widths; ``m`` static.

    Needs ``1 <= m < K_real`` (checked where the mask is concrete; with a traced
    mask and ``m >= K_real`` every real arm is in J, ``u = -1`` and ``I = l``, so
    no padded arm is pulled). Pure: exposed for tests. The m-th largest
    ``U_i`` over ``i != k`` is read from one stable sort of U (ties: lowest index), and
    ``B_k`` is evaluated as ``(mean_j - mean_k) + (beta_j + beta_k)`` for that arm j, so
    that the frequent exact ties of the mathematics (two arms with equal means) are
    exact ties in floating point too.
    """
    num_arms = means.shape[-1]
    upper = means + beta
    lower = means - beta
    rank = arms.rank(upper, arm_mask)
    order = jnp.empty_like(rank).at[rank].set(jnp.arange(num_arms, dtype=rank.dtype))
    # j_k: the arm holding the m-th largest U among i != k (U sorted stably, §3.5)
    other = jnp.where(rank < m, order[m], order[m - 1])
    # B_k = U_j - L_k evaluated as (mean_j - mean_k) + (beta_j + beta_k): arms j, k
    # with equal means get bit-identical B_k = B_j (frequent with Bernoulli rewards)
    index = (means[other] - means) + (beta[other] + beta)
    index = jnp.where(arm_mask, index, jnp.inf)
    chosen = arms.keep_top(-index, arm_mask, m)
    index_chosen = jnp.max(jnp.where(chosen, index, -jnp.inf))
    u = _first_of_best(upper, beta, arm_mask & ~chosen)
    l = _first_of_best(-lower, beta, chosen)
    # no u only outside the contract (m >= the real arms, traced so unchecked): l is
    # then the one real candidate, never a padded arm
    pull_l = (u < 0) | (beta[l] >= beta[jnp.maximum(u, 0)])
    arm = jnp.where(pull_l, l, u).astype(jnp.int32)
    return Selection(upper, lower, index, chosen, index_chosen, u, l, arm)


def _top_empirical(stats: arms.ArmStats, arm_mask: Array, m: int) -> Array:
    """Fallback read-out before the first SELECT-ARM: m best empirical means."""
    score = jnp.where(stats.counts > 0, arms.mean(stats), -jnp.inf)
    return arms.keep_top(score, arm_mask, m)


def _check_common(num_arms, m, epsilon, b, confidence):
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    m = _validate.static_int("m", m, minimum=1)
    if m >= num_arms:
        raise ValueError(f"m must satisfy 1 <= m < num_arms = {num_arms}, got m={m}")
    _validate.in_range("epsilon", epsilon, 0.0)
    _validate.in_range("b", b, 0.0, low_open=True)
    _validate.choice("confidence", confidence, CONFIDENCES)
    return num_arms, m, (1 if confidence == "hoeffding" else 2)


def min_budget(num_real_arms: int, *, confidence: str = "hoeffding", **kwargs) -> int:
    """The smallest budget of UGapEb with ``num_real_arms`` real arms: one SELECT-ARM
    call after the initial pulls (one per arm, two with ``"bernstein"`` widths)."""
    del kwargs
    passes = 2 if confidence == "bernstein" else 1
    return passes * int(num_real_arms) + 1


def _check_mask(arm_mask, m: int, passes: int, budget=None) -> None:
    if not _validate.is_concrete(arm_mask):
        return
    num_real = int(jnp.sum(arm_mask))
    if m >= num_real:
        raise ValueError(f"m must satisfy 1 <= m < K = {num_real} real arms, got m={m}")
    n = _validate.concrete_int("budget", budget, maximum=_validate.INT32_MAX)
    if n is not None and n <= passes * num_real:
        raise ValueError(
            f"budget must be > {passes} K = {passes * num_real} (SELECT-ARM needs at "
            f"least one call after the initial pulls), got {n}"
        )


def _update_select(state, reward, passes: int, m: int, explore, confidence, b):
    """The step both settings share: the statistics updated with ``reward``, the pull
    count ``t``, the forced round-robin pull ``(forced, rr)`` and SELECT-ARM on the
    new statistics with the exploration ``explore(t, arm_mask)`` (``a`` or ``a_t``)."""
    stats = arms.update(state.stats, state.arm, reward)
    t = state.t + 1
    forced, rr = arms.forced_arm(t, state.arm_mask, passes)
    beta = ugape_width(stats, confidence, explore(t, state.arm_mask), b)
    sel = select_arm(arms.mean(stats), beta, state.arm_mask, m)
    return stats, t, forced, rr, sel


# ----------------------------------------------------------------------------- UGapEb
class UGapEbState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: pulls done
    best_index: Array  # [] smallest B_J(t) so far (+inf before the first SELECT-ARM)
    best_set: Array  # [K] bool: J(t) achieving it
    arm: Array  # [] int32: next arm (never idle: the engine stops at the budget)


@registry.policy("ugapeb", static=("m",), min_budget=min_budget)
def ugapeb(
    num_arms: int,
    *,
    m: int = 1,
    budget: ArrayLike,
    a: ArrayLike,
    epsilon: ArrayLike = 0.0,
    b: ArrayLike = 1.0,
    confidence: str = "hoeffding",
) -> Policy:
    """UGapEb: (eps, m) identification with a fixed budget (Gabillon et al., Fig. 1
    left).

    After one pull per arm (two with ``confidence="bernstein"``), pull SELECT-ARM's
    ``I(t)`` for ``t = K+1, ..., n`` (widths ``beta_k = b sqrt(a / T_k)``). The output
    is the ``J(t)`` with the smallest ``B_J(t)`` over those t (ties -> latest t);
    before the first SELECT-ARM, the m best empirical means. ``epsilon`` enters only
    through the oracle tuning of ``a`` (:func:`ugapeb_oracle_a`). Other ties go to
    the lowest index (:mod:`jbandits.policies`).

    Args:
      num_arms: static K (including padded arms).
      m: static number of arms to return, ``1 <= m < K``.
      budget: n (traced); only ``t <= n`` are candidate times. The policy never goes
        idle by itself (the engine stops at the budget; ``stopped`` stays False).
      a: exploration parameter a > 0 (traced).
      epsilon: accuracy eps >= 0 (traced; unused by the sampling rule, validated).
      b: reward range b > 0 (traced; rewards in [0, b]).
      confidence: static, "hoeffding" (Gabillon et al.) or "bernstein" (width
        ``sqrt(2 a s_k^2 / T_k) + 7 a b / (3 (T_k - 1))``; UNVERIFIED constants, see
        the module docstring).

    References:
      Gabillon, Ghavamzadeh, Lazaric. Best arm identification: a unified approach to
      fixed budget and fixed confidence. NIPS 2012.
    """
    num_arms, m, passes = _check_common(num_arms, m, epsilon, b, confidence)
    _validate.in_range("a", a, 0.0, low_open=True)
    _validate.concrete_int("budget", budget, minimum=1, maximum=_validate.INT32_MAX)

    def init_fn(key, arm_mask):
        del key
        _check_mask(arm_mask, m, passes, budget)
        return UGapEbState(
            arms.init_stats(num_arms),
            arm_mask,
            jnp.zeros((), jnp.int32),
            jnp.asarray(jnp.inf, jnp.result_type(float)),
            jnp.zeros((num_arms,), bool),
            arms.round_robin(0, arm_mask),
        )

    def explore(t, arm_mask):
        del t, arm_mask
        return a  # the fixed a of the budget setting

    def step_fn(state, key, reward):
        del key
        stats, t, forced, rr, sel = _update_select(
            state, reward, passes, m, explore, confidence, b
        )
        better = ~forced & (t < budget) & (sel.index_chosen <= state.best_index)
        best_index = jnp.where(better, sel.index_chosen, state.best_index)
        best_set = jnp.where(better, sel.chosen, state.best_set)
        arm = jnp.where(forced, rr, sel.arm).astype(jnp.int32)
        return UGapEbState(stats, state.arm_mask, t, best_index, best_set, arm)

    def output_fn(state):
        fallback = _top_empirical(state.stats, state.arm_mask, m)
        return jnp.where(jnp.isfinite(state.best_index), state.best_set, fallback)

    return Policy(init_fn, step_fn, output_fn, "top_m")


# ----------------------------------------------------------------------------- UGapEc
class UGapEcState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    t: Array  # [] int32: pulls done
    chosen: Array  # [K] bool: latest J(t) (the returned set once stopped)
    arm: Array  # [] int32: next arm; -1 once stopped (absorbing)


@registry.policy("ugapec", static=("m",), optional=("c",))
def ugapec(
    num_arms: int,
    *,
    m: int = 1,
    epsilon: ArrayLike = 0.0,
    delta: ArrayLike = 0.1,
    c: ArrayLike | None = None,
    c0: ArrayLike = 4.0,
    b: ArrayLike = 1.0,
    confidence: str = "hoeffding",
) -> Policy:
    """UGapEc: (eps, m) identification with fixed confidence (Gabillon et al., Fig. 1
    right).

    After one pull per arm (two with ``confidence="bernstein"``), at every time t the
    stopping rule is tested before pulling: if ``B_J(t) < eps`` the policy stops
    (``state.arm = -1``, absorbing) and returns ``J(t)``; the engine's ``num_pulls`` is
    then the sample complexity ``t - 1``. Otherwise it pulls SELECT-ARM's ``I(t)`` with
    widths ``beta_k = b sqrt(a_t / T_k)``, ``a_t = c ln(c0 K (t - 1)^3 / delta)``.
    If the horizon is reached first the engine reports ``stopped = False`` and the
    output (the latest ``J(t)``) carries no guarantee. With ``eps = 0`` the rule stops
    only when ``B_J(t) < 0``. Ties go to the lowest index (:mod:`jbandits.policies`).

    Args:
      num_arms: static K (including padded arms).
      m: static number of arms to return, ``1 <= m < K``.
      epsilon: accuracy eps >= 0 (traced).
      delta: confidence level, 0 < delta < 1 (traced).
      c: exploration constant c > 0 (traced); default 1/2 for "hoeffding" (Gabillon
        et al.: "c = 1/2 is always a good choice") and 1 for "bernstein"
        (UNVERIFIED).
      c0: constant inside the log, default 4 (Gabillon et al., Eq. 4; UNVERIFIED
        for Bernstein).
      b: reward range b > 0 (traced; rewards in [0, b]).
      confidence: static, "hoeffding" or "bernstein", the widths of :func:`ugapeb`.

    References:
      Gabillon, Ghavamzadeh, Lazaric (NIPS 2012), Fig. 1 right; the paper as cited
      by :func:`ugapeb`.
    """
    num_arms, m, passes = _check_common(num_arms, m, epsilon, b, confidence)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
    c = numbers.given(c, 0.5 if confidence == "hoeffding" else 1.0)
    _validate.in_range("c", c, 0.0, low_open=True)
    _validate.in_range("c0", c0, 0.0, low_open=True)

    def init_fn(key, arm_mask):
        del key
        _check_mask(arm_mask, m, passes)
        return UGapEcState(
            arms.init_stats(num_arms),
            arm_mask,
            jnp.zeros((), jnp.int32),
            jnp.zeros((num_arms,), bool),
            arms.round_robin(0, arm_mask),
        )

    def explore(t, arm_mask):
        return ugapec_exploration(t, jnp.sum(arm_mask), delta, c, c0)

    def step_fn(state, key, reward):
        del key
        stats, t, forced, rr, sel = _update_select(
            state, reward, passes, m, explore, confidence, b
        )
        stop = ~forced & (sel.index_chosen < epsilon)
        chosen = jnp.where(forced, state.chosen, sel.chosen)
        arm = jnp.where(forced, rr, jnp.where(stop, -1, sel.arm)).astype(jnp.int32)
        return UGapEcState(stats, state.arm_mask, t, chosen, arm)

    def output_fn(state):
        fallback = _top_empirical(state.stats, state.arm_mask, m)
        return jnp.where(jnp.any(state.chosen), state.chosen, fallback)

    return Policy(init_fn, step_fn, output_fn, "top_m")
