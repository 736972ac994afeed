"""Helpers for the identification unit tests: deterministic replay runs."""

from __future__ import annotations

import numpy as np
from harness import play_table


def play(policy, table, budget, arm_mask=None):
    """Run ``policy`` on a replay ``table`` [K, J]; returns (arms [T], output, pulls)."""
    res = play_table(policy, table, budget, arm_mask)
    return np.asarray(res.arms), np.asarray(res.output), np.asarray(res.pulls)


def ladder(num_arms, columns, step=0.1):
    """Deterministic rewards: arm i always pays i * step (arm K-1 is the best)."""
    return np.repeat((np.arange(num_arms) * step)[:, None], columns, axis=1)
