"""Issue 54 (hardening round 3), items 5 and 12: the tuner honours its settings or
refuses them, and its errors name what the user passed."""

import warnings

import jax
import numpy as np
import pytest

import jbandits
from jbandits.tuning import (
    ES,
    PG,
    Box,
    LogSpace,
    Objective,
    Report,
    Search,
    TuningWarning,
    grid_tune,
    tune,
)

MEANS = np.array([0.3, 0.45, 0.55, 0.7])
BANDIT, PARAMS = jbandits.envs.bernoulli(MEANS)
METRIC = jbandits.analysis.metrics.thresholding(0.5)
SETTING = dict(budget=40, fixed={"threshold": 0.5}, loss="misclassified", metric=METRIC)
OBJECTIVE = Objective("apt", BANDIT, PARAMS, **SETTING)
SPACE = {"epsilon": LogSpace(0.01, 1.0)}
SMALL = dict(num_reps=8)  # the 5-point grid: 40 simulations


# item 5 ------------------------------------------------------------ simulations
@pytest.mark.parametrize("sims", [0, -5, 2.5, True, "100", None])
def test_simulations_that_are_not_a_positive_integer_are_refused(sims):
    with pytest.raises(
        ValueError, match=r"Search\(simulations=...\) must be an integer"
    ):
        Search(simulations=sims, **SMALL)


def test_simulations_below_what_the_grid_needs_are_refused_not_overspent():
    with pytest.raises(ValueError, match=r"simulations=10\) cannot be honoured.*>= 40"):
        tune(OBJECTIVE, SPACE, search=Search(simulations=10, **SMALL))
    # the smallest honourable budget runs and spends no more than it
    res = tune(
        OBJECTIVE,
        SPACE,
        search=Search(simulations=40, **SMALL),
        report=Report(confidence=0),
    )
    assert res.simulations <= 40


def test_halving_budget_below_its_first_rounds_is_refused():
    obj = Objective("ucbv", BANDIT, PARAMS, budget=30)
    space = {"c": Box(0.0, 2.0), "zeta": Box(0.2, 2.5)}
    with pytest.raises(ValueError, match="successive halving of 64 grid points"):
        tune(obj, space, search=Search(simulations=100, num_reps=4))


@pytest.mark.parametrize(
    "removed", ["init_points", "starts", "max_steps", "snr_stop", "patience",
                "average", "select", "allocation"],
)  # fmt: skip
def test_the_search_options_removed_in_0_3_0_are_python_errors(removed):
    """Search has four fields (issue 64); a removed option is Python's TypeError
    naming it, never silently ignored."""
    with pytest.raises(TypeError, match=f"'{removed}'"):
        Search(**{removed: 1})


def test_estimator_settings_are_checked():
    with pytest.raises(ValueError, match=r"ES\(num_pairs=...\) must be an integer"):
        ES(num_pairs=0)
    with pytest.raises(ValueError, match=r"PG\(temperature=...\) must be a finite"):
        PG(temperature=0.0)


# item 5 ---------------------------------------------- fixed and tuned at once
def test_a_parameter_both_fixed_and_tuned_is_refused_naming_it():
    obj = Objective(
        "apt",
        BANDIT,
        PARAMS,
        **{**SETTING, "fixed": {"threshold": 0.5, "epsilon": 0.1}},
    )
    search = Search(simulations=80, **SMALL)
    with pytest.raises(ValueError, match="epsilon is both in fixed and in the space"):
        tune(obj, SPACE, search=search)
    with pytest.raises(ValueError, match="epsilon is both in fixed and in the space"):
        grid_tune("apt", BANDIT, PARAMS, space=SPACE, **{**SETTING, "fixed": obj.given})
    # a Policy's own arguments are the start of the tuning, not a conflict
    made = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.1)
    Objective(made, BANDIT, PARAMS, budget=40, metric=METRIC).check_names(["epsilon"])


# item 5 -------------------------------------- a loss that ignores the parameter
def test_tuning_the_budget_of_a_fixed_budget_policy_is_refused():
    obj = Objective(
        "successive_rejects",
        BANDIT,
        PARAMS,
        budget=40,
        loss="error",
        metric=jbandits.analysis.metrics.identification(),
    )
    with pytest.raises(ValueError, match="budget cannot be tuned.*same at every point"):
        tune(obj, {"budget": Box(10, 100)}, search=Search(simulations=80, **SMALL))


def _ignores(threshold, unused=0.0):
    return jbandits.make("apt", num_arms=4, threshold=threshold, epsilon=0.1)


def _caught(fn):
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in seen if issubclass(w.category, TuningWarning)]


