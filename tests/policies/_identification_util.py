"""Helpers for the identification unit tests: deterministic replay runs."""

from __future__ import annotations

import jax
import numpy as np

import jbandits


def play(policy, table, budget, arm_mask=None):
    """Run ``policy`` on a replay ``table`` [K, J]; returns (arms [T], output, pulls)."""
    table = np.asarray(table, np.float64)
    bandit, params = jbandits.envs.replay(
        table, arm_mask=None if arm_mask is None else np.asarray(arm_mask)
    )
    res = jax.jit(
        lambda k: jbandits.run(
            policy, bandit, params, k, budget=budget, horizon=budget, record_arms=True
        )
    )(jax.random.key(0))
    return np.asarray(res.arms), np.asarray(res.output), np.asarray(res.pulls)


def ladder(num_arms, columns, step=0.1):
    """Deterministic rewards: arm i always pays i * step (arm K-1 is the best)."""
    return np.repeat((np.arange(num_arms) * step)[:, None], columns, axis=1)
