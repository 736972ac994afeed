"""Trace cases: fixed-confidence BAI, the top-two family (TTTS, T3C, TTUCB) with GLR or
posterior stopping.

Instances: Bernoulli or Gaussian replay tables (real K from 2 to ``K_MAX``, padded arms
at random positions), means from exact ties to well separated with a unique best, so
that most runs stop before the horizon at the drawn delta and some hit it (budgets
below the horizon too). ``beta`` is drawn in (0.2, 0.8). TTTS runs with small resample
caps (0, 1, 2) as well as the default, so that its fallback is exercised.
"""

from __future__ import annotations

import functools

import numpy as np
from harness import Instance, TraceCase, random_mask
from reference.fixed_confidence import top_two as ref

from jbandits.policies.fixed_confidence.t3c import t3c
from jbandits.policies.fixed_confidence.ttts import ttts
from jbandits.policies.fixed_confidence.ttucb import ttucb

K_MAX = 6
HORIZON = 120


def _instance(rng, k_max, horizon, family, posterior):
    num_arms = int(rng.integers(2, k_max + 1))
    mask = random_mask(rng, k_max, num_arms)
    means = rng.uniform(0.05, 0.95, size=k_max)
    u = rng.random()
    if u < 0.15:  # exact ties in the truth
        means[:] = rng.choice(means[:2], size=k_max)
    elif u < 0.6:  # well separated, a unique best
        means = rng.choice([0.05, 0.3, 0.6], size=k_max)
        means[rng.choice(np.flatnonzero(mask))] = 0.95
    if family == "bernoulli":
        table = (rng.random((k_max, horizon)) < means[:, None]).astype(np.float64)
        sigma = 1.0
    else:
        sigma = float(rng.choice([0.1, 0.2, rng.uniform(0.05, 0.6)]))
        table = means[:, None] + sigma * rng.standard_normal((k_max, horizon))
    table[~mask] = 0.0
    budget = horizon if rng.random() < 0.7 else int(rng.integers(num_arms, horizon + 1))
    delta = float(rng.choice([0.05, 0.2, 0.5, 0.9, rng.uniform(0.01, 0.95)]))
    hp = {"delta": delta, "sigma": sigma, "beta": float(rng.uniform(0.2, 0.8))}
    if posterior:
        # not a round level: small-count Beta posteriors give exact rational alphas
        # (Beta(1, 3) vs Beta(2, 1): 9/10) that the two quadratures round either way
        hp["confidence"] = float(rng.uniform(0.5, 0.99))
    return Instance(num_arms, mask, table, budget, hp, {})


def _sampler(family, posterior=False):
    def sample(rng, k_max, horizon):
        return _instance(rng, k_max, horizon, family, posterior)

    return sample


def _k(fn, **static):
    return lambda **hp: fn(num_arms=K_MAX, **static, **hp)


def _case(name, registry_name, make, sample, reference):
    return TraceCase(
        name, registry_name, make, sample, reference, k_max=K_MAX, horizon=HORIZON
    )


CASES = []

for _family, _threshold, _stopping, _cap in (
    ("bernoulli", "practical", "glr", 2),
    ("gaussian", "kk21", "glr", 1),
    ("bernoulli", "gk16", "glr", 16),
    ("gaussian", "practical", "glr", 0),
    ("bernoulli", "practical", "posterior", 2),
    ("gaussian", "practical", "posterior", 16),
):
    _static = {"family": _family, "threshold": _threshold, "stopping": _stopping}
    CASES.append(
        _case(
            f"ttts-{_family}-{_stopping}-{_threshold}-cap{_cap}",
            "ttts",
            _k(ttts, max_resamples=_cap, **_static),
            _sampler(_family, posterior=_stopping == "posterior"),
            functools.partial(ref.ttts, max_resamples=_cap, **_static),
        )
    )

for _family, _threshold, _stopping in (
    ("bernoulli", "practical", "glr"),
    ("gaussian", "practical", "glr"),
    ("bernoulli", "bounded", "glr"),
    ("gaussian", "t3c", "glr"),
    ("bernoulli", "practical", "posterior"),
):
    _static = {"family": _family, "threshold": _threshold, "stopping": _stopping}
    CASES.append(
        _case(
            f"t3c-{_family}-{_stopping}-{_threshold}",
            "t3c",
            _k(t3c, **_static),
            _sampler(_family, posterior=_stopping == "posterior"),
            functools.partial(ref.t3c, **_static),
        )
    )

for _family, _threshold, _target in (
    ("gaussian", "practical", "tracking"),
    ("gaussian", "kk21", "random"),
    ("bernoulli", "practical", "tracking"),
    ("bernoulli", "gk16", "random"),
):
    _static = {"family": _family, "threshold": _threshold, "target": _target}
    CASES.append(
        _case(
            f"ttucb-{_family}-{_target}-{_threshold}",
            "ttucb",
            _k(ttucb, **_static),
            _sampler(_family),
            functools.partial(ref.ttucb, **_static),
        )
    )
