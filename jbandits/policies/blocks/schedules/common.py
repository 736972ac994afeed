"""What every schedule builder shares: the padding value :data:`NEVER` of phase
ends, :class:`Infeasible` for a (K, budget) without a schedule, the check that
raises it and the padding of per-phase arrays to a common ``size``.
"""

from __future__ import annotations

import numpy as np

NEVER = np.iinfo(np.int32).max
_INT32_MAX = int(np.iinfo(np.int32).max)


class Infeasible(ValueError):
    """No schedule exists for this (K, budget): K < 2 or the budget is too small."""


def _check(num_arms: int, budget: int, minimum: int, what: str) -> tuple[int, int]:
    num_arms, budget = int(num_arms), int(budget)
    if num_arms < 2:
        raise Infeasible(f"num_arms must be >= 2, got {num_arms}")
    if budget < minimum:
        raise Infeasible(
            f"budget must be >= {minimum} for {what} with K={num_arms}, got {budget}"
        )
    return num_arms, budget


def _pad(values, size: int | None, fill) -> np.ndarray:
    values = np.asarray(values, np.int64)
    size = len(values) if size is None else size
    if size < len(values):
        raise ValueError(f"size {size} is smaller than the {len(values)} phases")
    out = np.full(size, fill, np.int64)
    out[: len(values)] = values
    return out.astype(np.int32)
