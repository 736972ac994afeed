"""Hardening round 4 (issue 65), classes 1 and 2: a compiled program and a results
store identify the code they ran (:mod:`jbandits.core.code_identity`), so a name
registered again with other code, an edited notebook cell, a changed helper or
constant, or a user's family under a built-in's name never serves old results."""

from __future__ import annotations

import json
import sys
import types

import jax
import numpy as np
import pytest
from compile_log import count_compiles

import jbandits
from jbandits.analysis.store import StoreMismatch
from jbandits.core import registry
from jbandits.sim import runner

NAME = "h4_fixed_arm"
MEANS = [0.2, 0.8]  # arm 0 costs 0.6 a pull, arm 1 nothing
BUDGET = 20

# a "notebook cell": a policy that pulls one arm for ever (ARM, through a helper)
CELL = """
from typing import NamedTuple
import jax.numpy as jnp
import jbandits

ARM = {arm}

class S(NamedTuple):
    t: object
    arm: object

def which():
    return {which}

def fixed_arm(num_arms, *, scale=1.0):
    def init(key, arm_mask):
        return S(jnp.zeros((), jnp.int32), jnp.asarray(which(), jnp.int32))

    def step(state, key, reward):
        return S(state.t + 1, state.arm)

    def output(state):
        return state.arm

    return jbandits.Policy(init, step, output, "regret")
"""


def cell(arm=0, which="ARM", module="h4_cell"):
    """Run the cell's source in a module namespace (as a notebook does): new
    function objects each time, with the module and qualified names of the last."""
    mod = types.ModuleType(module)
    sys.modules[module] = mod
    exec(compile(CELL.format(arm=arm, which=which), f"<{module}>", "exec"), vars(mod))
    return mod


@pytest.fixture
def fresh():
    """Unregister NAME and drop the cell modules after the test."""
    yield
    if NAME in jbandits.names():
        registry.unregister(NAME)
    for name in ("h4_cell", "h4_other"):
        sys.modules.pop(name, None)


def regret(policy=NAME, **kw):
    """Mean final regret of ``policy`` on MEANS (no arm permutation)."""
    bandit, params = jbandits.envs.bernoulli(MEANS)
    if isinstance(policy, str):
        policy = jbandits.make(policy, num_arms=2)
    res = jbandits.simulate(
        policy, bandit, params, jax.random.key(0), budget=BUDGET, num_reps=4,
        permute=False, progress=False, **kw,
    )  # fmt: skip
    return float(np.mean(res.regret[:, -1]))


def grid_regret():
    bandit, params = jbandits.envs.bernoulli(MEANS)
    res = jbandits.sweep_grid(
        [(NAME, {})], bandit, [params], jax.random.key(0), budgets=[BUDGET],
        num_reps=4, permute=False, progress=False,
    )  # fmt: skip
    return float(np.mean(res.values["regret"][..., -1]))


# ------------------------------------------------------------------- class 1
def test_a_name_registered_again_with_other_code_runs_the_new_code(fresh):
    registry.register(NAME, cell(arm=0).fixed_arm)
    assert regret() == pytest.approx(0.6 * BUDGET)
    assert grid_regret() == pytest.approx(0.6 * BUDGET)
    registry.unregister(NAME)
    registry.register(NAME, cell(arm=1, module="h4_other").fixed_arm)
    assert regret() == 0.0
    assert grid_regret() == 0.0


def test_an_edited_notebook_cell_runs_its_new_code(fresh):
    registry.register(NAME, cell(arm=0).fixed_arm)
    assert regret() == pytest.approx(0.6 * BUDGET)
    registry.register(NAME, cell(arm=1).fixed_arm)  # the same qualified name
    assert regret() == 0.0


def test_a_changed_helper_or_constant_runs_the_new_code(fresh):
    mod = cell(arm=0)
    registry.register(NAME, mod.fixed_arm)
    assert regret() == pytest.approx(0.6 * BUDGET)
    mod.ARM = 1  # a global constant the factory reads through its helper
    assert regret() == 0.0
    exec("def which():\n    return 0\n", vars(mod))  # the helper redefined
    assert regret() == pytest.approx(0.6 * BUDGET)


