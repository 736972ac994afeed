"""Helpers for the Thompson / Bayes-UCB / KL-UCB / DMED unit tests."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
from harness import play_table

import jbandits


def assert_binomial(successes: int, n: int, p: float, z: float = 4.0) -> None:
    """``successes / n`` within ``z`` binomial standard errors of ``p`` (STYLE §7)."""
    se = math.sqrt(p * (1.0 - p) / n)
    assert abs(successes / n - p) <= z * se, (
        f"{successes}/{n} vs p={p:.4f} (se={se:.2g})"
    )


def first_arms(policy, arm_mask, n: int = 20_000, seed: int = 2) -> np.ndarray:
    """``[n]`` first arms chosen by ``policy.init`` over ``n`` independent keys."""
    keys = jax.random.split(jax.random.key(seed), n)
    mask = jnp.asarray(arm_mask)
    return np.asarray(jax.jit(jax.vmap(lambda k: policy.init(k, mask).arm))(keys))


def replay_run(policy, table, arm_mask, budget: int, seed: int = 0):
    """One engine run on a replay ``table`` [K, J] (padded rows allowed): ``RunResult``."""
    return play_table(policy, table, budget, arm_mask, seed=seed)


def replay_arms(policy, table, arm_mask, budget: int, seed: int = 0) -> np.ndarray:
    """Pulled arms of :func:`replay_run`."""
    return np.asarray(replay_run(policy, table, arm_mask, budget, seed).arms)


def random_stats(rng: np.random.Generator, num_arms: int, bernoulli: bool = False):
    """Random ``ArmStats`` with 1..50 pulls per arm (float32)."""
    counts = rng.integers(1, 51, size=num_arms).astype(np.float32)
    if bernoulli:
        sums = np.floor(rng.random(num_arms) * (counts + 1)).astype(np.float32)
    else:
        sums = (counts * rng.normal(0.5, 1.0, num_arms)).astype(np.float32)
    return jbandits.policies.blocks.arms.ArmStats(
        jnp.asarray(counts), jnp.asarray(sums), jnp.zeros(num_arms, jnp.float32)
    )
