"""Round constants of the elimination policies with data-dependent rounds (AugUCB,
EUCBV, UCB-Improved): their round count M = floor(log2(T / e) / 2)
(:func:`num_rounds`) and per-round constants depend on (K, T) or T alone; the rounds
themselves advance in the policies (:mod:`jbandits.policies.blocks.rounds`).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from jbandits.core import validate as _validate
from jbandits.policies.blocks.schedules.common import _INT32_MAX, Infeasible
from jbandits.policies.blocks.schedules.phases import phases_min_budget


def num_rounds(horizon: int) -> int:
    """M = max(0, floor(log2(T / e) / 2)): the last round of AugUCB (Mukherjee et al.,
    IJCAI 2017, Algorithm 1), EUCBV (Mukherjee et al., arXiv:1711.03591, Algorithm 1)
    and UCB-Improved (Auer and Ortner, Periodica Math. Hungarica 2010)."""
    horizon = _validate.static_int("horizon", horizon, minimum=1)
    return max(0, math.floor(0.5 * math.log2(horizon / math.e)))


AUGUCB_VARIANTS = ("paper", "authors_code")


class AugUCBTables(NamedTuple):
    """AugUCB round constants; index m = 0..size-1 (entries past M+1 repeat M+1).

    Leaves are ``[S]`` for one K, or ``[K_max + 1, S]`` indexed by the real K.
    """

    psi: np.ndarray  # [S] float64: psi_m
    log_term: np.ndarray  # [S] float64: L_m = ln(T eps_m) (authors: ln(psi T eps_m^2))
    ell: np.ndarray  # [S] int32: ell_m (saturated so that t + K ell never overflows)
    last_round: np.ndarray  # [] int32: M (-1: idle row, no tables for this K)
    k_real: np.ndarray  # [] int32: the real K the tables are for (-1: idle row)

    @classmethod
    def idle(cls, size: int) -> AugUCBTables:
        """A row for a K without tables (K < 2 or T <= K): the policy pulls nothing."""
        ones, idle = np.ones(size, np.float64), np.int32(-1)
        return cls(ones, ones, np.zeros(size, np.int32), idle, idle)


AUGUCB_MAX_SIZE = num_rounds(_INT32_MAX) + 2  # table length for every int32 budget


def augucb_tables(
    num_arms: int, budget: int, *, variant: str = "paper", size: int | None = None
) -> AugUCBTables:
    """Host float64 round constants of AugUCB (Mukherjee, Naveen, Sudarsanam,
    Ravindran, IJCAI 2017, Algorithm 1) for ``num_arms`` real arms and budget T:
    eps_m = 2^-m, psi_m = T eps_m / (128 a^2) with a^2 = ln((3/16) K ln K)^2,
    L_m = ln(T eps_m), ell_m = ceil(2 psi_m L_m / eps_m), m = 0..M+1.

    ``variant="authors_code"``: psi = T / ln K, L_m = ln(psi T eps_m^2),
    ell_m = ceil(2 L_m / eps_m). ``size`` pads the m axis (default M + 2) so that
    tables of a budget sweep stack.
    """
    _validate.choice("variant", variant, AUGUCB_VARIANTS)
    k = _validate.static_int("num_arms", num_arms)
    t = _validate.static_int("budget", budget)
    if k < 2:
        raise Infeasible(f"num_arms must be >= 2, got {k}")
    if t < phases_min_budget(k):
        raise Infeasible(
            f"budget must be >= {phases_min_budget(k)} with K={k}, got {t}"
        )
    big_m = num_rounds(t)
    size = big_m + 2 if size is None else size
    if size < big_m + 2:
        raise ValueError(f"size must be >= M + 2 = {big_m + 2}, got {size}")
    cap = (_INT32_MAX - t) // (k + 1)
    if cap <= t:
        raise ValueError(f"budget {t} too large for int32 round boundaries with K={k}")
    psi, log_term, ell = [], [], []
    for m in range(big_m + 2):
        eps = 2.0**-m
        if variant == "paper":
            a2 = math.log((3.0 / 16.0) * k * math.log(k)) ** 2
            if not a2 > 1e-12:
                raise ValueError(f"num_arms={k}: a2 = {a2} is degenerate")
            p = t * eps / (128.0 * a2)
            lm = math.log(t * eps)
            lenm = math.ceil(2.0 * p * lm / eps)
        else:
            p = t / math.log(k)
            lm = math.log(p * t * eps * eps)
            lenm = math.ceil(2.0 * lm / eps)
        if not lm > 0:
            raise ValueError(f"log term L_{m} = {lm} <= 0 for K={k}, T={t}")
        psi.append(p)
        log_term.append(lm)
        ell.append(min(lenm, cap))
    pad = size - len(psi)
    return AugUCBTables(
        psi=np.asarray(psi + psi[-1:] * pad, np.float64),
        log_term=np.asarray(log_term + log_term[-1:] * pad, np.float64),
        ell=np.asarray(ell + ell[-1:] * pad, np.int32),
        last_round=np.int32(big_m),
        k_real=np.int32(k),
    )


def eucbv_rounds(horizon: int, psi) -> tuple:
    """EUCBV round constants ``(n_m, L_m)``, m = 0..M+1, as float arrays ``[M+2]``
    (Mukherjee, Naveen, Sudarsanam, Ravindran, arXiv:1711.03591, Algorithm 1), traced
    in ``psi``: ``n_m = max(ceil(ln(psi T eps_m^2) / (2 eps_m)), 1)`` pulls per
    surviving arm in round m (an allotment, not a cumulative total) and
    ``L_m = max(ln(psi T eps_m), 0)`` with ``eps_m = 2^-m``. ``n_m`` stays in floating
    point (exact integers) so that huge values cannot overflow int32.
    """
    cap = num_rounds(horizon)
    eps = np.ldexp(1.0, -np.arange(cap + 2))  # exact powers of two
    scale = jnp.asarray(psi, jnp.result_type(float)) * horizon  # psi T
    n_sched = jnp.maximum(jnp.ceil(jnp.log(scale * eps * eps) / (2.0 * eps)), 1.0)
    log_sched = jnp.maximum(jnp.log(scale * eps), 0.0)
    return n_sched, log_sched


class ImprovedSchedule(NamedTuple):
    targets: np.ndarray  # [M+2] float64: cumulative pulls per arm n_m (inf at M+1)
    widths: np.ndarray  # [M+2] float64: w_m = sqrt(ln(T D_m^2) / (2 n_m)) (0 at M+1)
    cap: int  # M


def ucb_improved(horizon: int) -> ImprovedSchedule:
    """UCB-Improved rounds (Auer and Ortner, Periodica Math. Hungarica 2010,
    Section 3): ``D_m = 2^-m``, ``n_m = ceil(2 ln(T D_m^2) / D_m^2)``, ``m <= M``.

    ``n_m`` is the cumulative number of pulls each surviving arm must have by the end
    of round ``m``; it strictly increases for ``m <= M`` (checked), so one check per
    step never skips a round. Index ``M + 1`` is a sentinel (never reached).
    """
    cap = num_rounds(horizon)
    targets, widths = [], []
    for m in range(cap + 1):
        delta = math.ldexp(1.0, -m)
        log_term = math.log(horizon * delta * delta)
        n_m = max(math.ceil(2.0 * log_term / (delta * delta)), 1)
        targets.append(float(n_m))
        widths.append(math.sqrt(max(log_term, 0.0) / (2.0 * n_m)))
    if any(b <= a for a, b in zip(targets, targets[1:], strict=False)):
        raise AssertionError(f"UCB-Improved targets not increasing: {targets}")
    return ImprovedSchedule(
        np.asarray(targets + [math.inf]), np.asarray(widths + [0.0]), cap
    )
