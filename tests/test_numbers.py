"""One home for the numbers (jbandits.core.numbers): the static/number rule, and a
Python loop of simulate calls over one number compiles one program, its default
value included."""

from __future__ import annotations

import jax
import numpy as np
import pytest
from compile_log import count_compiles

import jbandits
from jbandits.core import numbers, registry
from jbandits.core.execution import Execution


def test_the_rule_static_or_number():
    assert numbers.is_static("num_arms", 4)
    assert numbers.is_static("tie_break", "first")
    assert numbers.is_static("flag", True)
    assert numbers.is_static("c", None)
    assert numbers.is_static("execution", Execution.default())
    assert numbers.is_static("window", 10, declared=("window",))
    assert not numbers.is_static("window", 10)
    assert not numbers.is_static("alpha", 1.35)
    assert not numbers.is_static("budget", 100)
    # the registry applies the same rule with the integers a policy declared
    assert registry.is_static("m", 2, "ugapec") and not registry.is_static("m", 2)


@pytest.mark.parametrize("first", [1.0, 1.35])
def test_a_loop_over_a_number_compiles_once_its_default_included(first):
    """LSA's alpha defaults to 1.35: a loop over alpha that reaches the default (or
    starts at it) still compiles one program (defaults are traced, not folded)."""
    bandit, params = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
    values = [first, 2.0, 1.35, 0.5, None]  # None: the default, left unspecified
    jbandits.sim.runner.clear_cache()
    with count_compiles() as compiles:
        errors = []
        for alpha in values:
            kw = {} if alpha is None else {"alpha": alpha}
            policy = jbandits.lsa(4, threshold=0.5, **kw)
            res = jbandits.simulate(
                policy, bandit, params, jax.random.key(1), budget=40, num_reps=8,
                progress=False,
            )  # fmt: skip
            errors.append(np.asarray(res.metrics["error"]))
    assert compiles.count == 1
    # the default left unspecified runs what alpha=1.35 runs
    np.testing.assert_array_equal(errors[2], errors[4])
