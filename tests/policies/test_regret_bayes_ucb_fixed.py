"""Bayes-UCB Beta: the opt-in fixed-shape step against the default step.

Under ``Execution(fixed_bisection=True)`` the Beta index is ``num_iters`` bisection
halvings of every arm (a loop of static trip count); otherwise it is the lazy
certified search (a data-dependent ``while``), the default on every backend since it
ran 3.8x faster on an H100 too. Both must pull the same arms. The whole module is in
the slow set: the bisection is an opt-in form, and these tests cost ~40 s of CPU.
The form is the factory's static ``execution`` (part of the runner's program key).
"""

from __future__ import annotations

import importlib

import jax
import numpy as np
import pytest

import jbandits
from benchmarks import hlo
from jbandits.core.execution import Execution

# Bayes-UCB's Beta quantile-cell search
beta_cells = importlib.import_module("jbandits.policies.regret._beta_cells")

pytestmark = pytest.mark.slow

K = 10  # instances of K = 3..10 arms, padded to 10
BUDGET = 300
REPS = 16


def _execution(fixed: bool) -> Execution:
    return Execution(fixed_phase_sorts=fixed, fixed_bisection=fixed)


@pytest.fixture(scope="module")
def instances():
    """Bernoulli instances of K = 3..10 (equal means in every other one), padded."""
    rng = np.random.default_rng(7)
    stack = []
    for k in range(3, K + 1):
        means = rng.uniform(0.05, 0.95, k)
        if k % 2:
            means[k - 1] = means[0]  # a tie of the true means
        _, params = jbandits.envs.bernoulli(means)
        stack.append(jbandits.envs.pad_arms(params, K))
    bandit, _ = jbandits.envs.bernoulli([0.5, 0.5])
    return bandit, jbandits.envs.stack_instances(stack)


@pytest.mark.parametrize(
    "tie_break, num_iters", [("first", None), ("random", 8)]
)  # num_iters None: 2^-20 cells (float32); 8: 2^-8 cells, many exact ties
def test_fixed_shape_pulls_the_same_arms(instances, tie_break, num_iters):
    bandit, params = instances
    out = {}
    for fixed in (True, False):
        policy = jbandits.make(
            "bayes_ucb",
            num_arms=K,
            tie_break=tie_break,
            num_iters=num_iters,
            execution=_execution(fixed),
        )
        res = jbandits.simulate(
            policy,
            bandit,
            params,
            jax.random.key(3),
            budget=BUDGET,
            num_reps=REPS,
            record_arms=True,
            return_state=True,
            progress=False,
        )
        out[fixed] = res
    arms_fixed, arms_cpu = (np.asarray(out[f].arms) for f in (True, False))
    assert arms_fixed.shape == (K - 2, REPS, BUDGET)
    # every instance pulls each of its real arms, none of its padded ones
    real = np.asarray(params.arm_mask).sum(axis=1)
    np.testing.assert_array_equal(arms_fixed.max(axis=(1, 2)), real - 1)
    np.testing.assert_array_equal(arms_fixed, arms_cpu)
    np.testing.assert_array_equal(
        np.asarray(out[True].state.stats.counts),
        np.asarray(out[False].state.stats.counts),
    )
    # both paths keep the same posterior log-norms in the warm state
    np.testing.assert_array_equal(
        np.asarray(out[True].state.quant[3]), np.asarray(out[False].state.quant[3])
    )


