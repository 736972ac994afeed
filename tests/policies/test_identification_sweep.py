"""A budget sweep of SR and SH over >= 10 budgets compiles once (stacked schedules)."""

import jax
import numpy as np
import pytest
from compile_log import count_compiles

import jbandits
from jbandits.analysis import metrics
from jbandits.policies.blocks import schedules
from jbandits.policies.identification import (
    halving_schedule,
    sequential_halving,
    sr_schedule,
    successive_rejects,
)

K = 6
BUDGETS = np.arange(40, 140, 10)  # 10 budgets


def _sr_grid():
    stacked = schedules.stack([sr_schedule(K, int(b), size=K) for b in BUDGETS])
    return (
        {"budget": BUDGETS, **stacked._asdict()},
        schedules.PhaseSchedule,
        successive_rejects,
        sr_schedule,
    )


def _sh_grid():
    size = schedules.num_halving_stages(K)
    stacked = schedules.stack([halving_schedule(K, int(b), size=size) for b in BUDGETS])
    return (
        {"budget": BUDGETS, **stacked._asdict()},
        schedules.StageSchedule,
        sequential_halving,
        halving_schedule,
    )


@pytest.mark.parametrize("grid_fn", [_sr_grid, _sh_grid], ids=["sr", "sh"])
def test_budget_sweep_compiles_once_and_matches_single_runs(grid_fn):
    grid, sched_type, factory, build = grid_fn()

    def make_policy(budget, **sched):
        return factory(K, budget=budget, schedule=sched_type(**sched))

    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.8, K))
    with count_compiles() as compiles:
        res = jbandits.sweep(
            make_policy,
            bandit,
            params,
            jax.random.key(0),
            grid=grid,
            num_reps=4,
            horizon=int(BUDGETS.max()),
            metric=metrics.identification(),
            permute=False,  # compared with a plain run below
        )
    assert compiles.count == 1
    assert res.output.shape == (len(BUDGETS), 4)
    # every grid point spends exactly its schedule (the rest is idle)
    used = [int(np.asarray(build(K, int(b)).ends).max()) for b in BUDGETS]
    np.testing.assert_array_equal(res.num_pulls[:, 0], used)
    # a grid point equals a standalone run with the concrete budget (same key)
    single = jbandits.run(
        factory(K, budget=int(BUDGETS[3])),
        bandit,
        params,
        jax.random.split(jax.random.key(0), 4)[0],
        budget=int(BUDGETS[3]),
        horizon=int(BUDGETS.max()),
    )
    assert int(single.output) == int(res.output[3, 0])
    np.testing.assert_array_equal(single.pulls, res.pulls[3, 0])
