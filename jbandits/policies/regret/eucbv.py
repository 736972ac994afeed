"""EUCBV, Efficient-UCB-Variance (Mukherjee, Naveen, Sudarsanam, Ravindran,
arXiv:1711.03591 / AAAI 2018).

A UCB-V-like index policy with arm elimination at every step and rounds that shrink
``eps_m = 2^-m``. The round schedule has a static length ``M + 2`` fixed by the
horizon ``T``; its values depend on the (traced) ``psi`` and are computed in-graph.
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import rounds as _rounds

ELIM_COUNTS = ("round", "pulls")
# cap on a round's length |B| n_m (and on K n_0) before the int32 cast: a round that
# long never ends within any feasible run, and n + cap stays below 2^31
_MAX_ROUND = float(2**30)


class EUCBVState(NamedTuple):
    stats: arms.ArmStats  # [K] counts z, sums, Welford M2
    arm_mask: Array  # [K] bool: real arms
    active: Array  # [K] bool: the surviving set B_m (a diagnostic too, see eucbv())
    m: Array  # [] int32: round counter, 0..M+1
    round_end: Array  # [] int32: N_m, the pull count at which round m ends
    t: Array  # [] int32: pulls done (n, completed pulls)
    n_sched: Array  # [M+2] float: n_m, pulls per surviving arm in round m
    log_sched: Array  # [M+2] float: L_m = max(ln(psi T eps_m), 0)
    arm: Array  # [] int32: next arm


eucbv_schedule = schedules.eucbv_rounds  # (n_m, L_m), m = 0..M+1


@registry.policy("eucbv", static=("horizon",), optional=("psi",))
def eucbv(
    num_arms: int,
    *,
    horizon: int,
    rho: ArrayLike = 0.5,
    psi: ArrayLike | None = None,
    elim_count: str = "round",
    tie_break: str = "random",
) -> Policy:
    """EUCBV.

    Step after the reward of pull ``n`` (Algorithm 1 of the paper):

    1. update ``z, mean, M2`` of the pulled arm; ``v = M2 / z`` (biased variance);
    2. from pull ``K + 1`` on, eliminate every active arm with
       ``mean_i + w_i < max_{j active} (mean_j - w_j)``,
       ``w_i = sqrt(rho (v_i + 2) L_m / (4 c_i))``, ``c_i = n_m`` (``"round"``) or
       ``z_i`` (``"pulls"``); equality keeps the arm;
    3. from pull ``K + 1`` on, if ``n >= N_m`` and ``m <= M``: ``m += 1`` and
       ``N_m = n + |B| n_m`` (at most one reset per step);
    4. the first K pulls go to the real arms in index order; then pull
       ``argmax_{j active} mean_j + sqrt(rho (v_j + 2) L_m / (4 z_j))`` with the
       updated ``m``. With a single survivor this pulls it until T.

    ``N_0 = K n_0``; ``K`` is the number of real arms.

    Diagnostics: ``state.active`` (``[K] bool``) is the surviving set; read it from the
    final state to report how often the optimal arm was eliminated (the paper's
    Section 5 discussion). It always holds at least one real arm.

    Args:
      num_arms: static K_max.
      horizon: static T (a Python int): it fixes the round cap ``M`` and hence the
        schedule length; its value also enters ``psi T``. A run may stop earlier
        (the engine budget), but the schedule is the one of ``horizon``.
      rho: arm-elimination parameter (traced), default 1/2.
      psi: exploration regulatory factor (traced), default ``T / K^2`` with ``K`` the
        number of real arms (computed at ``init`` from ``arm_mask``).
      elim_count: static, ``"round"`` (literal Algorithm 1: ``4 n_m`` in the
        elimination width; default) or ``"pulls"`` (``4 z_i``; the robust reading). The
        selection index always uses ``z_j``.
      tie_break: static, "random" (default) or "first": "random" (uniform among exact maximisers) is the paper-faithful default; "first" mimics the authors' Python scripts.

    Returns:
      A regret policy; ``output`` is the active arm with the largest empirical mean
      (lowest index on ties).

    Warns:
      UserWarning when ``T < K_max^2.4`` (Theorem 1's precondition) for concrete K_max.

    References:
      Mukherjee, Naveen, Sudarsanam, Ravindran. Efficient-UCBV: An almost optimal
      algorithm using variance estimates. arXiv:1711.03591 (v1), 2017.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    horizon = _validate.static_int("horizon", horizon, minimum=1)
    _validate.choice("elim_count", elim_count, ELIM_COUNTS)
    _validate.choice("tie_break", tie_break, arms.TIE_BREAKS)
    _validate.in_range("rho", rho, 0.0, low_open=True)
    psi = None if numbers.absent(psi) else psi  # not given: T / K^2 in init
    _validate.in_range("psi", psi, 0.0, low_open=True)
    if horizon < num_arms**2.4:
        _validate.warn(
            f"EUCBV: horizon {horizon} < K^2.4 = {num_arms**2.4:.0f} (K = num_arms = "
            f"{num_arms}); Theorem 1 of the paper does not cover this range"
        )
    cap = schedules.num_rounds(horizon)

    def widths(stats, log_m, count):
        v = arms.var_biased(stats)
        return jnp.sqrt(rho * (v + 2.0) * log_m / (4.0 * count))

    def init_fn(key, arm_mask):
        del key  # the first pull is forced
        num_real = jnp.sum(arm_mask)
        ftype = jnp.result_type(float)
        psi_ = numbers.given(psi, horizon / num_real.astype(ftype) ** 2)
        n_sched, log_sched = eucbv_schedule(horizon, psi_)
        n0 = jnp.minimum(num_real * n_sched[0], _MAX_ROUND).astype(jnp.int32)
        zero = jnp.zeros((), jnp.int32)
        stats, active, arm = _rounds.opening(num_arms, arm_mask)
        return EUCBVState(
            stats, arm_mask, active, zero, n0, zero, n_sched, log_sched, arm
        )

    def step_fn(state, key, reward):
        stats = arms.update(state.stats, state.arm, reward)
        n = state.t + 1
        num_real = jnp.sum(state.arm_mask)
        z = jnp.maximum(stats.counts, 1.0)
        mean = arms.mean(stats)
        m = state.m
        # 2. elimination on one snapshot of the statistics
        count = state.n_sched[m] if elim_count == "round" else z
        w = widths(stats, state.log_sched[m], count)
        kept, lcb = _rounds.eliminate(mean, w, state.active)
        # defensive guard (unreachable in exact arithmetic; overflowing statistics can
        # make every bound NaN): keep the max-LCB active arm, never an inactive one
        fallback = arms.one_hot(arms.argmax_masked(lcb, state.active), num_arms)
        kept = jnp.where(kept.any(), kept, fallback)
        in_loop = n >= num_real + 1
        active = jnp.where(in_loop, kept, state.active)

        # 3. reset
        def length(r):
            alloc = jnp.sum(active) * state.n_sched[jnp.minimum(r, cap + 1)]
            return jnp.minimum(alloc, _MAX_ROUND).astype(jnp.int32)

        m_new, round_end = _rounds.advance(m, state.round_end, n, in_loop, cap, length)
        # 4. next arm
        index = mean + widths(stats, state.log_sched[m_new], z)
        best = arms.argmax_masked(index, active, key=key, tie_break=tie_break)
        forced, rr = arms.forced_arm(n, state.arm_mask)
        arm = jnp.where(forced, rr, best)
        return EUCBVState(
            stats,
            state.arm_mask,
            active,
            m_new,
            round_end,
            n,
            state.n_sched,
            state.log_sched,
            arm,
        )

    def output_fn(state):
        return arms.best_empirical(state.stats, state.active)

    def diagnostics_fn(state):
        return {"active": state.active & state.arm_mask, "round": state.m}

    return Policy(init_fn, step_fn, output_fn, "regret", diagnostics=diagnostics_fn)


def eliminated_optimal(state: EUCBVState, means: Array) -> Array:
    """``[] bool``: every real arm of largest true mean has been eliminated.

    ``means`` are the true means in the policy's arm numbering (``[K]``).
    """
    best = jnp.max(jnp.where(state.arm_mask, means, -jnp.inf))
    optimal = state.arm_mask & (means == best)
    return ~jnp.any(optimal & state.active)