def test_a_loss_the_same_at_every_point_warns_so_and_noise_warns_otherwise():
    obj = Objective(_ignores, BANDIT, PARAMS, **SETTING)
    search = Search(simulations=80, **SMALL)
    report = Report(confidence=0)  # the grid's losses tell
    same = _caught(
        lambda: tune(obj, {"unused": Box(0.0, 1.0)}, search=search, report=report)
    )
    assert any("the same at every evaluated point" in m for m in same), same
    assert not any("flat within noise" in m for m in same), same
    grid = _caught(
        lambda: grid_tune(
            _ignores, BANDIT, PARAMS, space={"unused": Box(0.0, 1.0)}, points=3,
            num_reps=8, chunk=16, **SETTING,
        )
    )  # fmt: skip
    assert any("the same at every evaluated point" in m for m in grid), grid
    # a noisy flat landscape keeps its own warning (with key 0 the 5 grid points
    # of this short APT run lose alike on all 8 replications: the other warning)
    noisy = _caught(lambda: tune(OBJECTIVE, SPACE, search=search, key=1))
    assert any("flat within noise" in m for m in noisy), noisy
    assert not any("the same at every" in m for m in noisy), noisy


# item 12 ------------------------------------------------------ clear messages
@pytest.mark.parametrize("key", ["abc", None, 3.5, [0, 3], np.zeros(2, np.int32)])
def test_a_bad_key_gets_the_keys_message(key):
    with pytest.raises(ValueError, match="key must be an int seed or one PRNG key"):
        tune(OBJECTIVE, SPACE, search=Search(simulations=80, **SMALL), key=key)
    with pytest.raises(ValueError, match="key must be an int seed or one PRNG key"):
        grid_tune("apt", BANDIT, PARAMS, space=SPACE, points=2, num_reps=2, key=key,
                  **SETTING)  # fmt: skip


def test_legacy_and_typed_keys_tune_alike():
    search, report = Search(simulations=40, **SMALL), Report(confidence=0)
    a = tune(OBJECTIVE, SPACE, search=search, report=report, key=jax.random.key(5))
    b = tune(OBJECTIVE, SPACE, search=search, report=report, key=jax.random.PRNGKey(5))
    assert a.theta == b.theta


@pytest.mark.parametrize("value", [-1, 1, 2.5, True])
def test_report_evaluate_states_the_valid_values(value):
    with pytest.raises(ValueError, match=r"must be 0 \(none\) or an integer >= 2"):
        Report(evaluate=value)
    with pytest.raises(ValueError, match=r"must be 0 \(none\) or an integer >= 2"):
        Report(confidence=value)
    Report(evaluate=0)
    Report(evaluate=2)


@pytest.mark.parametrize("points", [0, -1, 2.5])
def test_grid_tune_points_names_the_argument_passed(points):
    with pytest.raises(ValueError, match="points must be an integer >= 1") as err:
        grid_tune("apt", BANDIT, PARAMS, space=SPACE, points=points, **SETTING)
    assert "points_per_dim" not in str(err.value)
    with pytest.raises(ValueError, match="chunk must be an integer >= 1"):
        grid_tune("apt", BANDIT, PARAMS, space=SPACE, points=2, chunk=0, **SETTING)


@pytest.mark.parametrize("name", ["tie_break", "variant"])
def test_a_static_parameter_in_the_space_is_refused_as_structural(name):
    with pytest.raises(
        ValueError, match=f"{name} is a static \\(structural\\) argument"
    ):
        tune(OBJECTIVE, {name: Box(0.0, 1.0)}, search=Search(simulations=80, **SMALL))
    with pytest.raises(ValueError, match=f"{name} is a static"):
        grid_tune("apt", BANDIT, PARAMS, space={name: Box(0.0, 1.0)}, **SETTING)


def test_a_declared_static_integer_is_refused_as_structural():
    obj = Objective("eucbv", BANDIT, PARAMS, budget=40)
    with pytest.raises(ValueError, match="horizon is a static"):
        obj.check_names(["horizon"])
    obj.check_names(["rho"])  # a number


# beyond the list: the other tuning entry points -------------------------------
def test_tune_budgets_evaluate_points_and_report_check_their_arguments():
    from jbandits.tuning import evaluate_points, tune_budgets

    search = Search(simulations=80, **SMALL)
    for budgets in ([], None, "40"):
        with pytest.raises(ValueError, match="must be a non-empty list of budgets"):
            tune_budgets(OBJECTIVE, SPACE, budgets=budgets, search=search)
    with pytest.raises(ValueError, match=r"budgets\[\] must be an integer >= 1"):
        tune_budgets(OBJECTIVE, SPACE, budgets=[40, 2.5], search=search)
    rows = {"tuned": {"epsilon": 0.1}}
    with pytest.raises(ValueError, match="num_reps must be an integer >= 2, got 1"):
        evaluate_points(OBJECTIVE, SPACE, rows, num_reps=1, key=0, chunk=8)
    with pytest.raises(ValueError, match="key must be an int seed or one PRNG key"):
        evaluate_points(OBJECTIVE, SPACE, rows, num_reps=2, key="x", chunk=8)
    with pytest.raises(ValueError, match=r"Report\(verbose=...\) must be True or"):
        Report(verbose="yes")
    with pytest.raises(ValueError, match="fixed must be a dict"):
        Objective("apt", BANDIT, PARAMS, budget=40, fixed="threshold=0.5")
