"""Registry: names, make, errors, and top-level exports of every registered factory."""

import importlib
import sys
import textwrap

import jax
import numpy as np
import pytest
from compile_log import count_traces

import jbandits


def test_every_registered_factory_is_exported_at_top_level():
    for name in jbandits.names():
        assert getattr(jbandits, name) is jbandits.factory(name), name
        assert name in jbandits.__all__


def test_make_builds_a_policy_with_a_setting():
    policy = jbandits.make("apt", num_arms=5, threshold=0.5)
    assert isinstance(policy, jbandits.Policy) and policy.setting == "thresholding"


def test_unknown_and_duplicate_names_raise():
    with pytest.raises(ValueError, match="unknown policy"):
        jbandits.make("no-such-policy", num_arms=3)
    with pytest.raises(ValueError, match="already registered"):
        jbandits.register("apt", jbandits.apt)


def test_names_cover_the_three_families():
    names = set(jbandits.names())
    assert {"apt", "augucb", "lsa", "csar", "optkg"} <= names
    assert {"successive_rejects", "sequential_halving", "shadavar", "ugapec"} <= names
    assert {"eucbv", "thompson", "klucb", "dmed", "median_elimination"} <= names


# A policy in a module of its own, outside the package: the decorator is all it
# needs to be made by name, reached as jbandits.<name>, and swept over its numbers.
_MODULE = """
import jax.numpy as jnp

from jbandits.policies.blocks import arms
from jbandits.core import registry
from jbandits.policies.blocks.index import index_policy


@registry.policy("tmp_greedy_bonus", static=("passes",))
def tmp_greedy_bonus(num_arms, *, bonus=1.0, passes=1):
    \"\"\"Pull argmax mean_i + bonus / sqrt(n_i) (a test policy).\"\"\"
    return index_policy(
        num_arms,
        lambda stats, mask: arms.mean(stats) + bonus / jnp.sqrt(stats.counts),
        select="max",
        output=lambda stats, mask: arms.best_empirical(stats, mask),
        setting="regret",
        passes=passes,
        variance=False,
    )
"""


