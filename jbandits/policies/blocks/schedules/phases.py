"""Phase schedules of the elimination policies with fixed phases: Successive
Rejects (and so SAR and VBR) and CSAR (paper and authors' code), from exact
harmonic numbers and ceilings (:class:`PhaseSchedule`).
"""

from __future__ import annotations

import math
import threading
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from jbandits.policies.blocks.schedules.common import NEVER, _check, _pad


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


def phases_min_budget(num_arms: int) -> int:
    """The smallest budget of the phase schedules (Successive Rejects, and so SAR and
    VBR; CSAR; AugUCB's rounds) with ``num_arms`` real arms: K + 1 (n_1 >= 1 needs
    T - K > 0)."""
    return int(num_arms) + 1


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
