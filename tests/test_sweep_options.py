"""jbandits.sweep's options for callers that sweep many calls (the tuner, issue 62
item 3): ``fixed`` (static arguments and shared numbers), ``return_state`` and
``min_lanes`` (a fixed chunk shape for any number of points)."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jbandits
from jbandits.sim import runner

K = 5
BANDIT, PARAMS = jbandits.envs.bernoulli(np.array([0.2, 0.35, 0.5, 0.6, 0.7]))
KEY = jax.random.key(3)


def _leaves(res):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(res)]


def test_fixed_static_and_numbers_run_as_the_built_policy_at_each_point():
    """m=2 (static: it shapes the output) and epsilon (a number every point shares):
    each point's runs are those of jbandits.make at that point (the same keys)."""
    a = np.array([0.5, 2.0, 8.0])
    res = jbandits.sweep(
        "ugapeb", BANDIT, PARAMS, KEY, grid={"a": a, "budget": [60] * 3},
        num_reps=6, horizon=60, fixed={"m": 2, "epsilon": 0.05}, metric=None,
    )  # fmt: skip
    assert res.output.shape[:2] == (3, 6)
    assert np.all(res.output.sum(-1) == 2)  # two arms chosen: m=2 reached the program
    for p, a_p in enumerate(a):
        policy = jbandits.make(
            "ugapeb", num_arms=K, m=2, epsilon=0.05, a=a_p, budget=60
        )
        one = jbandits.simulate(
            policy, BANDIT, PARAMS, KEY, num_reps=6, budget=60, metric=None
        )
        for x, y in zip(
            _leaves(one),
            _leaves(jax.tree_util.tree_map(lambda v: v[p], res)),
            strict=True,
        ):
            np.testing.assert_array_equal(x, y)


def test_fixed_names_also_in_grid_or_not_a_dict_are_refused():
    with pytest.raises(ValueError, match="both in fixed and in grid"):
        jbandits.sweep(
            "ucb1", BANDIT, PARAMS, KEY, grid={"alpha": [1.0]}, num_reps=2,
            horizon=20, budget=20, fixed={"alpha": 2.0},
        )  # fmt: skip
    with pytest.raises(ValueError, match="fixed must be a dict"):
        jbandits.sweep(
            "ucb1", BANDIT, PARAMS, KEY, grid={"alpha": [1.0]}, num_reps=2,
            horizon=20, budget=20, fixed=[("alpha", 2.0)],
        )  # fmt: skip


def _sweep(num_points, **kw):
    return jbandits.sweep(
        "ucb1", BANDIT, PARAMS, KEY, grid={"alpha": np.linspace(0.5, 2.0, num_points)},
        num_reps=4, horizon=30, budget=30, batch_size=64, **kw,
    )  # fmt: skip


def test_min_lanes_runs_one_chunk_shape_and_drops_the_padding():
    """Without min_lanes a small work shrinks the chunk (8 lanes); with it, the chunk
    is the batch size whatever the number of points, and the results are the
    unpadded ones."""
    for num_points in (2, 5):
        plain, padded = runner.Report(), runner.Report()
        a = _sweep(num_points, report=plain)
        b = _sweep(num_points, report=padded, min_lanes=64)
        assert plain.chunk_size == 4 * num_points
        assert padded.chunk_size == 64 and padded.lanes == 64
        assert b.regret.shape == a.regret.shape == (num_points, 4, 1)
        for x, y in zip(_leaves(a), _leaves(b), strict=True):
            np.testing.assert_array_equal(x, y)
    with pytest.raises(ValueError, match="min_lanes"):
        _sweep(2, min_lanes=0)


def test_min_lanes_is_refused_with_a_store(tmp_path):
    with pytest.raises(ValueError, match="not with store"):
        _sweep(2, min_lanes=64, store=str(tmp_path / "s"))


def test_return_state_gives_each_runs_final_state():
    """Each point's final states are simulate's (return_state=True) at that point."""
    assert _sweep(3).state is None
    res = _sweep(3, return_state=True)
    assert res.state is not None
    for p, alpha in enumerate(np.linspace(0.5, 2.0, 3)):
        one = jbandits.simulate(
            jbandits.make("ucb1", num_arms=K, alpha=alpha), BANDIT, PARAMS, KEY,
            num_reps=4, budget=30, return_state=True,
        )  # fmt: skip
        mine = jax.tree_util.tree_map(lambda v, p=p: v[p], res.state)
        for x, y in zip(_leaves(one.state), _leaves(mine), strict=True):
            np.testing.assert_array_equal(x, y)
