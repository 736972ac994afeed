"""A user's own policy and reward family (examples/), written against public names
only, run through simulate and sweep like the built-in ones."""

from __future__ import annotations

import ast
import importlib
import os
import sys

import jax
import numpy as np
import pytest
from compile_log import count_compiles

import jbandits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def examples():
    """The examples/ modules, imported for one test (the policy registered, then
    unregistered: the registry-wide tests must not see it)."""
    sys.path.insert(0, ROOT)
    try:
        eg = importlib.import_module("examples.epsilon_greedy")
        exp = importlib.import_module("examples.exponential_family")
        yield eg, exp
    finally:
        sys.path.remove(ROOT)
        sys.modules.pop("examples.epsilon_greedy", None)
        if "epsilon_greedy" in jbandits.names():
            jbandits.core.registry.unregister("epsilon_greedy")


def _imports(path):
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            yield from ((a.name, []) for a in node.names)


def test_the_examples_import_no_private_name():
    for name in ("epsilon_greedy.py", "exponential_family.py"):
        for module, names in _imports(os.path.join(ROOT, "examples", name)):
            if module == "__future__":
                continue
            parts = module.split(".") + names
            assert not any(p.startswith("_") for p in parts), (name, module, names)


def test_a_user_policy_sweeps_its_number_with_one_program(examples):
    bandit, params = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
    jbandits.sim.runner.clear_cache()
    regrets = []
    with count_compiles() as compiles:
        for eps in (0.0, 0.1, 0.5, 1.0):
            policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=eps)
            res = jbandits.simulate(
                policy, bandit, params, jax.random.key(0), budget=300, num_reps=64,
                progress=False,
            )  # fmt: skip
            regrets.append(float(np.mean(res.regret[:, -1])))
    assert compiles.count == 1
    # all exploration (eps = 1) is uniform play: regret ~ T * mean gap = 300 * 0.3
    assert abs(regrets[-1] - 90.0) < 6.0, regrets
    assert regrets[1] < regrets[-1]


def test_a_user_reward_family_runs_and_its_means_are_honoured(examples):
    bandit, params = examples[1].exponential([0.5, 1.0, 2.0])
    policy = jbandits.make("ucb1", num_arms=3)
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(3), budget=200, num_reps=256,
        progress=False,
    )  # fmt: skip
    per_pull = np.asarray(res.reward[:, -1]).sum() / np.asarray(res.num_pulls).sum()
    pulls = np.asarray(res.pulls).sum(0)
    expected = float(np.dot(pulls, [0.5, 1.0, 2.0]) / pulls.sum())
    assert abs(per_pull - expected) < 0.05 * expected
    assert pulls[2] > pulls[0]
