"""AugUCB (Mukherjee, Naveen, Sudarsanam, Ravindran, IJCAI 2017).

Per-step elimination with variance-aware widths and data-dependent rounds. The round
constants (psi_m, L_m, ell_m, M) depend only on (K, T): they are host float64 tables
(:func:`augucb_tables`) indexed by the round m; the rounds themselves are a masked
fixed-shape update (round index ``m``, next boundary ``N``, active mask ``B``).

``variant="authors_code"`` is the authors' experiment code: psi = T / ln K constant,
L_m = ln(psi T eps_m^2), ell_m = ceil(2 L_m / eps_m), width
sqrt(rho_v (v+1) L_m / (4 n)) with rho_v = 2/3, selection |mean - tau| - s_i, an
extra mean-only elimination rule with c_i = sqrt(rho_mu L_m / (2 n)), rho_mu = 1/8,
and |B| counting arms removed by the variance rule as still present (only the mean
rule shrinks |B|).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core import numbers, registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, ArrayLike, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases
from jbandits.policies.blocks import rounds as _rounds

VARIANTS = ("paper", "authors_code")
ON_EMPTY = ("all", "idle")
RHO_MEAN = 1.0 / 8.0  # authors' code: mean-only elimination rule
AugUCBTables = schedules.AugUCBTables
augucb_tables = schedules.augucb_tables
MAX_SIZE = schedules.AUGUCB_MAX_SIZE  # table length that fits every int32 budget


def augucb_tables_by_k(
    num_arms: int, budget: int, *, variant: str = "paper", size: int | None = None
) -> AugUCBTables:
    """Tables for every real K = 0..num_arms, stacked as ``[num_arms + 1, S]``.

    Rows with K < 2 or T <= K are idle rows (``last_round = -1``: the policy pulls
    nothing).
    """
    budget = int(budget)
    size = schedules.num_rounds(budget) + 2 if size is None else size
    return schedules.by_k(
        augucb_tables,
        num_arms,
        budget,
        idle=AugUCBTables.idle(size),
        variant=variant,
        size=size,
    )


def prepare(
    num_arms: int, num_real_arms: int, budget: int, *, variant: str = "paper", **kwargs
) -> dict:
    """Host-side keyword arguments for a factory call with a traced budget.

    Returns ``{"tables": ...}``: the ``variant`` round tables of ``num_real_arms``
    real arms and budget ``budget`` (idle if none exist), padded to
    :data:`MAX_SIZE` rounds so that the tables of any budgets stack. ``num_arms``,
    ``threshold``, ``rho`` and the other keyword arguments are ignored.
    """
    del num_arms, kwargs
    tables = schedules.for_k(
        augucb_tables,
        num_real_arms,
        budget,
        idle=AugUCBTables.idle(MAX_SIZE),
        variant=variant,
        size=MAX_SIZE,
    )
    return {"tables": tables}


class AugUCBState(NamedTuple):
    stats: arms.ArmStats
    arm_mask: Array  # [K] bool
    active: Array  # [K] bool: B, arms still selectable
    present: Array  # [K] bool: arms counted in |B| (authors' code: not mean-removed)
    psi: Array  # [S] float: psi_m of the real K
    log_term: Array  # [S] float: L_m
    ell: Array  # [S] int32: ell_m
    last_round: Array  # [] int32: M
    m: Array  # [] int32: round index
    boundary: Array  # [] int32: N, the step at which the round may end
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm (-1 idle)


def _per_arm(stats):
    """(v_i + 1) / (4 n_i): the arm-dependent factor of s_i^2 (computed once)."""
    return (arms.var_biased(stats) + 1.0) / (4.0 * jnp.maximum(stats.counts, 1.0))


def _initial_state(num_arms: int, tables, arm_mask) -> AugUCBState:
    """Round 0 of the tables' row for the real K (idle on the idle row), nothing
    pulled yet; the first arm is the first real one."""
    k_real = jnp.sum(arm_mask).astype(jnp.int32)
    row, active = _phases.start(tables, arm_mask)
    psi, log_term, ell, last = row.psi, row.log_term, row.ell, row.last_round
    ftype = jnp.result_type(float)
    return AugUCBState(
        stats=arms.init_stats(num_arms),
        arm_mask=arm_mask,
        active=active,
        present=active,
        psi=psi.astype(ftype),
        log_term=log_term.astype(ftype),
        ell=ell.astype(jnp.int32),
        last_round=last.astype(jnp.int32),
        m=jnp.zeros((), jnp.int32),
        boundary=k_real * ell[0].astype(jnp.int32),
        t=jnp.zeros((), jnp.int32),
        arm=jnp.where(last >= 0, arms.round_robin(0, arm_mask), -1).astype(jnp.int32),
    )


def _eliminate_authors(stats, active, present, past_init, s, log_term_m, threshold):
    """The authors' code's two eliminations: by mean (width from ``RHO_MEAN``; the arm
    leaves the active set and the round size) and by the variance width ``s`` (the
    arm leaves the active set only). Returns ``(active, present)``."""
    mu = arms.mean(stats)
    n = jnp.maximum(stats.counts, 1.0)
    c = jnp.sqrt(RHO_MEAN * log_term_m / (2.0 * n))
    out_mean = (
        active & past_init & ((mu - c > threshold + c) | (mu + c < threshold - c))
    )
    active = active & ~out_mean
    present = present & ~out_mean
    out_var = (mu - s > threshold + s) | (mu + s < threshold - s)
    active = active & ~(past_init & out_var)
    return active, present


@registry.policy(
    "augucb", prepare=prepare, min_budget=schedules.phases_min_budget,
    optional=("rho",),
)  # fmt: skip
def augucb(
    num_arms: int,
    *,
    threshold: ArrayLike,
    budget: ArrayLike | None = None,
    rho: ArrayLike | None = None,
    variant: str = "paper",
    on_empty: str | None = None,
    tables: AugUCBTables | None = None,
) -> Policy:
    """Augmented UCB for the thresholding bandit.

    Each step after one pull per arm: pull ``argmin_{i in B} |mean_i - tau| - 2 s_i``
    with ``s_i = sqrt(rho psi_m (v_i + 1) L_m / (4 n_i))`` (v = biased variance;
    evaluated as ``sqrt((rho psi_m L_m) * ((v_i + 1) / (4 n_i)))``),
    then drop from B every arm with ``|mean_i - tau| - 2 s_i > 0``, and when
    ``t >= N`` and ``m <= M`` start round ``m + 1`` with ``N = t + |B| ell_{m+1}``.

    Args:
      num_arms: static K_max.
      threshold: tau (traced).
      budget: T; must be concrete unless ``tables`` is given (then the tables of
        every real K are built and ``init`` uses those of ``arm_mask.sum()``).
      rho: elimination parameter (traced); default 1/3 (paper), 2/3 (authors' rho_v).
      variant: static, "paper" or "authors_code" (module docstring).
      on_empty: static, what to do once B is empty: "all" (select over all real arms,
        the paper does not say what to pull once B is empty) or "idle"; default "all"
        (paper) / "idle" (authors' code stops).
      tables: precomputed :func:`augucb_tables` for the real K (``[S]`` leaves) or
        :func:`augucb_tables_by_k` (``[K_max + 1, S]``); needed when budget is traced
        (see :func:`prepare`). Idle tables (``last_round = -1``) make the policy
        pull nothing.

    Output: labels ``1{mean_i >= tau}`` over all real arms. Ties go to the lowest
    index (:mod:`jbandits.policies`).

    References:
      Mukherjee, Naveen, Sudarsanam, Ravindran. Thresholding bandits with augmented
      UCB. IJCAI 2017.
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    variant = _validate.choice("variant", variant, VARIANTS)
    authors = variant == "authors_code"
    on_empty = ("idle" if authors else "all") if on_empty is None else on_empty
    _validate.choice("on_empty", on_empty, ON_EMPTY)
    _validate.finite("threshold", threshold)
    rho = numbers.given(rho, 2.0 / 3.0 if authors else 1.0 / 3.0)
    _validate.in_range("rho", rho, 0.0, low_open=True)
    if tables is None:
        if budget is None:
            raise ValueError("budget is required (or pass tables=)")
        t_host = _validate.host_budget(budget, "AugUCB's round tables")
        tables = augucb_tables_by_k(num_arms, t_host, variant=variant)

    def coef(psi, log_term):
        """The round-dependent factor of s_i^2: rho psi_m L_m (authors: rho L_m)."""
        return rho * log_term if authors else rho * psi * log_term

    def init_fn(key, arm_mask):
        del key
        return _initial_state(num_arms, tables, arm_mask)

    def step_fn(state, key, reward):
        del key
        stats = arms.update(state.stats, state.arm, reward)
        t = state.t + 1
        mask = state.arm_mask
        past_init = t > jnp.sum(mask)
        gap = jnp.abs(arms.mean(stats) - threshold)
        m = state.m
        w = _per_arm(stats)
        s = jnp.sqrt(coef(state.psi[m], state.log_term[m]) * w)
        if authors:
            active, present = _eliminate_authors(
                stats, state.active, state.present, past_init, s,
                state.log_term[m], threshold,
            )  # fmt: skip
        else:
            active = state.active & ~(past_init & (gap - 2.0 * s > 0))
            present = active
        size = jnp.sum(present).astype(jnp.int32)
        m_new, boundary = _rounds.advance(
            m,
            state.boundary,
            t,
            past_init,
            state.last_round,
            lambda r: size * state.ell[r],
        )
        s_new = jnp.sqrt(coef(state.psi[m_new], state.log_term[m_new]) * w)
        score = gap - s_new if authors else gap - 2.0 * s_new
        any_active = jnp.any(active)
        eligible = active if on_empty == "idle" else jnp.where(any_active, active, mask)
        pick = arms.argmin_masked(score, eligible)
        if on_empty == "idle":
            pick = jnp.where(any_active, pick, -1)
        forced, rr = arms.forced_arm(t, mask)
        arm = jnp.where(forced, rr, pick).astype(jnp.int32)
        return AugUCBState(
            stats,
            mask,
            active,
            present,
            state.psi,
            state.log_term,
            state.ell,
            state.last_round,
            m_new,
            boundary,
            t,
            arm,
        )

    def output_fn(state):
        return arms.labels_above(state.stats, state.arm_mask, threshold)

    def diagnostics_fn(state):
        return {"active": state.active & state.arm_mask, "round": state.m}

    return Policy(
        init_fn, step_fn, output_fn, "thresholding", diagnostics=diagnostics_fn
    )
