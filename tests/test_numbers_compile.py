"""Numbers never recompile by value or type (jbandits.core.numbers): for every
registered policy, a Python loop of ``simulate`` calls over each of its numbers --
the default left out, the default spelled out (``None`` for an optional number),
another value, and the int and float spellings of an integral value -- traces one
program (the runner's ``jbandits_lanes``). Three representatives run by default,
the rest in the slow set."""

from __future__ import annotations

import inspect

import jax
import numpy as np
import pytest
from cases import CASES
from compile_log import count_traces
from harness import slow_where

import jbandits
from jbandits.core import numbers, registry

_FIRST = {}
for _case in CASES:
    _FIRST.setdefault(_case.registry_name, _case)

# the examples and an optional number derived in the trace run by default
DEFAULT = {"apt", "ucb1", "eucbv"}


def _variants(name: str, key: str, value, default) -> list:
    """The spellings of number ``key`` a loop goes through: [] = left out."""
    out = []
    if default is not inspect.Parameter.empty:
        out += [[], [(key, default)]]
    if isinstance(value, float) and np.isnan(value):
        return out
    scalar = np.ndim(value) == 0
    if scalar:
        v = float(value)
        other = v * 1.25 if v != 0 else 0.01
        if dict(registry.kinds(name))[key] == "int":
            other = int(value) + 1
        out.append([(key, other)])
        if v == round(v):
            out += [[(key, int(v))], [(key, float(v))]]
    else:
        out.append([(key, np.asarray(value, float) * 1.25)])
    return out


def _setup(name: str):
    case = _FIRST[name]
    rng = np.random.default_rng(0)
    inst = case.sample(rng, case.k_max, case.horizon)
    policy = case.make_policy(**inst.hp)
    # a case that hands the factory a host schedule (a phase policy's trace case)
    # loops over the policy's own numbers, built by make
    if policy.spec is None or any(
        isinstance(v, tuple) for v in policy.spec.params.values()
    ):
        takes = registry.parameters(registry.raw_factory(name))
        hp = {k: v for k, v in inst.hp.items() if k in takes}
        if registry.prepare_hook(name) is not None:
            hp.setdefault("budget", int(inst.budget))
        if "horizon" in takes and registry.is_static("horizon", 1, name):
            hp.setdefault("horizon", case.horizon)  # a static horizon (EUCBV)
        policy = jbandits.make(name, num_arms=case.k_max, **hp)
    # the metric of the first policy for every run: the default one of a
    # thresholding policy closes over its threshold (a key of its own)
    metric = jbandits.analysis.metrics.for_policy(policy)
    means = rng.uniform(0.05, 0.95, case.k_max) * inst.arm_mask
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=inst.arm_mask)
    return policy.spec, bandit, params, int(inst.budget), metric


@pytest.mark.parametrize("name", slow_where(sorted(_FIRST), set(_FIRST) - DEFAULT))
def test_a_loop_over_every_number_traces_one_program(name):
    spec, bandit, params, budget, metric = _setup(name)
    signature = registry.parameters(registry.raw_factory(name))
    base = {
        k: v
        for k, v in spec.params.items()
        if not (np.ndim(v) == 0 and np.isnan(float(v)))  # optional, not given
    }
    if registry.prepare_hook(name) is not None:  # host schedules for this budget
        base.setdefault("budget", budget)
    jbandits.sim.runner.clear_cache()
    runs = 0
    with count_traces() as traces:
        loops = [(None, [[]])]  # the case's own numbers first
        for key, _ in registry.kinds(name):
            value = spec.params.get(key, numbers.NOT_GIVEN)
            loops.append((key, _variants(name, key, value, signature[key].default)))
        for key, changes in loops:
            for change in changes:
                kw = {k: v for k, v in base.items() if k != key} | dict(change)
                try:
                    policy = jbandits.make(name, **dict(spec.static), **kw)
                except ValueError:
                    continue  # a value the policy refuses (e.g. an int budget + 1)
                jbandits.simulate(
                    policy, bandit, params, jax.random.key(0),
                    budget=int(kw.get("budget", budget)),  # a policy's own (UGapEb)
                    num_reps=1, progress=False, check_model=False, metric=metric,
                )  # fmt: skip
                runs += 1
    assert runs >= 1
    assert len(traces) == 1, f"{name}: {len(traces)} programs for {runs} runs"


def test_int_and_float_spellings_are_one_number():
    """``ucb1`` alpha=2 then 2.5: one type (float), one program; an integer number
    given a float keeps its integer type, a non-integral one is refused."""
    assert jbandits.make("ucb1", num_arms=3, alpha=2).params["alpha"] == 2.0
    assert isinstance(jbandits.make("ucb1", num_arms=3, alpha=2).params["alpha"], float)
    ocucb = jbandits.make("ocucb", num_arms=3, horizon=100.0)
    assert isinstance(ocucb.params["horizon"], int)
    with pytest.raises(ValueError, match="horizon must be an integer"):
        jbandits.make("ocucb", num_arms=3, horizon=100.5)


def test_an_optional_number_is_traced_its_default_resolved_alike():
    """APT's epsilon: None (its default) is a number (NaN: not given) that resolves
    to what the factory derives (0 for the paper's variant); the runs agree."""
    assert not registry.is_static("epsilon", None, "apt")
    assert registry.is_static("threshold", None, "uniform")  # a mode, not a number
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    out = []
    for kw in ({}, {"epsilon": 0.0}, {"epsilon": None}):
        policy = jbandits.apt(4, threshold=0.5, **kw)
        res = jbandits.simulate(
            policy, bandit, params, jax.random.key(3), budget=60, num_reps=16,
            progress=False, record_arms=True,
        )  # fmt: skip
        out.append(np.asarray(res.arms))
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[0], out[2])