def _cells(fixed, a, b, log_alpha, warm_log_alpha, bits):
    """``[N, K]`` indices of :func:`_beta_cells._beta_choose` under
    ``bisect = fixed`` and the ``lo`` it returns.

    The warm state is the one a decision at the earlier (larger) level
    ``warm_log_alpha`` leaves: every arm's point at a grid point below its root,
    as in a run. (A cold point ``x = 0`` is only ever held by ``Beta(1, 1)``: for
    another posterior the search would first probe at ``1 - 2^-bits``, where the
    float32 tail of e.g. ``Beta(1, 6)`` is off by ~0.1 in its logarithm and the
    tangent bound from there does not hold.)
    """
    mask = np.ones(a.shape[1], bool)

    def one(a, b, log_alpha, warm_log_alpha):
        _, warm = beta_cells._beta_bisect(a, b, warm_log_alpha, mask, bits)
        args = (a, b, warm, log_alpha, None, None, mask, bits, fixed)
        index, warm = beta_cells._beta_choose(*args)
        return index, warm[4]

    index, lo = jax.jit(jax.vmap(one))(a, b, log_alpha, warm_log_alpha)
    return np.asarray(index), np.asarray(lo)


def test_bisection_cells_are_the_certified_cells():
    """Cell by cell (float32, the default 2^-20 grid): every arm the certified
    search resolves has the bisection's cell, the others' cells lie strictly below
    the best one, and a NaN level gives -inf everywhere on both paths."""
    bits = 20
    rng = np.random.default_rng(bits)
    n, k = 400, 6
    succ = rng.integers(0, 60, (n, k))
    a = (1.0 + succ).astype(np.float32)
    b = 1.0 + succ * rng.integers(0, 3, (n, 1)) + rng.integers(0, 60, (n, k))
    b = b.astype(np.float32)
    b[:, 1], a[:, 1] = b[:, 0], a[:, 0]  # equal posteriors: an exact tie
    t = rng.integers(2, 5000, n)
    log_alpha = -np.log(t).astype(np.float32)
    log_alpha[:8] = np.nan
    warm_log_alpha = -np.log(rng.integers(2, t + 1)).astype(np.float32)
    bisect, lo = _cells(True, a, b, log_alpha, warm_log_alpha, bits)
    certified, _ = _cells(False, a, b, log_alpha, warm_log_alpha, bits)
    assert np.all(bisect[:8] == -np.inf) and np.all(certified[:8] == -np.inf)
    assert np.all(lo[:8] == 0.0)
    bisect, certified, lo = bisect[8:], certified[8:], lo[8:]
    assert np.all(np.isfinite(bisect))
    np.testing.assert_array_equal(lo + 2.0**-bits / 2, bisect)
    kept = np.isfinite(certified)  # the arms that can still be the arg-max
    assert kept.sum(axis=1).min() >= 1
    # the same arg-max and ties: where the search keeps one arm it is the bisection's
    # unique arg-max (not necessarily resolved to its cell); where it keeps more,
    # all of them are resolved to the bisection's cells
    top = bisect == bisect.max(axis=1, keepdims=True)
    np.testing.assert_array_equal(
        top, certified == certified.max(axis=1, keepdims=True)
    )
    many = np.broadcast_to(kept.sum(axis=1, keepdims=True) > 1, kept.shape)
    np.testing.assert_array_equal(bisect[kept & many], certified[kept & many])
    best = np.broadcast_to(bisect.max(axis=1, keepdims=True), bisect.shape)
    assert np.all(bisect[~kept] < best[~kept])
    assert (~kept).sum() > 0  # the lazy search left some arms unresolved
    assert (~many).sum() > 0 and many.sum() > 0  # both ways of ending occur


def _step_counts(policy, bandit, params):
    return hlo.engine_step_kernels(policy, bandit, params, 64)


def test_fixed_shape_step_has_no_data_dependent_while():
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 6))
    policy = jbandits.make("bayes_ucb", num_arms=6, execution=_execution(True))
    steps = _step_counts(policy, bandit, params)
    assert [c["data-dependent while"] for c in steps] == [0] * len(steps)
    assert steps[0]["while"] >= 1  # the bisection: a loop of known trip count
    policy = jbandits.make("bayes_ucb", num_arms=6, execution=_execution(False))
    steps = _step_counts(policy, bandit, params)
    assert steps[0]["data-dependent while"] == 1  # the certified search's loop
