"""Trace cases: thresholding policies."""

from __future__ import annotations

from harness import TraceCase, basic_instance
from reference.thresholding import simple

import jbandits


def _tau(rng):
    # thresholds on the Bernoulli / coarse grids create exact ties |mean - tau| = 0
    return float(rng.choice([0.5, 0.25, rng.uniform(0.1, 0.9)]))


def _apt_sample(rng, k_max, horizon):
    hp = {"threshold": _tau(rng), "epsilon": float(rng.choice([0.0, 0.025, 0.05, 0.1]))}
    return basic_instance(rng, k_max, horizon, hp)


def _lsa_sample(rng, k_max, horizon):
    hp = {
        "threshold": _tau(rng),
        "alpha": float(rng.choice([1.35, rng.uniform(0.05, 8)])),
    }
    return basic_instance(rng, k_max, horizon, hp)


def _tau_sample(rng, k_max, horizon):
    return basic_instance(rng, k_max, horizon, {"threshold": _tau(rng)})


def _k(fn):
    return lambda **hp: fn(num_arms=8, **hp)


CASES = [
    TraceCase("uniform", "uniform", _k(jbandits.uniform), _tau_sample, simple.uniform),
    TraceCase("ua", "ua", _k(jbandits.ua), _tau_sample, simple.ua),
    TraceCase("apt", "apt", _k(jbandits.apt), _apt_sample, simple.apt),
    TraceCase("lsa", "lsa", _k(jbandits.lsa), _lsa_sample, simple.lsa),
]
