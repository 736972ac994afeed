"""Issue 38, API inputs: each gets a clear one-line ValueError at the call, before any
compilation, from every entry point (``simulate``, ``sweep``, ``sweep_grid``, ``run``).

Every call here fails in its host-side checks, so the file compiles no engine program.
"""

import jax
import numpy as np
import pytest

import jbandits
from jbandits import envs
from jbandits.analysis import metrics
from jbandits.core import registry
from jbandits.policies.blocks import schedules

BANDIT, PARAMS = envs.bernoulli([0.2, 0.4, 0.6, 0.8])
GAUSS, GPARAMS = envs.gaussian([-1.0, 0.0, 1.0, 2.0], [1.0] * 4)
APT = jbandits.make("apt", num_arms=4, threshold=0.5)
KEY = jax.random.key(0)
WRAPPER = "the policy failed on an instance"  # runner's trace-error wrapper


def _entry_points(policy, bandit, params, *, budget=20, **kw):
    """The same work through each entry point (callables that raise or run)."""
    name = policy.spec.name
    hp = {k: v for k, v in policy.spec.kwargs if k not in ("num_arms", "budget")}
    return {
        "simulate": lambda: jbandits.simulate(
            policy, bandit, params, KEY, budget=budget, num_reps=2, **kw
        ),
        "run": lambda: jbandits.run(
            policy, bandit, params, KEY, budget=budget, horizon=budget, **kw
        ),
        "sweep": lambda: jbandits.sweep(
            name,
            bandit,
            params,
            KEY,
            grid={k: [v] for k, v in hp.items()} or {"budget": [budget]},
            budget=budget,
            num_reps=2,
            horizon=budget,
            **kw,
        ),
        "sweep_grid": lambda: jbandits.sweep_grid(
            [(name, hp)], bandit, [params], KEY, budgets=[budget], num_reps=2, **kw
        ),
    }


def _raises_everywhere(calls, match, skip=()):
    for where, call in calls.items():
        if where in skip:
            continue
        with pytest.raises(ValueError, match=match) as err:
            call()
        assert WRAPPER not in str(err.value), where
        assert "\n" not in str(err.value), where


# ---------------------------------------------------------------- item 1: families
@pytest.mark.parametrize(
    "bandit, params, given",
    [(BANDIT, GPARAMS, "GaussianParams"), (GAUSS, PARAMS, "BernoulliParams")],
)
def test_params_of_another_family_are_refused(bandit, params, given):
    """Old: a Gaussian instance ran on the Bernoulli family (stds ignored, error 0.0);
    the reverse mix raised AttributeError."""
    calls = _entry_points(APT, bandit, params, metric=metrics.thresholding(0.5))
    _raises_everywhere(calls, f"params are a {given} but the bandit is the")


# ---------------------------------------------------------------- item 2: int32
@pytest.mark.parametrize("budget", [2**31 + 200, np.int64(2**32 + 200), 2**31])
def test_budgets_past_int32_are_refused_not_wrapped(budget):
    """Old: 2**31 + 200 ran 0 pulls, 2**32 + 200 ran 200 pulls, without a word."""
    calls = _entry_points(APT, BANDIT, PARAMS, budget=budget)
    _raises_everywhere(calls, "must be <= 2147483647")
    stack = envs.stack_instances([PARAMS, PARAMS])
    with pytest.raises(ValueError, match="budget must be <= 2147483647"):
        jbandits.simulate(
            APT, BANDIT, stack, KEY, budget=np.array([20, budget]), num_reps=2
        )
    with pytest.raises(ValueError, match="budget must be <= 2147483647"):
        jbandits.make("successive_rejects", num_arms=4, budget=budget)


@pytest.mark.parametrize("arg", ["horizon", "num_reps", "num_checkpoints"])
def test_counts_past_int32_are_refused(arg):
    kw = {"budget": 20, "num_reps": 2, arg: 2**31}
    with pytest.raises(ValueError, match=f"{arg} must be <= 2147483647"):
        jbandits.simulate(APT, BANDIT, PARAMS, KEY, **kw)


