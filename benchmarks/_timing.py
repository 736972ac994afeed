"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import os
import statistics
import time


def load() -> str:
    """The machine's 1, 5 and 15 minute load averages, for the printed header."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def median_time(fn, repeats: int = 3, *, warm: bool = False) -> float:
    """Median wall time of ``repeats`` calls of ``fn()`` (after one untimed call if
    ``warm``: compilation and caches)."""
    if warm:
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
