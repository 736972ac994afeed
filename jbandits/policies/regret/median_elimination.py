"""Median Elimination (Even-Dar, Mannor, Mansour, JMLR 2006), for cumulative regret.

Round ``l``: sample every surviving arm ``n_l`` times, then drop the arms whose
estimate is below the median; ``eps`` shrinks by 3/4 and ``delta`` halves per round.
Once one arm survives it is pulled until the budget ends.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms

MEANS = ("round", "cumulative")


class MedianEliminationState(NamedTuple):
    stats: arms.ArmStats  # [K] cumulative counts, sums, M2
    arm_mask: Array  # [K] bool: real arms
    active: Array  # [K] bool: surviving arms S_l
    round_index: Array  # [] int32: l - 1 (0-based round)
    eps_l: Array  # [] float: eps_l (eps / 4, times 3/4 per round)
    delta_l: Array  # [] float: delta_l (delta / 2, halved per round)
    round_counts: Array  # [K] float: pulls in this round
    round_sums: Array  # [K] float: reward sums in this round
    arm: Array  # [] int32: next arm


def median_elimination_samples(
    eps_l: ArrayLike, delta_l: ArrayLike, square: bool = True
) -> Array:
    """``n_l`` (float, exact integers) of a round with accuracy ``eps_l``, confidence
    ``delta_l``: ``ceil((4 / eps_l^2) ln(3 / delta_l))`` (``square=True``, the paper)
    or ``ceil((1 / (eps_l / 2)) ln(3 / delta_l))`` (``square=False``, the authors'
    code). Kept in floating point: it grows without bound when rounds stop shrinking,
    and a round that needs more pulls than the budget simply never ends (this replaces
    a clamp ``n_l <= T`` without changing any pull).
    """
    log_term = jnp.log(3.0 / delta_l)
    if square:
        return jnp.ceil(4.0 / (eps_l * eps_l) * log_term)
    return jnp.ceil(1.0 / (eps_l / 2.0) * log_term)


def _median(values: Array, active: Array) -> Array:
    """``numpy.median`` of ``values`` over the active entries."""
    vals = jnp.sort(jnp.where(active, values, jnp.inf))
    c = jnp.sum(active)
    lo = vals[jnp.maximum((c - 1) // 2, 0)]
    hi = vals[jnp.maximum(c // 2, 0)]
    even = 0.5 * (vals[jnp.maximum(c // 2 - 1, 0)] + hi)
    return jnp.where(c % 2 == 1, lo, even)


@registry.policy("median_elimination")
def median_elimination(
    num_arms: int,
    *,
    eps: ArrayLike = 0.1,
    delta: ArrayLike = 0.1,
    square: bool = True,
    means: str = "round",
    tie_break: str = "random",
) -> Policy:
    """Median Elimination (eps, delta), run for cumulative regret.

    Step (Even-Dar et al. 2006, Median Elimination): after the update, if ``|S| > 1``
    and every surviving arm has ``n_l`` pulls in this round, compute the median ``med``
    (``numpy.median`` convention) of the estimates ``p_a`` over ``S``, remove the arms
    with ``p_a < med`` (ties at the median stay, so fewer than half may go), reset the
    round counters and ``l += 1``. Next arm: the surviving arm with the fewest pulls in
    this round (ties by ``tie_break``; no forced initial pass), which pulls a single
    survivor until the budget ends.

    Args:
      num_arms: static K_max.
      eps: accuracy (traced), default 0.1; must be > 0.
      delta: confidence (traced), default 0.1; in (0, 1).
      square: static; True (paper): ``n_l = ceil(4 / eps_l^2 ln(3 / delta_l))``; False
        (authors' code): ``ceil(2 / eps_l ln(3 / delta_l))``.
      means: static; ``"round"`` (paper): estimates from this round's samples only;
        ``"cumulative"`` (authors' code): cumulative empirical means.
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the surviving arm with the largest cumulative
      empirical mean (lowest index on ties); the survivor once one is left.

    References:
      Even-Dar, Mannor, Mansour. Action elimination and stopping conditions for the
      multi-armed bandit and reinforcement learning problems. JMLR 7, 2006.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    square = bool(square)
    _validate.choice("means", means, MEANS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("eps", eps, 0.0, low_open=True)
    _validate.in_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)

    def pick(active, round_counts, key):
        return arms.argmin_masked(round_counts, active, key=key, tie_break=tie_break)

    def init_fn(key, arm_mask):
        ftype = jnp.result_type(float)
        zeros = jnp.zeros((num_arms,), ftype)
        eps_1 = jnp.asarray(eps, ftype) / 4.0
        delta_1 = jnp.asarray(delta, ftype) / 2.0
        return MedianEliminationState(
            arms.init_stats(num_arms),
            arm_mask,
            arm_mask,
            jnp.zeros((), jnp.int32),
            eps_1,
            delta_1,
            zeros,
            zeros,
            pick(arm_mask, zeros, key),
        )

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        hit = arms.one_hot(state.arm, num_arms)
        round_counts = state.round_counts + hit
        round_sums = state.round_sums + jnp.where(hit, reward, 0.0)
        target = median_elimination_samples(state.eps_l, state.delta_l, square)
        min_count = jnp.min(jnp.where(state.active, round_counts, jnp.inf))
        done = (min_count >= target) & (jnp.sum(state.active) > 1)
        if means == "round":
            estimate = round_sums / jnp.maximum(round_counts, 1.0)
        else:
            estimate = arms.mean(stats)
        med = _median(estimate, state.active)
        active = jnp.where(done, state.active & ~(estimate < med), state.active)
        round_counts = jnp.where(done, 0.0, round_counts)
        round_sums = jnp.where(done, 0.0, round_sums)
        round_index = state.round_index + done.astype(jnp.int32)
        eps_l = jnp.where(done, 0.75 * state.eps_l, state.eps_l)
        delta_l = jnp.where(done, 0.5 * state.delta_l, state.delta_l)
        return MedianEliminationState(
            stats,
            state.arm_mask,
            active,
            round_index,
            eps_l,
            delta_l,
            round_counts,
            round_sums,
            pick(active, round_counts, key),
        )

    def output_fn(state):
        return arms.best_empirical(state.stats, state.active)

    return Policy(init_fn, step_fn, output_fn, "regret")
