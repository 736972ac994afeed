"""Trace equivalence: JAX policy == plain-Python reference on the same replay table."""

import pytest
from cases import CASES
from harness import check_case, slow_where

import jbandits

# the "first" tie-break of the Beta and KL-UCB policies (the random one, their default,
# stays in the default suite) takes 8-30 s on a 2-core machine: CI's slow step runs it
SLOW = {"thompson-beta-first", "bayes_ucb-beta-first", "klucb-bernoulli-first"}


@pytest.mark.parametrize(
    "case",
    slow_where(CASES, SLOW, key=lambda c: c.name),
    ids=[c.name for c in CASES],
)
def test_trace_equivalence(case):
    assert check_case(case, seed=0) >= 200


def test_every_registered_policy_has_a_trace_case():
    covered = {c.registry_name for c in CASES}
    missing = sorted(set(jbandits.names()) - covered)
    assert not missing, f"registered policies without a trace case: {missing}"