@pytest.fixture
def tmp_policy_module(tmp_path, monkeypatch):
    (tmp_path / "tmp_policy_mod.py").write_text(textwrap.dedent(_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("tmp_policy_mod")
    yield module
    sys.modules.pop("tmp_policy_mod", None)
    jbandits.core.registry.unregister("tmp_greedy_bonus")


def test_a_policy_registered_in_its_own_module_is_made_and_swept(tmp_policy_module):
    assert "tmp_greedy_bonus" in jbandits.names()
    assert jbandits.tmp_greedy_bonus is jbandits.factory("tmp_greedy_bonus")
    policy = jbandits.make("tmp_greedy_bonus", num_arms=3, bonus=0.5)
    assert policy.spec.name == "tmp_greedy_bonus"
    assert jbandits.core.registry.split_kwargs(
        {"bonus": 0.5, "passes": 2}, policy.spec.name
    ) == (
        {"passes": 2},
        {"bonus": 0.5},
    )
    bandit, params = jbandits.envs.bernoulli([0.2, 0.5, 0.8])
    key = jax.random.key(0)
    jbandits.sim.runner.clear_cache()
    with count_traces() as traces:
        regrets = [
            jbandits.simulate(
                jbandits.tmp_greedy_bonus(3, bonus=b),
                bandit,
                params,
                key,
                budget=60,
                num_reps=8,
                progress=False,
            ).regret.mean()
            for b in (0.0, 0.5, 2.0)
        ]
    assert len(traces) == 1  # the bonus is traced: one program for the three
    assert len(set(np.round(regrets, 6))) > 1  # and the numbers reach the policy
    importlib.reload(tmp_policy_module)  # a reload (notebooks) replaces the entry
    assert "tmp_greedy_bonus" in jbandits.names()


def test_make_splits_structure_from_numbers_once():
    policy = jbandits.make(
        "apt", num_arms=6, threshold=0.4, epsilon=0.1, variant="paper"
    )
    spec = policy.spec
    assert dict(spec.static) == {"num_arms": 6, "variant": "paper"}
    assert spec.params == {"threshold": 0.4, "epsilon": 0.1}
    assert dict(spec.kwargs) == {**dict(spec.static), **spec.params}
    # integers a policy declares static stay structure (sar's m fixes shapes)
    sar = jbandits.make("sar", num_arms=6, m=2, budget=300)
    assert dict(sar.spec.static) == {"num_arms": 6, "m": 2}
    assert sar.spec.params == {"budget": 300}


# A fixed-schedule policy writes only its paper's arguments; the registry adds the
# shared budget, schedule and execution (jbandits.core.arguments) to its signature, its
# docstring and its hooks.
_PHASED = """
from jbandits.policies.blocks import arms
from jbandits.core import registry
from jbandits.policies.identification.successive_rejects import SCHEDULE, rejects_policy


@registry.policy("tmp_reject_by_bonus", shared=SCHEDULE)
def tmp_reject_by_bonus(num_arms, *, bonus: float = 0.0, table, execution):
    \"\"\"Successive Rejects that rejects by mean + bonus (a test policy).

    Args:
      num_arms: K.
      bonus: a number.
    \"\"\"
    return rejects_policy(
        num_arms,
        table,
        lambda stats, active: arms.least_pulled(stats.counts, active),
        lambda stats: arms.mean(stats) + bonus,
        execution=execution,
    )
"""


def test_a_shared_argument_group_adds_its_arguments_docs_and_hooks(
    tmp_path, monkeypatch
):
    import inspect

    (tmp_path / "tmp_phased_mod.py").write_text(textwrap.dedent(_PHASED))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("tmp_phased_mod")
    try:
        name = "tmp_reject_by_bonus"
        raw = jbandits.core.registry.raw_factory(name)
        params = inspect.signature(jbandits.factory(name)).parameters
        assert list(params) == ["num_arms", "bonus", "budget", "schedule", "execution"]
        assert [params[k].default for k in ("bonus", "budget", "execution")] == [
            0.0,
            None,
            None,
        ]
        assert params["budget"].kind is inspect.Parameter.KEYWORD_ONLY
        doc = inspect.getdoc(raw)
        assert doc.index("bonus:") < doc.index("budget: T.") < doc.index("execution:")
        assert jbandits.core.registry.prepare_hook(
            name
        ) is jbandits.core.registry.prepare_hook("successive_rejects")
        assert jbandits.core.registry.min_budget(
            name, 4
        ) == jbandits.core.registry.min_budget("successive_rejects", 4)
        with pytest.raises(TypeError, match="table"):
            raw(4, budget=40, table=None)
        with pytest.raises(ValueError, match="budget"):
            raw(4)
        policy = jbandits.make(name, num_arms=4, bonus=0.0, budget=40)
        assert policy.spec.params == {"bonus": 0.0, "budget": 40}
        # with no bonus it is Successive Rejects, built from the same budget
        bandit, params = jbandits.envs.bernoulli([0.2, 0.5, 0.8, 0.3])
        kw = {"budget": 40, "num_reps": 16, "progress": False}
        pair = (policy, jbandits.successive_rejects(4, budget=40))
        a, b = (
            jbandits.simulate(p, bandit, params, jax.random.key(3), **kw) for p in pair
        )
        np.testing.assert_array_equal(a.regret, b.regret)
    finally:
        sys.modules.pop("tmp_phased_mod", None)
        jbandits.core.registry.unregister("tmp_reject_by_bonus")


def test_the_fixed_schedule_policies_keep_their_public_signatures():
    import inspect

    tail = "budget: 'ArrayLike | None' = None, schedule: 'Any' = None, "
    tail += "execution: 'Execution | None' = None) -> 'Policy'"
    expected = {
        "successive_rejects": "(num_arms: 'int', *, ",
        "sar": "(num_arms: 'int', *, m: 'ArrayLike', ",
        "vbr_provisional": "(num_arms: 'int', *, gamma: 'ArrayLike' = 1.96, ",
        "shvar": "(num_arms: 'int', *, variances: 'ArrayLike', ",
        "shadavar": "(num_arms: 'int', *, delta: 'ArrayLike' = 0.05, ",
    }
    for name, head in expected.items():
        assert str(inspect.signature(getattr(jbandits, name))) == head + tail, name
        assert "schedule: a :class:" in getattr(jbandits, name).__doc__, name
