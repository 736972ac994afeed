"""Stage schedules of the sequential-halving family (Karnin et al.'s and the
equal-stage variant of Lalitha et al.): :class:`StageSchedule`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from jbandits.policies.blocks.schedules.common import NEVER, _check, _pad


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


def halving_min_budget(num_arms: int) -> int:
    """The smallest budget of the sequential-halving schedules (both variants, and so
    SHVar and SHAdaVar) with ``num_arms`` real arms: K ceil(log2 K), one pull per
    arm in every stage."""
    return int(num_arms) * num_halving_stages(num_arms)


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