def test_factories_closing_over_other_numbers_are_other_programs(fresh):
    mod = cell(arm=0)

    def factory_for(arm):
        def fixed(num_arms, *, scale=1.0):
            policy = mod.fixed_arm(num_arms)
            start = policy.init

            def init(key, arm_mask):
                return start(key, arm_mask)._replace(arm=jax.numpy.int32(arm))

            return policy._replace(init=init)

        return fixed

    registry.register(NAME, factory_for(0))
    assert regret() == pytest.approx(0.6 * BUDGET)
    registry.unregister(NAME)
    registry.register(NAME, factory_for(1))
    assert regret() == 0.0


class FixedArm:
    """A factory that is an object (its number an attribute)."""

    def __init__(self, mod, arm):
        self.mod, self.arm = mod, arm

    def __call__(self, num_arms, *, scale=1.0):
        policy = self.mod.fixed_arm(num_arms)
        start, arm = policy.init, self.arm
        return policy._replace(
            init=lambda k, m: start(k, m)._replace(arm=jax.numpy.int32(arm))
        )


def test_an_object_factory_with_other_attributes_or_code_is_another_program(fresh):
    mod = cell(arm=0)
    registry.register(NAME, FixedArm(mod, 1))
    assert regret() == 0.0
    registry.unregister(NAME)
    registry.register(NAME, FixedArm(mod, 0))
    assert regret() == pytest.approx(0.6 * BUDGET)
    scope = {"__builtins__": __builtins__}  # exec() without a module
    exec(CELL.format(arm=1, which="ARM"), scope)
    registry.unregister(NAME)
    registry.register(NAME, scope["fixed_arm"])
    assert regret() == 0.0
    scope["ARM"] = 0
    assert regret() == pytest.approx(0.6 * BUDGET)


def test_a_hand_built_policy_whose_helper_changed_runs_the_new_code(fresh):
    mod = cell(arm=0)
    policy = mod.fixed_arm(2)  # no spec: keyed on itself and its code
    assert regret(policy) == pytest.approx(0.6 * BUDGET)
    mod.ARM = 1
    assert regret(policy) == 0.0


def test_the_same_code_registered_again_compiles_nothing(fresh):
    registry.register(NAME, cell(arm=0).fixed_arm)
    regret()
    registry.unregister(NAME)
    registry.register(NAME, cell(arm=0).fixed_arm)  # new objects, same code
    with count_compiles() as compiles:
        assert regret() == pytest.approx(0.6 * BUDGET)
        regret(jbandits.make(NAME, num_arms=2, scale=3.0))  # a number: no program
    assert compiles.count == 0


# ------------------------------------------------------------------- class 2
def stored(path, policy=NAME, bandit=None, params=None, report=None):
    """simulate into the store at ``path``; the mean final regret."""
    if bandit is None:
        bandit, params = jbandits.envs.bernoulli(MEANS)
    res = jbandits.simulate(
        jbandits.make(policy, num_arms=2), bandit, params, jax.random.key(0),
        budget=BUDGET, num_reps=4, permute=False, progress=False, store=str(path),
        report=report,
    )  # fmt: skip
    return res


def one_line_refusal(fn, *names):
    with pytest.raises(StoreMismatch) as err:
        fn()
    text = str(err.value)
    assert "\n" not in text and "other code" in text, text
    for name in names:
        assert name in text, text
    return text


def test_a_store_refuses_a_policy_whose_code_changed(fresh, tmp_path):
    registry.register(NAME, cell(arm=0).fixed_arm)
    stored(tmp_path / "s")
    registry.unregister(NAME)
    registry.register(NAME, cell(arm=1, module="h4_other").fixed_arm)
    one_line_refusal(lambda: stored(tmp_path / "s"), NAME, "another store")
    mod = sys.modules["h4_other"]
    mod.ARM = 0  # a constant (the code of the first run again: resumed)
    report = runner.Report()
    res = stored(tmp_path / "s", report=report)
    assert report.chunks_skipped >= 1 and report.chunks == 0
    assert float(np.mean(res.regret[:, -1])) == pytest.approx(0.6 * BUDGET)