# ------------------------------------------------ item 6: schedules' minimum budget
FIXED_BUDGET = [
    ("successive_rejects", {}, 5),
    ("sar", {"m": 2}, 5),
    ("vbr_provisional", {}, 5),
    ("csar", {"threshold": 0.5}, 5),
    ("augucb", {"threshold": 0.5}, 5),
    ("sequential_halving", {}, 8),
    ("shvar", {"variances": np.ones(4)}, 8),
    ("shadavar", {}, 8),
    ("ugapeb", {"m": 1, "a": 1.0}, 5),
]


@pytest.mark.parametrize("name, kw, minimum", FIXED_BUDGET)
def test_budget_below_a_schedule_is_refused_with_its_minimum(name, kw, minimum):
    """Old: Successive Rejects with K=4, budget=4 ran 0 pulls, output -1, error 1.0."""
    budget = minimum - 1
    policy = jbandits.make(name, num_arms=4, budget=budget, **kw)
    calls = _entry_points(policy, BANDIT, PARAMS, budget=budget, metric=None)
    del calls["sweep_grid"]  # skips such cells (below); strict form checked there
    _raises_everywhere(calls, f"too small for {name} with K=4 arms.*>= {minimum}")


def test_sweep_grid_skips_or_refuses_cells_below_a_schedule():
    call = lambda **kw: jbandits.sweep_grid(  # noqa: E731
        [("sequential_halving", {})], BANDIT, [PARAMS], KEY, budgets=[4, 6],
        num_reps=2, **kw,
    )  # fmt: skip
    with pytest.raises(ValueError, match="sequential_halving.*needs budget >= 8"):
        call(skip_invalid=False)
    with pytest.raises(ValueError, match="no cells to run"):
        call()


@pytest.mark.parametrize("k", range(2, 10))
def test_minimum_budgets_are_the_schedules_own(k):
    """The refused budgets are exactly those the schedule builders cannot serve."""
    builders = {
        "successive_rejects": schedules.successive_rejects,
        "csar": schedules.csar,
        "sequential_halving": schedules.halving_equal_stages,
        "shvar": schedules.halving_karnin,
        "augucb": schedules.augucb_tables,
    }
    for name, build in builders.items():
        least = registry.min_budget(name, k)
        build(k, least)
        with pytest.raises(schedules.Infeasible):
            build(k, least - 1)
    karnin = registry.min_budget("sequential_halving", k, {"variant": "karnin"})
    assert karnin == registry.min_budget("sequential_halving", k)
    assert registry.min_budget("ugapeb", k, {"confidence": "bernstein"}) == 2 * k + 1


# ---------------------------------------------------------- item 8: metric settings
def test_metric_of_another_setting_is_refused():
    """Old: UCB1 under thresholding(0.5) reported error 1.0."""
    ucb = jbandits.make("ucb1", num_arms=4)
    calls = _entry_points(ucb, BANDIT, PARAMS, metric=metrics.thresholding(0.5))
    _raises_everywhere(calls, "scores the output of thresholding policies.*regret")
    calls = _entry_points(APT, BANDIT, PARAMS, metric=metrics.top_m(1))
    _raises_everywhere(calls, "top_m policies, but the policy is a thresholding")
    metrics.check_setting(metrics.identification(), ucb)  # its best-arm guess
    metrics.check_setting(lambda out, mu, mask: {}, ucb)  # a user's metric


# ---------------------------------------------------------------- item 11: no work
@pytest.mark.parametrize(
    "policies, budgets, instances, match",
    [
        ([("apt", {"threshold": 0.5, "epsilon": []})], [20], [PARAMS], "'epsilon'.*empty"),
        ([("apt", {"threshold": 0.5})], [], [PARAMS], "budgets must not be empty"),
        ([("apt", {"threshold": 0.5})], [2, 3], [PARAMS], "no cells to run"),
        ([("apt", {"threshold": 0.5})], 3, [PARAMS], "no cells to run"),  # a scalar
        ([("apt", {"threshold": 0.5})], [20], [], "instances must be a non-empty"),
        (["apt"], [20], [PARAMS], r"\(name, hp\) pairs"),
    ],
)  # fmt: skip
def test_sweep_grid_without_work_is_a_value_error(policies, budgets, instances, match):
    """Old: KeyError: 'times' (or 'int' object is not iterable for budgets=3)."""
    with pytest.raises(ValueError, match=match):
        jbandits.sweep_grid(
            policies, BANDIT, instances, KEY, budgets=budgets, num_reps=2
        )


