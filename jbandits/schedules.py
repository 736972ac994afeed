"""Host-side exact phase schedules.

Every ceil/floor that depends only on (K, T) is computed here in exact arithmetic
(``fractions.Fraction`` and integer division) and handed to JAX as int32 arrays: float
evaluation of Successive Rejects' n_k is off by one for K = 8, T = 1871. A sweep over
budgets stacks the schedules of each point with :func:`stack`; arrays are padded to a
common length ``size`` (phase ends padded with ``NEVER``), so the sweep compiles once.

The round schedules of the elimination policies with data-dependent rounds (AugUCB,
EUCBV, UCB-Improved) live here too: their round count M = floor(log2(T / e) / 2)
(:func:`num_rounds`) and per-round constants depend on (K, T) or T alone; the rounds
themselves advance in the policies (:mod:`jbandits.policies._rounds`).

*Padded instances* (K_max arms, ``arm_mask.sum()`` of them real) follow one
convention, for every policy whose schedule or constants depend on K (SR, SAR, VBR,
CSAR, AugUCB, the sequential-halving family): **a padded instance runs the schedule
of its real K, or nothing**. Every schedule row records the real K it was built for
(``k_real``). :func:`by_k` stacks the rows of every real K = 0..K_max along a leading
axis (a *by-K table*); a single row (a policy's ``prepare`` hook, or a budget sweep's
stack) serves one K. At ``init`` the policy calls :func:`select` (through
``jbandits.policies._phases.start``), which returns the row ``arm_mask.sum()`` of a
table, or the single row, and the type's *idle* row (``idle(size)``) wherever no
schedule exists (K < 2 or the budget too small for K: the builder raised
:class:`Infeasible`) or the row was built for another K. On the idle row the policy
starts with no active arm, pulls nothing and outputs ``-1`` (labels all False), which
every metric counts as an error. Padded arms themselves are never active, pulled or
output. Policies whose constants are computed from ``arm_mask.sum()`` in ``init``
(e.g. EUCBV's psi = T / K^2) need no schedule row.
Rows are cached per (builder, K, budget, options), and the harmonic numbers behind
log-bar(K) are computed incrementally, so a table for K_max = 1024 takes well under a
second.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from fractions import Fraction
from typing import Any, NamedTuple

import jax.numpy as jnp
import numpy as np

from jbandits import _validate

NEVER = np.iinfo(np.int32).max
_INT32_MAX = int(np.iinfo(np.int32).max)


class Infeasible(ValueError):
    """No schedule exists for this (K, budget): K < 2 or the budget is too small."""


class PhaseSchedule(NamedTuple):
    per_arm: (
        np.ndarray
    )  # [P] int32: cumulative pulls per active arm by the end of phase
    ends: np.ndarray  # [P] int32: step count at which each phase ends (NEVER = padding)
    num_phases: np.ndarray  # [] int32: real number of phases (-1: idle row)
    k_real: np.ndarray  # [] int32: the real K the schedule is for (-1: idle row)

    @classmethod
    def idle(cls, size: int) -> PhaseSchedule:
        """A row with no phase (``num_phases = -1``): the policy pulls nothing."""
        never = np.full(size, NEVER, np.int32)
        return cls(np.zeros(size, np.int32), never, np.int32(-1), np.int32(-1))


class StageSchedule(NamedTuple):
    ends: np.ndarray  # [S] int32: step count at which stage s ends (NEVER = padding)
    sizes: np.ndarray  # [S] int32: active arms during stage s
    keep: np.ndarray  # [S] int32: arms kept after stage s (ceil(size / 2))
    per_arm: np.ndarray  # [S] int32: pulls per arm in stage s (0 for Lalitha et al.)
    num_stages: np.ndarray  # [] int32 (-1: idle row)
    k_real: np.ndarray  # [] int32: the real K the schedule is for (-1: idle row)

    @classmethod
    def idle(cls, size: int) -> StageSchedule:
        """A row with no stage and ``sizes = 0``: the policy pulls nothing."""
        zeros, idle = np.zeros(size, np.int32), np.int32(-1)
        return cls(np.full(size, NEVER, np.int32), zeros, zeros, zeros, idle, idle)


def _check(num_arms: int, budget: int, minimum: int, what: str) -> tuple[int, int]:
    num_arms, budget = int(num_arms), int(budget)
    if num_arms < 2:
        raise Infeasible(f"num_arms must be >= 2, got {num_arms}")
    if budget < minimum:
        raise Infeasible(
            f"budget must be >= {minimum} for {what} with K={num_arms}, got {budget}"
        )
    return num_arms, budget


def phases_min_budget(num_arms: int) -> int:
    """The smallest budget of the phase schedules (Successive Rejects, and so SAR and
    VBR; CSAR; AugUCB's rounds) with ``num_arms`` real arms: K + 1 (n_1 >= 1 needs
    T - K > 0)."""
    return int(num_arms) + 1


def halving_min_budget(num_arms: int) -> int:
    """The smallest budget of the sequential-halving schedules (both variants, and so
    SHVar and SHAdaVar) with ``num_arms`` real arms: K ceil(log2 K), one pull per
    arm in every stage."""
    return int(num_arms) * num_halving_stages(num_arms)


def _pad(values, size: int | None, fill) -> np.ndarray:
    values = np.asarray(values, np.int64)
    size = len(values) if size is None else size
    if size < len(values):
        raise ValueError(f"size {size} is smaller than the {len(values)} phases")
    out = np.full(size, fill, np.int64)
    out[: len(values)] = values
    return out.astype(np.int32)


_HARMONIC = [Fraction(0)]  # H_0, H_1, ... computed so far
_HARMONIC_LOCK = threading.Lock()


def harmonic(num_arms: int) -> Fraction:
    """H_K = sum_{i=1}^K 1/i (exact), memoised incrementally: H_K = H_{K-1} + 1/K."""
    num_arms = int(num_arms)
    with _HARMONIC_LOCK:
        while len(_HARMONIC) <= num_arms:
            _HARMONIC.append(_HARMONIC[-1] + Fraction(1, len(_HARMONIC)))
        return _HARMONIC[num_arms]


def log_bar(num_arms: int) -> Fraction:
    """log-bar(K) = 1/2 + sum_{i=2}^K 1/i = H_K - 1/2 (exact), of Audibert, Bubeck,
    Munos (COLT 2010)."""
    return harmonic(num_arms) - Fraction(1, 2)


def _ceil_quotients(x: Fraction, divisors: np.ndarray) -> np.ndarray:
    """ceil(x / d) for every positive integer d, exactly.

    Uses ceil(x / d) = ceil(ceil(x) / d) (d a positive integer), so the big rational
    is divided once and the rest is int64 arithmetic.
    """
    c = math.ceil(x)
    return -(-c // np.asarray(divisors, np.int64))


def _phases(per_arm: np.ndarray, sizes: np.ndarray, size) -> PhaseSchedule:
    """Phase k has ``sizes[k]`` active arms pulled up to ``per_arm[k]`` cumulative
    pulls each; it ends after sum_{j<=k} sizes[j] (per_arm[j] - per_arm[j-1]) steps."""
    ends = np.cumsum(sizes * np.diff(per_arm, prepend=0))
    return PhaseSchedule(
        per_arm=_pad(per_arm, size, per_arm[-1]),
        ends=_pad(ends, size, NEVER),
        num_phases=np.int32(len(per_arm)),
        k_real=np.int32(sizes[0]),
    )


def successive_rejects(
    num_arms: int, budget: int, size: int | None = None
) -> PhaseSchedule:
    """Successive Rejects (Audibert, Bubeck, Munos, COLT 2010), also used by SAR
    (Bubeck, Wang, Viswanathan, ICML 2013): K - 1 phases with
    n_k = ceil((T - K) / (logbar(K) (K + 1 - k))), k = 1..K-1."""
    num_arms, budget = _check(
        num_arms, budget, phases_min_budget(num_arms), "successive rejects"
    )
    sizes = np.arange(num_arms, 1, -1)  # K + 1 - k
    per_arm = _ceil_quotients(Fraction(budget - num_arms) / log_bar(num_arms), sizes)
    return _phases(per_arm, sizes, size)


def csar(num_arms: int, budget: int, size: int | None = None) -> PhaseSchedule:
    """CSAR for thresholds (Chen et al., NIPS 2014, as adapted by Mukherjee et al.,
    IJCAI 2017): K phases, n_k = ceil((T - K) / (H_K (K - k + 1))), k = 1..K."""
    num_arms, budget = _check(num_arms, budget, phases_min_budget(num_arms), "CSAR")
    sizes = np.arange(num_arms, 0, -1)  # K - k + 1
    per_arm = _ceil_quotients(Fraction(budget - num_arms) / harmonic(num_arms), sizes)
    return _phases(per_arm, sizes, size)


def csar_authors_code(
    num_arms: int, budget: int, size: int | None = None
) -> PhaseSchedule:
    """CSAR as in the AugUCB authors' code: K epochs e = 0..K-1 with cumulative per-arm
    quotas n_e = ceil((T - K) / ((1/2 + sum_{i<=K} 1/i) (K + 1 - e))) (log-bar + 1).

    The epochs' lengths depend on the data (an epoch removes at most one arm), so
    ``ends`` holds the nominal ends if every epoch removed one arm (informational).
    """
    num_arms, budget = _check(
        num_arms, budget, phases_min_budget(num_arms), "CSAR (authors' code)"
    )
    lb = Fraction(1, 2) + harmonic(num_arms)
    per_arm = _ceil_quotients(
        Fraction(budget - num_arms) / lb, np.arange(num_arms + 1, 1, -1)
    )
    sizes = np.arange(num_arms, 0, -1)  # K - e
    return _phases(per_arm, sizes, size)


def num_halving_stages(num_arms: int) -> int:
    """ceil(log2 K), exact."""
    return (int(num_arms) - 1).bit_length()


def _halving_sizes(num_arms: int) -> list[int]:
    sizes = [num_arms]
    while sizes[-1] > 1:
        sizes.append(math.ceil(sizes[-1] / 2))
    return sizes[:-1]


def halving_karnin(
    num_arms: int, budget: int, size: int | None = None
) -> StageSchedule:
    """Sequential Halving of Karnin, Koren, Somekh (ICML 2013): round r pulls each of
    its |S_r| arms t_r = floor(T / (|S_r| ceil(log2 K))) times."""
    rounds = num_halving_stages(num_arms)
    minimum = halving_min_budget(num_arms)
    num_arms, budget = _check(num_arms, budget, minimum, "sequential halving")
    sizes = _halving_sizes(num_arms)
    per_arm = [budget // (s * rounds) for s in sizes]
    ends = np.cumsum([s * t for s, t in zip(sizes, per_arm, strict=True)]).tolist()
    return StageSchedule(
        ends=_pad(ends, size, NEVER),
        sizes=_pad(sizes, size, 1),
        keep=_pad([math.ceil(s / 2) for s in sizes], size, 1),
        per_arm=_pad(per_arm, size, 0),
        num_stages=np.int32(rounds),
        k_real=np.int32(num_arms),
    )


def halving_equal_stages(
    num_arms: int, budget: int, size: int | None = None
) -> StageSchedule:
    """Sequential Halving as in Lalitha et al. (UAI 2023) Alg. 1: ceil(log2 K) stages
    of n_s = floor(T / ceil(log2 K)) pulls each."""
    stages = num_halving_stages(num_arms)
    minimum = halving_min_budget(num_arms)
    num_arms, budget = _check(num_arms, budget, minimum, "sequential halving")
    sizes = _halving_sizes(num_arms)
    per_stage = budget // stages
    return StageSchedule(
        ends=_pad([(s + 1) * per_stage for s in range(stages)], size, NEVER),
        sizes=_pad(sizes, size, 1),
        keep=_pad([math.ceil(s / 2) for s in sizes], size, 1),
        per_arm=_pad([0] * stages, size, 0),
        num_stages=np.int32(stages),
        k_real=np.int32(num_arms),
    )


halving_s004 = halving_equal_stages  # the old name


def stack(schedules):
    """Stack schedules of one kind (same ``size``) along a new leading axis."""
    first = schedules[0]
    return type(first)(*[np.stack(parts) for parts in zip(*schedules, strict=True)])


Schedule = Any  # PhaseSchedule, StageSchedule, or another NamedTuple of arrays


@functools.lru_cache(maxsize=4096)
def _cached_row(build, num_arms: int, budget: int, options: tuple) -> Schedule:
    row = build(num_arms, budget, **dict(options))
    for leaf in row:
        if isinstance(leaf, np.ndarray):
            leaf.setflags(write=False)  # shared by every caller of the cache
    return row


def for_k(
    build: Callable[..., Schedule],
    num_arms: int,
    budget: int,
    *,
    idle: Schedule,
    **options,
) -> Schedule:
    """``build(num_arms, budget, **options)``, or ``idle`` where it raises
    :class:`Infeasible`. Cached per (build, K, budget, options); read-only arrays."""
    try:
        return _cached_row(build, int(num_arms), int(budget), tuple(options.items()))
    except Infeasible:
        return idle


def phase_rows(num_arms: int) -> dict:
    """``for_k`` / ``by_k`` options of a ``num_arms``-arm policy's phase schedules:
    ``num_arms`` phases (enough for every real K) and the matching idle row."""
    return {"size": num_arms, "idle": PhaseSchedule.idle(num_arms)}


def stage_rows(num_arms: int) -> dict:
    """``for_k`` / ``by_k`` options of a ``num_arms``-arm policy's stage schedules:
    ceil(log2 num_arms) stages (enough for every real K) and the idle row."""
    size = num_halving_stages(num_arms)
    return {"size": size, "idle": StageSchedule.idle(size)}


def by_k(
    build: Callable[..., Schedule],
    num_arms: int,
    budget: int,
    *,
    idle: Schedule,
    **options,
) -> Schedule:
    """The :func:`for_k` rows of K = 0..``num_arms`` stacked: ``[num_arms + 1, ...]``.

    Row K is the schedule of an instance with K real arms (``options`` must include a
    common ``size``); rows where no schedule exists are ``idle``.
    """
    rows = [
        for_k(build, k, budget, idle=idle, **options) for k in range(int(num_arms) + 1)
    ]
    return stack(rows)


def select(table: Schedule, arm_mask) -> Schedule:
    """Device side: the schedule of one instance, as ``jnp`` arrays (traceable).

    ``table`` is a by-K table when its ``k_real`` leaf has a leading K axis: its row
    ``arm_mask.sum()`` is taken. Otherwise ``table`` is one schedule. Either way the
    result is the idle row of the type (same shapes) unless its ``k_real`` equals
    ``arm_mask.sum()``: a schedule built for another K is never run.
    """
    k_real = jnp.sum(arm_mask).astype(jnp.int32)
    row = type(table)(*[jnp.asarray(x) for x in table])
    if jnp.ndim(table.k_real) == 1:
        row = type(table)(*[x[k_real] for x in row])
    idle = type(table).idle(row[0].shape[-1])
    ok = row.k_real == k_real
    pairs = zip(row, idle, strict=True)
    return type(table)(*[jnp.where(ok, x, jnp.asarray(y, x.dtype)) for x, y in pairs])


# ------------------------------------------------------------ data-dependent rounds
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
