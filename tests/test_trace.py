"""Trace equivalence: every registered policy has cases, and every case module is run
by one of the three family files (tests/test_trace_*.py, tests/trace_files.py)."""

import pkgutil

import cases
from trace_files import FILES

import jbandits


def test_every_registered_policy_has_a_trace_case():
    covered = {c.registry_name for c in cases.CASES}
    missing = sorted(set(jbandits.names()) - covered)
    assert not missing, f"registered policies without a trace case: {missing}"


def test_every_case_module_is_in_a_trace_file():
    modules = {info.name for info in pkgutil.iter_modules(cases.__path__)}
    assigned = [m for family in FILES.values() for m in family]
    assert sorted(assigned) == sorted(modules)
