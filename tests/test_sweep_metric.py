"""jbandits.sweep / sweep_grid default to metric="auto", like simulate: the metric
the policies' setting calls for (metrics.for_policy), one per sweep."""

import jax
import numpy as np
import pytest

import jbandits
from jbandits.analysis import metrics
from jbandits.sim import checks, entry

BANDIT, PARAMS = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
KW = dict(num_reps=8, progress=False)


def _sweep(make, grid, **kw):
    return jbandits.sweep(
        make, BANDIT, PARAMS, jax.random.key(0), grid=grid, horizon=20, **KW, **kw
    )


def _grid(policies, **kw):
    return jbandits.sweep_grid(
        policies, BANDIT, [PARAMS], jax.random.key(0), budgets=[20], **KW, **kw
    )


GRID = {"threshold": [0.5, 0.5], "epsilon": [0.0, 0.1]}


def test_sweep_defaults_to_the_policies_metric():
    auto = _sweep("apt", GRID, budget=20)
    given = _sweep("apt", GRID, budget=20, metric=metrics.thresholding(0.5))
    assert set(auto.metrics) == set(given.metrics) == {"error", "misclassified"}
    for name, value in given.metrics.items():
        np.testing.assert_array_equal(auto.metrics[name], value)


def test_sweep_auto_with_a_factory_callable():
    def make(epsilon, budget):
        del budget
        return jbandits.apt(4, threshold=0.5, epsilon=epsilon)

    grid = {"epsilon": [0.0, 0.1], "budget": [20, 20]}
    res = _sweep(make, grid)
    given = _sweep(make, grid, metric=metrics.thresholding(0.5))
    np.testing.assert_array_equal(res.metrics["error"], given.metrics["error"])


def test_sweep_auto_refuses_points_with_different_metrics():
    grid = {"threshold": [0.4, 0.6]}
    with pytest.raises(ValueError, match="different metrics"):
        _sweep("apt", grid, budget=20)


def test_sweep_grid_defaults_to_the_policies_metric():
    policies = [("apt", {"threshold": 0.5, "epsilon": [0.0, 0.1]})]
    auto = _grid(policies)
    given = _grid(policies, metric=metrics.thresholding(0.5))
    assert "metric.error" in given.values
    assert set(auto.values) == set(given.values)
    for name, value in given.values.items():
        np.testing.assert_array_equal(auto.values[name], value)


def test_auto_metric_of_identification_and_regret_policies():
    def auto(name):
        return checks.one_metric([entry.host_policy(name, 4, {}, 20)])

    assert auto("successive_rejects") == metrics.identification()
    assert auto("ucb1") is None  # regret and reward only, as before


def test_sweep_grid_auto_refuses_mixed_settings():
    with pytest.raises(ValueError, match="different metrics"):
        _grid([("apt", {"threshold": 0.5}), ("successive_rejects", {})])
