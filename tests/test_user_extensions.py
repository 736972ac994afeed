"""A user's own policy and reward family (examples/), written against public names
only, run through simulate and sweep like the built-in ones."""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys

import jax
import numpy as np
import pytest
from compile_log import count_compiles

import jbandits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def examples():
    """The examples/ modules, imported for one test (their policies and family
    registered, then unregistered: the registry-wide tests must not see them)."""
    sys.path.insert(0, ROOT)
    try:
        eg = importlib.import_module("examples.epsilon_greedy")
        exp = importlib.import_module("examples.exponential_family")
        yield eg, exp
    finally:
        sys.path.remove(ROOT)
        for module in (
            "examples.epsilon_greedy",
            "examples.exponential_family",
            "exponential_family",  # imported by a sweep config
        ):
            sys.modules.pop(module, None)
        for name in ("epsilon_greedy", "epsilon_greedy_glr"):
            if name in jbandits.names():
                jbandits.core.registry.unregister(name)
        if "exponential" in jbandits.envs.family_names():
            jbandits.envs.unregister_family("exponential")


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
    bandit, params = jbandits.envs.make_family("exponential", [0.5, 1.0, 2.0])
    assert bandit is examples[1].EXPONENTIAL
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


def test_the_user_policy_matches_its_plain_python_version_arm_for_arm(examples):
    case = examples[0].CASE
    assert jbandits.sim.trace.check_case(case, seed=1, num_instances=40) == 40

    # the harness can fail: a reference that explores with 1 - epsilon differs
    def wrong(inst, draws):
        hp = {"epsilon": 1.0 - float(inst.hp["epsilon"])}
        return examples[0].reference(inst._replace(hp=hp), draws)

    with pytest.raises(AssertionError, match="arms differ"):
        jbandits.sim.trace.check_case(case._replace(reference=wrong), num_instances=40)


def test_the_stopping_variant_stops_and_recommends(examples):
    bandit, params = jbandits.envs.bernoulli([0.1, 0.9])
    policy = jbandits.make("epsilon_greedy_glr", num_arms=2, epsilon=0.5, delta=0.1)
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(0), budget=5000, num_reps=32,
        progress=False,
    )  # fmt: skip
    assert bool(np.all(res.stopped)) and int(np.max(res.num_pulls)) < 5000
    assert int(np.sum(np.asarray(res.output) == 1)) >= 30  # delta = 0.1


def test_families_by_name(examples):
    from jbandits.envs import families

    assert {"bernoulli", "gaussian", "exponential"} <= set(families.family_names())
    bandit, params = families.make_family("gaussian", [0.0, 1.0], std=2.0)
    np.testing.assert_array_equal(params.stds, [2.0, 2.0])
    with pytest.raises(ValueError, match="unknown reward family 'poisson'; known: "):
        families.make_family("poisson", [1.0, 2.0])
    with pytest.raises(ValueError, match="takes no options, not 'std'|not 'std'"):
        families.make_family("exponential", [1.0, 2.0], std=1.0)
    with pytest.raises(ValueError, match="already registered"):
        families.register_family("exponential", lambda means: None)
    with pytest.raises(ValueError, match="must be"):
        families.make_family("exponential", [1.0, -2.0])


def test_a_sweep_config_names_a_users_family(examples, tmp_path):
    from jbandits.cli import config

    cfg = config.load(os.path.join(ROOT, "examples", "sweep_exponential.toml"))
    assert cfg["bandit"] == "exponential"
    path = tmp_path / "bad.toml"
    with open(os.path.join(ROOT, "examples", "sweep_exponential.toml")) as f:
        text = f.read().replace(
            '"exponential_family.py"',
            repr(os.path.join(ROOT, "examples", "exponential_family.py")),
        )
    path.write_text(text.replace('bandit = "exponential"', 'bandit = "exponentail"'))
    with pytest.raises(config.ConfigError, match="did you mean 'exponential'.*known: "):
        config.load(str(path))
    path.write_text(text.replace("exponential_family.py", "no_such_file.py"))
    with pytest.raises(config.ConfigError, match=r"imports\[0\]: cannot import"):
        config.load(str(path))
    path.write_text(text.replace("[instances]", "[instances]\nstd = 1.0"))
    with pytest.raises(config.ConfigError, match="std does not apply"):
        config.load(str(path))


@pytest.mark.slow
@pytest.mark.parametrize("script", ["epsilon_greedy.py", "exponential_family.py"])
def test_the_examples_run_as_scripts(script, tmp_path):
    env = dict(os.environ, JAX_PLATFORMS="cpu", JBANDITS_PROGRESS="0")
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "examples", script)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
