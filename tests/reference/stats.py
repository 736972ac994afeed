"""Running statistics for references: sum-based means and Welford M2 (spec §3.2).

Both running sums are Kahan-compensated exactly as in ``jbandits.policies.blocks.arms.update`` (same
operations in the same order), so that ties between arms agree bit for bit.
"""

from __future__ import annotations


def _kahan_add(total: float, err: float, x: float) -> tuple[float, float]:
    y = x - err
    new = total + y
    return new, (new - total) - y


class Arm:
    def __init__(self):
        self.n = 0
        self.total = 0.0
        self.total_err = 0.0
        self.m2 = 0.0
        self.m2_err = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def add(self, x: float) -> None:
        old = self.mean
        self.n += 1
        self.total, self.total_err = _kahan_add(self.total, self.total_err, x)
        self.m2, self.m2_err = _kahan_add(
            self.m2, self.m2_err, (x - old) * (x - self.mean)
        )

    @property
    def var_biased(self) -> float:
        return max(self.m2 / self.n, 0.0) if self.n else 0.0

    @property
    def var_unbiased(self) -> float:
        return max(self.m2 / (self.n - 1), 0.0) if self.n > 1 else 0.0


def arms(k: int) -> list[Arm]:
    return [Arm() for _ in range(k)]


def first_min(values) -> int:
    """Index of the first minimum (ties -> lowest index)."""
    best = 0
    for i, v in enumerate(values):
        if v < values[best]:
            best = i
    return best


def first_max(values) -> int:
    best = 0
    for i, v in enumerate(values):
        if v > values[best]:
            best = i
    return best