def test_sweep_with_an_empty_grid_is_a_value_error():
    with pytest.raises(ValueError, match="grid has no points"):
        jbandits.sweep(
            "apt", BANDIT, PARAMS, KEY, grid={"threshold": []}, budget=20,
            num_reps=2, horizon=20,
        )  # fmt: skip


# ------------------------------------------------------- item 12: up-front checks
def test_num_checkpoints_zero_is_named():
    calls = _entry_points(APT, BANDIT, PARAMS, num_checkpoints=0)
    _raises_everywhere(calls, "num_checkpoints must be >= 1")


def test_diagnostics_without_a_channel_is_named():
    calls = _entry_points(APT, BANDIT, PARAMS, diagnostics=True)
    del calls["sweep_grid"]  # takes no diagnostics
    _raises_everywhere(calls, "diagnostics=True but .*no diagnostics channel")


@pytest.mark.parametrize("key", [jax.random.split(KEY, 3), 0])
def test_a_batch_of_keys_or_a_number_is_not_a_key(key):
    runs = {
        "simulate": lambda: jbandits.simulate(
            APT, BANDIT, PARAMS, key, budget=20, num_reps=2
        ),
        "run": lambda: jbandits.run(APT, BANDIT, PARAMS, key, budget=20, horizon=20),
        "sweep": lambda: jbandits.sweep(
            "apt", BANDIT, PARAMS, key, grid={"threshold": [0.5]}, budget=20,
            num_reps=2, horizon=20,
        ),
        "sweep_grid": lambda: jbandits.sweep_grid(
            [("apt", {"threshold": 0.5})], BANDIT, [PARAMS], key, budgets=[20],
            num_reps=2,
        ),
    }  # fmt: skip
    _raises_everywhere(runs, r"key must be one PRNG key: jax.random.key\(seed\)")


@pytest.mark.parametrize("hp", [{"epsilon": "0.05"}, {"epsilom": 0.05}])
def test_a_string_number_or_unknown_argument_is_named(hp):
    match = "epsilon must be a number" if "epsilon" in hp else "unknown argument"
    with pytest.raises(ValueError, match=match):
        jbandits.make("apt", num_arms=4, threshold=0.5, **hp)
    calls = {
        "sweep_grid": lambda: jbandits.sweep_grid(
            [("apt", {"threshold": 0.5, **hp})], BANDIT, [PARAMS], KEY,
            budgets=[20], num_reps=2, metric=metrics.thresholding(0.5),
        ),
        "sweep": lambda: jbandits.sweep(
            "apt", BANDIT, PARAMS, KEY, grid={k: [v] for k, v in hp.items()},
            budget=20, num_reps=2, horizon=20, metric=metrics.thresholding(0.5),
        ),
    }  # fmt: skip
    _raises_everywhere(calls, match)


# --------------------------------------------------------------- item 13: the rest
def test_stacking_instances_of_different_k_says_pad_arms():
    _, three = envs.bernoulli([0.1, 0.5, 0.9])
    with pytest.raises(
        ValueError, match=r"different numbers of arms \[3, 4\].*pad_arms"
    ):
        envs.stack_instances([PARAMS, three])
    padded = envs.stack_instances([PARAMS, envs.pad_arms(three, 4)])
    assert padded.arm_mask.shape == (2, 4)


def test_policy_init_takes_a_list_as_arm_mask():
    as_list = APT.init(KEY, [True, True, True, False])
    as_array = APT.init(KEY, np.array([True, True, True, False]))
    assert jax.tree_util.tree_all(
        jax.tree_util.tree_map(
            # NaN: APT's epsilon not given (jbandits.core.numbers.NOT_GIVEN)
            lambda a, b: bool(np.array_equal(a, b, equal_nan=True)), as_list, as_array
        )
    )
    with pytest.raises(ValueError, match="arm_mask must be a boolean array"):
        APT.init(KEY, [1, 1, 1, 0])
    with pytest.raises(ValueError, match=r"arm_mask must have shape \(4,\)"):
        APT.init(KEY, [True, True, True])


@pytest.mark.parametrize("metric", ["thresholding", metrics.thresholding])
def test_a_metric_name_or_unbuilt_metric_is_named(metric):
    calls = _entry_points(APT, BANDIT, PARAMS, metric=metric)
    del calls["run"]  # takes a metric callable as it is (no 'auto')
    _raises_everywhere(calls, "metric must be a")
