"""Delta-correctness of the fixed-confidence baselines of 2019-2023 (EB-TC / EB-TCε,
...), empirically, by the check of tests/test_delta_correct.py (same 20 random
instances per family, 30 runs each at delta in {0.1, 0.01}, the delta-correct
threshold, the pooled Wilson upper bound at most delta and no instance significantly
above it; capped runs count as errors).

EB-TCε (``epsilon > 0``, Gaussian) is checked for what it guarantees, an
``epsilon``-good arm: on the same Gaussian instances shifted so that the second best
arm is within ``epsilon`` of the best (two correct answers), an error is a
recommendation more than ``epsilon`` below the best mean.

Marked slow (CI's slow step), as the policies of tests/test_delta_correct.py.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest
from test_delta_correct import (
    BATCH,
    CAP,
    DELTAS,
    RUNS,
    SIGMA,
    errors,
    instances,
    verdict,
)

import jbandits

#: (registered name, static arguments) of the baselines checked (epsilon = 0)
POLICIES = {
    "eb_tc-fixed": ("eb_tc", {"target": "fixed"}),
    "eb_tc-ids": ("eb_tc", {"target": "ids"}),
    "fws": ("fws", {}),
    "dkm": ("dkm", {}),
}
EPSILON = 0.5


@pytest.mark.slow
@pytest.mark.parametrize("family", ["bernoulli", "gaussian"])
@pytest.mark.parametrize("label", list(POLICIES))
def test_error_at_most_delta(label, family):
    name, static = POLICIES[label]
    means, mask = instances(family)
    lines, ok = [], True
    for delta in DELTAS:
        err = errors(name, static, family, delta)
        passed, message = verdict(err, delta, means, mask)
        ok &= passed
        lines.append(message)
    print(f"{label} ({family}): " + " | ".join(lines))
    assert ok, f"{label} ({family}): " + " | ".join(lines)


def eps_instances():
    """The Gaussian instances with the second best arm moved to ``best - EPSILON/2``
    (an ``EPSILON``-good arm besides the best)."""
    means, mask = instances("gaussian")
    means = means.copy()
    for n in range(means.shape[0]):
        real = np.flatnonzero(mask[n])
        order = real[np.argsort(-means[n, real])]
        means[n, order[1]] = means[n, order[0]] - EPSILON / 2
    return means, mask


@pytest.mark.slow
@pytest.mark.parametrize("target", ["fixed", "ids"])
def test_eb_tc_eps_returns_an_eps_good_arm(target):
    means, mask = eps_instances()
    stds = np.full(means.shape, SIGMA)
    bandit, params = jbandits.envs.gaussian(means, stds, arm_mask=mask)
    lines, ok = [], True
    for delta in DELTAS:
        policy = jbandits.make(
            "eb_tc", num_arms=means.shape[1], delta=delta, family="gaussian",
            sigma=SIGMA, threshold="delta_correct", target=target, epsilon=EPSILON,
        )  # fmt: skip
        res = jbandits.simulate(
            policy, bandit, params, jax.random.key(0), budget=CAP, num_reps=RUNS,
            metric=None, progress=False, batch_size=BATCH,
        )  # fmt: skip
        best = np.max(np.where(mask, means, -np.inf), axis=1)
        got = np.take_along_axis(means, np.asarray(res.output), axis=1)
        err = (got < best[:, None] - EPSILON) | ~np.asarray(res.stopped, bool)
        passed, message = verdict(err, delta, means, mask)
        ok &= passed
        lines.append(message)
    print(f"eb_tc eps={EPSILON} ({target}): " + " | ".join(lines))
    assert ok, " | ".join(lines)
