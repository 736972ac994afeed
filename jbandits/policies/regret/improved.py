"""UCB-Improved (Auer and Ortner 2010, "UCB revisited", Periodica Math. Hungarica 61).

Rounds ``m = 0..M``: pull the active arms until each has ``n_m`` pulls (a cumulative
target), then eliminate every arm whose upper bound is below the best lower bound and
halve ``Delta_m``. The schedule depends on the horizon only, so it is exact host-side
float64 arithmetic with a static length ``M + 2``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms, rounds, schedules


class UCBImprovedState(NamedTuple):
    stats: arms.ArmStats  # [K] counts, sums, M2
    arm_mask: Array  # [K] bool: real arms
    active: Array  # [K] bool: surviving arms B_m
    m: Array  # [] int32: round, 0..M+1 (M+1 = rounds exhausted)
    t: Array  # [] int32: pulls done (n, completed pulls)
    arm: Array  # [] int32: next arm


ImprovedSchedule = schedules.ImprovedSchedule
ucb_improved_schedule = schedules.ucb_improved


@registry.policy("ucb_improved", static=("horizon",))
def ucb_improved(num_arms: int, *, horizon: int, tie_break: str = "random") -> Policy:
    """UCB-Improved.

    Step (Auer and Ortner 2010, Section 3): after the update, if ``|B| > 1``, ``m <= M``
    and every active arm has ``z_i >= n_m``, remove the active arms with
    ``mean_i + w_m < max_{j active} (mean_j - w_m)`` and set ``m += 1``. Next arm: the
    first K pulls go to the real arms in index order (our resolution); then the
    least-pulled active arm while ``m <= M`` (this also pulls a single survivor until
    T), and the active arm with the largest empirical mean once the rounds are
    exhausted (``m = M + 1``; our resolution, the paper is silent). Ties (least-pulled
    or largest mean) follow ``tie_break``.

    The authors' code adds ``n_m`` pulls per round instead of a cumulative target;
    this implementation follows the paper.

    Diagnostics: ``state.active`` is the surviving set.

    Args:
      num_arms: static K_max.
      horizon: static T (a Python int); it fixes ``M`` and the whole schedule.
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the active arm with the largest empirical mean
      (lowest index on ties).

    References:
      Auer, Ortner. UCB revisited: Improved regret bounds for the stochastic
      multi-armed bandit problem. Periodica Mathematica Hungarica 61, 2010.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    sched = schedules.ucb_improved(horizon)

    def init_fn(key, arm_mask):
        del key  # the first pull is forced
        zero = jnp.zeros((), jnp.int32)
        stats, active, arm = rounds.opening(num_arms, arm_mask)
        return UCBImprovedState(stats, arm_mask, active, zero, zero, arm)

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        n = state.t + 1
        targets = jnp.asarray(sched.targets, stats.counts.dtype)
        widths = jnp.asarray(sched.widths, stats.counts.dtype)
        mean = arms.mean(stats)
        m = state.m
        min_count = jnp.min(jnp.where(state.active, stats.counts, jnp.inf))
        done = (
            (min_count >= targets[m]) & (m <= sched.cap) & (jnp.sum(state.active) > 1)
        )
        w = widths[m]
        kept, _ = rounds.eliminate(mean, w, state.active)
        active = jnp.where(done, kept, state.active)
        m = jnp.where(done, m + 1, m)
        least = arms.argmin_masked(stats.counts, active, key=key, tie_break=tie_break)
        greedy = arms.argmax_masked(mean, active, key=key, tie_break=tie_break)
        forced, rr = arms.forced_arm(n, state.arm_mask)
        arm = jnp.where(forced, rr, jnp.where(m <= sched.cap, least, greedy))
        return UCBImprovedState(stats, state.arm_mask, active, m, n, arm)

    def output_fn(state):
        return arms.best_empirical(state.stats, state.active)

    def diagnostics_fn(state):
        return {"active": state.active & state.arm_mask, "round": state.m}

    return Policy(init_fn, step_fn, output_fn, "regret", diagnostics=diagnostics_fn)
