"""Trace-equivalence harness of the tests (DESIGN §2.2): the public one,
:mod:`jbandits.sim.trace` (TraceCase, Draws, check_case, ...), plus the helpers of the
unit tests (hand-built arm statistics, one engine run on a replay table) and of the
test files' parametrisation (:func:`slow_where`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.sim.trace import (  # noqa: F401  (the harness, re-exported for tests)
    Compact,
    Draws,
    Instance,
    TraceCase,
    basic_instance,
    check_case,
    random_mask,
    random_table,
    replay_run,
    run_jax,
    run_reference,
)


# ------------------------------------------------------------------- unit-test runs
def arm_stats(counts, sums=None, *, means=None, m2=None, dtype=jnp.float32):
    """Hand-built :class:`jbandits.policies.blocks.arms.ArmStats` from per-arm ``counts`` and ``sums``
    (or ``means``: sums = means * counts); ``m2`` defaults to zeros."""
    counts = jnp.asarray(counts, dtype)
    sums = jnp.asarray(means, dtype) * counts if sums is None else sums
    m2 = jnp.zeros_like(counts) if m2 is None else jnp.asarray(m2, dtype)
    return jbandits.policies.blocks.arms.ArmStats(counts, jnp.asarray(sums, dtype), m2)


def play_table(policy, table, budget, arm_mask=None, *, horizon=None, seed=0):
    """One jitted engine run of ``policy`` on a replay ``table`` [K, J] (the j-th pull
    of arm i pays ``table[i, j]``), arms recorded: the :class:`RunResult`.

    ``arm_mask`` marks padded arms (default all real); ``horizon`` defaults to
    ``budget``; ``seed`` is the run key's seed.
    """
    mask = None if arm_mask is None else np.asarray(arm_mask)
    bandit, params = jbandits.envs.replay(np.asarray(table, np.float64), arm_mask=mask)
    horizon = budget if horizon is None else horizon
    return jax.jit(
        lambda k: jbandits.run(
            policy, bandit, params, k, budget=budget, horizon=horizon, record_arms=True
        )
    )(jax.random.key(seed))


def slow_where(values, slow, key=lambda v: v) -> list:
    """``values`` as ``pytest.mark.parametrize`` arguments, those whose ``key`` is in
    ``slow`` marked ``slow`` (CI runs them in its slow step)."""
    mark = pytest.mark.slow
    return [pytest.param(v, marks=mark) if key(v) in slow else v for v in values]
