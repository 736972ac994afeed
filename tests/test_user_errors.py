"""Bad input gets a clear ValueError naming the argument (nothing silently runs)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits

BANDIT, PARAMS = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
APT = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
KEY = jax.random.key(0)


@pytest.mark.parametrize(
    "budget, match",
    [
        (500, "exceeds horizon"),
        (2, "smaller than the number of arms"),
        (0, ">= 1"),
        (-3, ">= 1"),
        (50.7, "integer"),
    ],
)
def test_run_checks_its_budget(budget, match):
    with pytest.raises(ValueError, match=match):
        jbandits.run(APT, BANDIT, PARAMS, KEY, budget=budget, horizon=100)


def test_a_fixed_budget_policy_is_run_with_its_own_budget():
    sr = jbandits.make("successive_rejects", num_arms=4, budget=400)
    with pytest.raises(ValueError, match="built with budget=400"):
        jbandits.run(sr, BANDIT, PARAMS, KEY, budget=200, horizon=200)
    with pytest.raises(ValueError, match="built with budget=400"):
        jbandits.simulate(sr, BANDIT, PARAMS, KEY, budget=200, num_reps=2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"budget": "200"}, "budget must be an integer"),
        ({"budget": 20, "metric": "thresholding"}, "metric must be a jbandits"),
        ({"budget": 20, "num_reps": 0}, "num_reps"),
        ({"budget": 20, "batch_size": 0}, "batch_size"),
    ],
)
def test_simulate_names_the_bad_argument(kwargs, match):
    kw = {"num_reps": 2, "progress": False, **kwargs}
    with pytest.raises(ValueError, match=match):
        jbandits.simulate(APT, BANDIT, PARAMS, KEY, **kw)


def test_three_dimensional_means_are_rejected():
    with pytest.raises(ValueError, match=r"\[K\] or a batch of instances \[N, K\]"):
        jbandits.envs.bernoulli(np.full((2, 2, 3), 0.5))


def test_policy_built_for_another_k_is_rejected():
    with pytest.raises(ValueError, match="num_arms=5"):
        jbandits.simulate(
            jbandits.make("apt", num_arms=5, threshold=0.5),
            BANDIT,
            PARAMS,
            KEY,
            budget=20,
            num_reps=2,
        )
    raw = jbandits.core.registry.raw_factory("apt")(5, threshold=0.5, epsilon=0.1)
    with pytest.raises(ValueError, match="K=4 arms"):
        jbandits.simulate(raw, BANDIT, PARAMS, KEY, budget=20, num_reps=2)


def test_sweep_rejects_a_scalar_grid_value():
    with pytest.raises(ValueError, match="leading axis of grid points"):
        jbandits.sweep(
            lambda epsilon: jbandits.apt(4, threshold=0.5, epsilon=epsilon),
            BANDIT,
            PARAMS,
            KEY,
            grid={"epsilon": 0.1},
            budget=20,
            num_reps=2,
            horizon=20,
        )


@pytest.mark.parametrize(
    "key, bad, match",
    [("threshold", float("nan"), "finite"), ("epsilon", -0.5, ">= 0")],
)
def test_nan_or_negative_swept_numbers_are_rejected(key, bad, match):
    """NaN is refused for a number; for an optional one (APT's epsilon) NaN spells
    "not given" (core.declared.NOT_GIVEN, as policy.params shows it): see below."""
    grid = {"epsilon": [0.1, 0.1], "threshold": [0.5, 0.5]}
    grid[key] = [grid[key][0], bad]
    with pytest.raises(ValueError, match=match):
        jbandits.sweep(
            "apt",
            BANDIT,
            PARAMS,
            KEY,
            grid=grid,
            budget=20,
            num_reps=2,
            horizon=20,
        )
    hp = {"threshold": 0.5, "epsilon": 0.1} | {key: [grid[key][0], bad]}
    with pytest.raises(ValueError, match=match):
        jbandits.sweep_grid(
            [("apt", hp)],
            BANDIT,
            [PARAMS],
            KEY,
            budgets=[20],
            num_reps=2,
        )


def test_nan_for_an_optional_number_is_its_default_as_policy_params_shows_it():
    """APT's epsilon is optional (None by default): policy.params shows it as NaN,
    and NaN in a grid is the same as leaving it out (every value the same)."""
    shown = jbandits.make("apt", num_arms=4, threshold=0.5).params["epsilon"]
    assert np.isnan(shown)
    kw = dict(budgets=[20], num_reps=2)
    left_out = jbandits.sweep_grid(
        [("apt", {"threshold": 0.5})], BANDIT, [PARAMS], KEY, **kw
    )
    as_nan = jbandits.sweep_grid(
        [("apt", {"threshold": 0.5, "epsilon": [shown]})], BANDIT, [PARAMS], KEY, **kw
    )
    for name, value in left_out.values.items():
        np.testing.assert_array_equal(value, as_nan.values[name], err_msg=name)


def test_env_constructors_are_traceable():
    """A Bayes objective samples instances inside a traced loss."""

    def mean_of_instance(u):
        _, params = jbandits.envs.bernoulli(0.1 + 0.8 * u)
        _, gparams = jbandits.envs.gaussian(u, jnp.ones_like(u))
        return params.means.sum() + gparams.means.sum()

    u = jnp.asarray([0.1, 0.5, 0.9])
    np.testing.assert_allclose(
        jax.jit(mean_of_instance)(u), 0.3 + 0.8 * 1.5 + 1.5, rtol=1e-6
    )
