"""Successive Accept-Reject, SAR (Bubeck, Wang, Viswanathan, ICML 2013).

Top-m identification with the Successive Rejects schedule
(:func:`jbandits.policies.blocks.schedules.successive_rejects`). At the end of phase k the
A = K + 1 - k active arms are sorted by cumulative mean, decreasing (stable: ties by
index), sigma(1..A); with m_rem arms still to accept,

    gap(sigma(r)) = mean(sigma(r)) - mean(sigma(m_rem + 1))   if r <= m_rem
    gap(sigma(r)) = mean(sigma(m_rem)) - mean(sigma(r))       if r >  m_rem

The arm with the largest gap (lowest index on ties) is deactivated: accepted if its
rank r <= m_rem, rejected otherwise. The paper leaves the edge cases open: when
m_rem = 0 every remaining arm is rejected, when m_rem = A every remaining arm is
accepted; the decision is then forced, the procedure ends and the remaining steps are
idle.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases
from jbandits.policies.identification.successive_rejects import SCHEDULE


class SARState(NamedTuple):
    stats: arms.ArmStats  # cumulative per-arm statistics
    active: Array  # [K] bool: undecided arms
    accepted: Array  # [K] bool: accepted arms
    m_rem: Array  # [] int32: arms still to accept
    phase: Array  # [] int32: current phase (0-based); num_phases = finished
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm, -1 = idle
    sched: schedules.PhaseSchedule  # the SR schedule of this instance's real K


def _force(active, accepted, m_rem):
    """Edge cases: m_rem = 0 rejects the rest, m_rem >= #active accepts the rest."""
    num_active = jnp.sum(active)
    accept_all = (m_rem >= num_active) & (num_active > 0)
    forced = (m_rem <= 0) | accept_all
    accepted = accepted | (active & accept_all)
    m_rem = jnp.where(accept_all, m_rem - num_active, m_rem)
    active = active & ~forced
    return active, accepted, m_rem.astype(jnp.int32), forced


@registry.policy("sar", static=("m",), shared=SCHEDULE)
def sar(num_arms: int, *, m: ArrayLike, table, execution: Execution) -> Policy:
    """Successive Accept-Reject for fixed-budget top-m identification.

    Args:
      num_arms: static K_max (including padded arms).
      m: number of arms to identify, 1 <= m < K (traced).

    Returns:
      A :class:`~jbandits.core.types.Policy`; output is the accepted set, ``[K] bool``
      (exactly m arms once the schedule is spent; before that, the accepted arms plus
      the m_rem active arms with the largest means). Ties go to the lowest index
      (:mod:`jbandits.policies`).

    References:
      Bubeck, Wang, Viswanathan. Multiple identifications in multi-armed bandits.
      ICML 2013.
    """
    _validate.in_range("m", m, 1, num_arms - 1)
    m_int = jnp.asarray(m, jnp.int32)
    bound = _phases.max_ends(table.ends, table.num_phases)

    def init_fn(key, arm_mask):
        del key
        sched, active = _phases.start(table, arm_mask)
        stats = arms.init_stats(num_arms)
        first = _phases.first_or_idle(arms.least_pulled(stats.counts, active), active)
        zero = jnp.zeros((), jnp.int32)
        active, accepted, m_rem, _ = _force(active, jnp.zeros((num_arms,), bool), m_int)
        first = _phases.first_or_idle(first, active)
        return SARState(stats, active, accepted, m_rem, zero, zero, first, sched)

    def step_fn(state, key, reward):
        del key
        sched = state.sched
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        mu = arms.mean(stats)

        def decide(p, carry):
            active, accepted, m_rem, stop = carry
            if_stopped = carry
            rank = arms.rank(mu, active)  # 0-based: rank r (1-based) = rank + 1
            by_rank = jnp.zeros_like(mu).at[rank].set(mu)
            upper = by_rank[m_rem]  # mean of sigma(m_rem + 1)
            lower = by_rank[jnp.maximum(m_rem - 1, 0)]  # mean of sigma(m_rem)
            is_top = rank < m_rem
            gap = jnp.where(is_top, mu - upper, lower - mu)
            pick = arms.argmax_masked(gap, active)
            hit = arms.one_hot(pick, num_arms)
            accepted = accepted | (hit & is_top)
            m_rem = m_rem - (is_top[pick]).astype(jnp.int32)
            active = active & ~hit
            active, accepted, m_rem, forced = _force(active, accepted, m_rem)
            new = (active, accepted, m_rem, stop | forced)
            return jax.tree_util.tree_map(
                lambda a, b: jnp.where(stop, b, a), new, if_stopped
            )

        carry = (state.active, state.accepted, state.m_rem, jnp.zeros((), bool))
        phase, (active, accepted, m_rem, stop) = _phases.end_phases(
            state.phase,
            t,
            sched.ends,
            sched.num_phases,
            decide,
            carry,
            bound,
            execution=execution,
            sorts=True,
        )
        phase = jnp.where(stop, sched.num_phases, phase)
        done = (phase >= sched.num_phases) | ~active.any()
        arm = jnp.where(done, -1, arms.least_pulled(stats.counts, active))
        arm = arm.astype(jnp.int32)
        return SARState(stats, active, accepted, m_rem, phase, t, arm, sched)

    def output_fn(state):
        mu = jnp.where(state.stats.counts > 0, arms.mean(state.stats), -jnp.inf)
        return state.accepted | arms.keep_top(mu, state.active, state.m_rem)

    return Policy(init_fn, step_fn, output_fn, "top_m")
