"""Running statistics for references: sum-based means and Welford M2 (spec §3.2)."""

from __future__ import annotations


class Arm:
    def __init__(self):
        self.n = 0
        self.total = 0.0
        self.m2 = 0.0

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def add(self, x: float) -> None:
        old = self.mean
        self.n += 1
        self.total += x
        self.m2 += (x - old) * (x - self.mean)

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
