"""The trace-equivalence cases, split into three test files by policy family.

``pytest-xdist`` runs a file on one worker (``--dist loadfile``): one file of every
case (about 4 minutes on 2 cores) kept a worker busy alone at the end of the run.
"""

from __future__ import annotations

import importlib

import pytest
from harness import check_case, slow_where

FILES = {
    "regret": ("regret_bayes", "regret_index"),
    "identification": ("identification_index", "identification_phases"),
    "thresholding": ("thresholding", "thresholding_more"),
    "fixed_confidence": (
        "fixed_confidence_tracking",
        "fixed_confidence_lucb",
        "fixed_confidence_top_two",
        "fixed_confidence_baselines",
    ),
}

# the "first" tie-break of the Beta and KL-UCB policies (the random one, their default,
# stays in the default suite) takes 8-30 s on a 2-core machine: CI's slow step runs it
SLOW = {"thompson-beta-first", "bayes_ucb-beta-first", "klucb-bernoulli-first"}
# fixed-confidence cases over ~10 s each on a loaded 2-core machine (the Bernoulli w*
# solver's and the posterior quadrature's compilations): CI's slow step runs them
SLOW |= {
    "ttts-bernoulli-glr-gk16-cap16",
    "ttts-bernoulli-posterior-practical-cap2",
    "t3c-bernoulli-posterior-practical",
    "ttts-bernoulli-glr-practical-cap2",
    "uniform_glr-round_robin-posterior-gaussian-practical",
    "ttts-gaussian-posterior-practical-cap16",
    "ttucb-bernoulli-random-gk16",
    "track_and_stop-c-bernoulli-gk16",
    "uniform_glr-random-posterior-bernoulli-practical",
    "ttts-gaussian-glr-kk21-cap1",
    "ttts-gaussian-glr-practical-cap0",
    "track_and_stop-c-code-bernoulli-practical",
    "ttucb-bernoulli-tracking-practical",
    "t3c-bernoulli-glr-bounded",
    "eb_tc-bernoulli-fixed-practical",
    "eb_tc-gaussian-ids-kk21",
    "fws-bernoulli-gk16",
    "dkm-gaussian-kk21",
}


def cases_of(family: str) -> list:
    out = []
    for module in FILES[family]:
        out += importlib.import_module(f"cases.{module}").CASES
    return out


def trace_test(family: str):
    """The parametrized trace-equivalence test of one family's cases."""
    cases = cases_of(family)

    @pytest.mark.parametrize(
        "case",
        slow_where(cases, SLOW, key=lambda c: c.name),
        ids=[c.name for c in cases],
    )
    def test_trace_equivalence(case):
        assert check_case(case, seed=0) >= 200

    return test_trace_equivalence
