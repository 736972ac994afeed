"""Host-side exact phase schedules (spec §1.5, §3.4).

Every ceil/floor that depends only on (K, T) is computed here in exact arithmetic
(``fractions.Fraction``) and handed to JAX as int32 arrays: float evaluation of SR's
n_k is off by one for K = 8, T = 1871 (spec TV-3). A sweep over budgets (or K) stacks
the schedules of each point with :func:`stack`; arrays are padded to a common length
``size`` (phase ends padded with ``NEVER``), so the sweep compiles once.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

NEVER = np.iinfo(np.int32).max


class PhaseSchedule(NamedTuple):
    per_arm: (
        np.ndarray
    )  # [P] int32: cumulative pulls per active arm by the end of phase
    ends: np.ndarray  # [P] int32: step count at which each phase ends (NEVER = padding)
    num_phases: np.ndarray  # [] int32: real number of phases


class StageSchedule(NamedTuple):
    ends: np.ndarray  # [S] int32: step count at which stage s ends (NEVER = padding)
    sizes: np.ndarray  # [S] int32: active arms during stage s
    keep: np.ndarray  # [S] int32: arms kept after stage s (ceil(size / 2))
    per_arm: np.ndarray  # [S] int32: pulls per arm in stage s (Karnin; 0 for S004)
    num_stages: np.ndarray  # [] int32


def _check(num_arms: int, budget: int, minimum: int, what: str) -> tuple[int, int]:
    num_arms, budget = int(num_arms), int(budget)
    if num_arms < 2:
        raise ValueError(f"num_arms must be >= 2, got {num_arms}")
    if budget < minimum:
        raise ValueError(
            f"budget must be >= {minimum} for {what} with K={num_arms}, got {budget}"
        )
    return num_arms, budget


def _pad(values, size: int | None, fill) -> np.ndarray:
    values = list(values)
    size = len(values) if size is None else size
    if size < len(values):
        raise ValueError(f"size {size} is smaller than the {len(values)} phases")
    return np.asarray(values + [fill] * (size - len(values)), dtype=np.int32)


def log_bar(num_arms: int) -> Fraction:
    """Audibert et al.'s log-bar(K) = 1/2 + sum_{i=2}^K 1/i (exact)."""
    return Fraction(1, 2) + sum(
        (Fraction(1, i) for i in range(2, num_arms + 1)), Fraction(0)
    )


def harmonic(num_arms: int) -> Fraction:
    return sum((Fraction(1, i) for i in range(1, num_arms + 1)), Fraction(0))


def _phases(num_arms: int, per_arm: list[int], sizes: list[int], size) -> PhaseSchedule:
    ends, total, prev = [], 0, 0
    for n_k, a_k in zip(per_arm, sizes, strict=True):
        total += a_k * (n_k - prev)
        prev = n_k
        ends.append(total)
    return PhaseSchedule(
        per_arm=_pad(per_arm, size, per_arm[-1]),
        ends=_pad(ends, size, NEVER),
        num_phases=np.int32(len(per_arm)),
    )


def successive_rejects(
    num_arms: int, budget: int, size: int | None = None
) -> PhaseSchedule:
    """SR (and SAR): n_k = ceil((T - K) / (logbar(K) (K + 1 - k))), k = 1..K-1."""
    num_arms, budget = _check(num_arms, budget, num_arms + 1, "successive rejects")
    lb = log_bar(num_arms)
    per_arm = [
        math.ceil(Fraction(budget - num_arms) / (lb * (num_arms + 1 - k)))
        for k in range(1, num_arms)
    ]
    sizes = [num_arms + 1 - k for k in range(1, num_arms)]
    return _phases(num_arms, per_arm, sizes, size)


def csar(num_arms: int, budget: int, size: int | None = None) -> PhaseSchedule:
    """CSAR for thresholds (spec §4.5, AMB-11): K phases, L~(K) = sum_{i<=K} 1/i."""
    num_arms, budget = _check(num_arms, budget, num_arms + 1, "CSAR")
    lt = harmonic(num_arms)
    per_arm = [
        math.ceil(Fraction(budget - num_arms) / (lt * (num_arms - k + 1)))
        for k in range(1, num_arms + 1)
    ]
    sizes = [num_arms - k + 1 for k in range(1, num_arms + 1)]
    return _phases(num_arms, per_arm, sizes, size)


def csar_authors_code(
    num_arms: int, budget: int, size: int | None = None
) -> PhaseSchedule:
    """CSAR as in the AugUCB authors' code: K epochs e = 0..K-1 with cumulative per-arm
    quotas n_e = ceil((T - K) / ((1/2 + sum_{i<=K} 1/i) (K + 1 - e))) (log-bar + 1).

    The epochs' lengths depend on the data (an epoch removes at most one arm), so
    ``ends`` holds the nominal ends if every epoch removed one arm (informational).
    """
    num_arms, budget = _check(num_arms, budget, num_arms + 1, "CSAR (authors' code)")
    lb = Fraction(1, 2) + harmonic(num_arms)
    per_arm = [
        math.ceil(Fraction(budget - num_arms) / (lb * (num_arms + 1 - e)))
        for e in range(num_arms)
    ]
    sizes = [num_arms - e for e in range(num_arms)]
    return _phases(num_arms, per_arm, sizes, size)


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
    """Sequential Halving of Karnin et al. (spec §5.3a): t_r = floor(T / (|S_r| R))."""
    rounds = num_halving_stages(num_arms)
    num_arms, budget = _check(num_arms, budget, num_arms * rounds, "sequential halving")
    sizes = _halving_sizes(num_arms)
    per_arm = [budget // (s * rounds) for s in sizes]
    ends = np.cumsum([s * t for s, t in zip(sizes, per_arm, strict=True)]).tolist()
    return StageSchedule(
        ends=_pad(ends, size, NEVER),
        sizes=_pad(sizes, size, 1),
        keep=_pad([math.ceil(s / 2) for s in sizes], size, 1),
        per_arm=_pad(per_arm, size, 0),
        num_stages=np.int32(rounds),
    )


def halving_s004(num_arms: int, budget: int, size: int | None = None) -> StageSchedule:
    """Sequential Halving as in S004 Alg. 1 (spec §5.3b): n_s = floor(T / ceil(log2 K))."""
    stages = num_halving_stages(num_arms)
    num_arms, budget = _check(num_arms, budget, num_arms * stages, "sequential halving")
    sizes = _halving_sizes(num_arms)
    per_stage = budget // stages
    return StageSchedule(
        ends=_pad([(s + 1) * per_stage for s in range(stages)], size, NEVER),
        sizes=_pad(sizes, size, 1),
        keep=_pad([math.ceil(s / 2) for s in sizes], size, 1),
        per_arm=_pad([0] * stages, size, 0),
        num_stages=np.int32(stages),
    )


def stack(schedules):
    """Stack schedules of one kind (same ``size``) along a new leading axis."""
    first = schedules[0]
    return type(first)(*[np.stack(parts) for parts in zip(*schedules, strict=True)])