def test_a_store_of_unchanged_code_resumes_bit_identically(fresh, tmp_path):
    registry.register(NAME, cell(arm=0).fixed_arm)
    first = stored(tmp_path / "s")
    registry.unregister(NAME)
    registry.register(NAME, cell(arm=0).fixed_arm)  # new objects, same code
    report = runner.Report()
    again = stored(tmp_path / "s", report=report)
    assert report.chunks == 0 and report.chunks_skipped >= 1
    np.testing.assert_array_equal(first.regret, again.regret)
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert set(manifest["code"]) == {f"policy {NAME}", "family bernoulli"}


def test_a_store_written_before_code_identities_resumes_and_records_it(tmp_path):
    first = stored(tmp_path / "s", "ucb1")
    path = tmp_path / "s" / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["code"]
    manifest["status"] = "running"  # interrupted (a finished one is only read)
    path.write_text(json.dumps(manifest))
    report = runner.Report()
    again = stored(tmp_path / "s", "ucb1", report=report)
    assert report.chunks == 0
    np.testing.assert_array_equal(first.regret, again.regret)
    assert "code" in json.loads(path.read_text())


def _user_family(name, reward):
    """A family ``name`` on the Bernoulli params whose every reward is ``reward``."""
    import jax.numpy as jnp

    params_type = type(jbandits.envs.bernoulli(MEANS)[1])

    def sample(params, key, arm, pull_index):
        del key, pull_index
        return jnp.full((), reward, params.means.dtype) + 0 * params.means[arm]

    return jbandits.envs.family(name, params_type, sample, stds=lambda p: 0 * p.means)


def test_a_users_family_under_a_builtin_name_does_not_reuse_its_store(tmp_path):
    bandit, params = jbandits.envs.bernoulli(MEANS)
    stored(tmp_path / "s", "ucb1", bandit, params)
    mine = _user_family("bernoulli", 1.0)
    one_line_refusal(
        lambda: stored(tmp_path / "s", "ucb1", mine, params), "family bernoulli"
    )


def test_a_store_refuses_a_family_whose_sampler_changed(tmp_path):
    _, params = jbandits.envs.bernoulli(MEANS)
    stored(tmp_path / "s", "ucb1", _user_family("h4fam", 1.0), params)
    stored(tmp_path / "s", "ucb1", _user_family("h4fam", 1.0), params)  # same code
    one_line_refusal(
        lambda: stored(tmp_path / "s", "ucb1", _user_family("h4fam", 0.0), params),
        "family h4fam",
    )


def test_sweep_grid_and_sweep_stores_refuse_changed_code(fresh, tmp_path):
    bandit, params = jbandits.envs.bernoulli(MEANS)

    def grid():
        return jbandits.sweep_grid(
            [(NAME, {}), ("ucb1", {})], bandit, [params], jax.random.key(0),
            budgets=[BUDGET], num_reps=4, permute=False, progress=False,
            store=str(tmp_path / "g"),
        )  # fmt: skip

    def sweep():
        return jbandits.sweep(
            NAME, bandit, params, jax.random.key(0), grid={"scale": np.ones(2)},
            num_reps=4, horizon=BUDGET, budget=BUDGET, progress=False,
            store=str(tmp_path / "w"),
        )  # fmt: skip

    registry.register(NAME, cell(arm=0).fixed_arm)
    grid(), sweep()
    registry.register(NAME, cell(arm=1).fixed_arm)  # the edited cell
    one_line_refusal(grid, f"policy {NAME}")
    one_line_refusal(sweep, f"policy {NAME}")


def test_resumable_recomputes_a_call_whose_code_changed(fresh, tmp_path):
    registry.register(NAME, cell(arm=0).fixed_arm)
    with runner.resumable(str(tmp_path)):
        assert regret(batch_size=4) == pytest.approx(0.6 * BUDGET)
    registry.register(NAME, cell(arm=1).fixed_arm)
    with runner.resumable(str(tmp_path)):
        assert regret(batch_size=4) == 0.0
    assert len([p for p in tmp_path.iterdir() if p.is_dir()]) == 2
