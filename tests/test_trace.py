"""Trace equivalence: JAX policy == plain-Python reference on the same replay table."""

import pytest
from cases import CASES
from harness import check_case

import jbandits


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_trace_equivalence(case):
    assert check_case(case, seed=0) >= 200


def test_every_registered_policy_has_a_trace_case():
    covered = {c.registry_name for c in CASES}
    missing = sorted(set(jbandits.names()) - covered)
    assert not missing, f"registered policies without a trace case: {missing}"
