"""Faithful by default: batched runs relabel arms at random (tie-breaking is unbiased).

Policies break ties toward the lowest index. Successive Rejects (Audibert et al.,
COLT 2010) rejects "the" worst arm, ties broken arbitrarily; with the best arm at
index 0 and "first" tie-breaking it is rejected whenever it ties for worst, so the
error rate depends on where the user lists the best arm unless the labels are
permuted per replication — which simulate does by default.
"""

import math

import jax
import numpy as np

import jbandits
from jbandits.analysis import metrics

MEANS = [0.5] + [0.45] * 4 + [0.4] * 5
REPS, BUDGET = 8000, 500


def _error(means, permute=None):
    bandit, params = jbandits.envs.bernoulli(means)
    kw = {} if permute is None else {"permute": permute}
    res = jbandits.simulate(
        jbandits.successive_rejects(len(means), budget=BUDGET),
        bandit,
        params,
        jax.random.key(0),
        budget=BUDGET,
        num_reps=REPS,
        metric=metrics.identification(),
        progress=False,
        **kw,
    )
    return float(res.metrics["error"][:, -1].mean())


def test_default_error_does_not_depend_on_where_the_best_arm_is_listed():
    first = _error(MEANS)
    last = _error(MEANS[::-1])
    se = math.sqrt((first * (1 - first) + last * (1 - last)) / REPS)
    assert abs(first - last) <= 3 * se, (first, last, se)


def test_permute_false_is_still_available_and_plays_arms_as_numbered():
    bandit, params = jbandits.envs.bernoulli(MEANS)
    policy = jbandits.successive_rejects(len(MEANS), budget=BUDGET)
    key = jax.random.key(1)
    batched = jbandits.simulate(
        policy,
        bandit,
        params,
        key,
        budget=BUDGET,
        num_reps=3,
        permute=False,
        record_arms=True,
        progress=False,
    )
    for r in range(3):
        alone = jbandits.run(
            policy,
            bandit,
            params,
            jax.random.fold_in(key, r),
            budget=BUDGET,
            horizon=BUDGET,
            record_arms=True,
        )
        np.testing.assert_array_equal(batched.arms[r], alone.arms)
