"""Trace cases: the fixed-confidence baselines of 2019-2023 (EB-TC / EB-TCε, ...)
against their plain-Python references (tests/reference/fixed_confidence/).

Instances: Bernoulli or Gaussian replay tables, real K from 2 to ``K_MAX`` = 7 (not a
power of two) with the padding at random positions; means from exact ties (in the
truth, and coarse Gaussian rewards with ties in the statistics) to well separated, so
that most runs stop before the horizon at the drawn delta and some hit it (budgets
below the horizon too). Gaussian cases draw the slacks ``epsilon`` (stopping) and
``epsilon0`` (challenger), 0 in a third of the instances.
"""

from __future__ import annotations

import functools

import numpy as np
from harness import Instance, TraceCase, random_mask
from reference.fixed_confidence import dkm as ref_dkm
from reference.fixed_confidence import eb_tc as ref_eb_tc
from reference.fixed_confidence import fws as ref_fws

from jbandits.policies.fixed_confidence.dkm import dkm
from jbandits.policies.fixed_confidence.eb_tc import eb_tc
from jbandits.policies.fixed_confidence.fws import fws

K_MAX = 7
HORIZON = 120


def _instance(rng, k_max, horizon, family, slack, beta=True):
    num_arms = int(rng.integers(2, k_max + 1))
    mask = random_mask(rng, k_max, num_arms)
    means = rng.uniform(0.05, 0.95, size=k_max)
    u = rng.random()
    if u < 0.2:  # exact ties in the truth
        means[:] = rng.choice(means[:2], size=k_max)
    elif u < 0.6:  # well separated, a unique best
        means = rng.choice([0.05, 0.3, 0.6], size=k_max)
        means[rng.choice(np.flatnonzero(mask))] = 0.95
    sigma = 1.0
    if family == "bernoulli":
        table = (rng.random((k_max, horizon)) < means[:, None]).astype(np.float64)
    elif rng.random() < 0.25:  # coarse rewards: ties in the statistics
        table = rng.integers(0, 3, size=(k_max, horizon)) / 2.0
        sigma = 0.5
    else:
        sigma = float(rng.choice([0.1, 0.2, rng.uniform(0.05, 0.6)]))
        table = means[:, None] + sigma * rng.standard_normal((k_max, horizon))
    table[~mask] = 0.0
    budget = horizon if rng.random() < 0.7 else int(rng.integers(num_arms, horizon + 1))
    delta = float(rng.choice([0.05, 0.2, 0.5, 0.9, rng.uniform(0.01, 0.95)]))
    hp = {"delta": delta, "sigma": sigma}
    if beta:
        hp["beta"] = float(rng.uniform(0.2, 0.8))
    if slack:
        zero = rng.random() < 1 / 3
        hp["epsilon"] = 0.0 if zero else float(rng.uniform(0.0, 0.3))
        hp["epsilon0"] = 0.0 if zero else float(rng.choice([hp["epsilon"], 0.1]))
    return Instance(num_arms, mask, table, budget, hp, {})


def _sampler(family):
    def sample(rng, k_max, horizon):
        return _instance(rng, k_max, horizon, family, family == "gaussian")

    return sample


def _k(fn, **static):
    return lambda **hp: fn(num_arms=K_MAX, **static, **hp)


CASES = []
for _family, _threshold, _target in (
    ("bernoulli", "practical", "fixed"),
    ("bernoulli", "gk16", "ids"),
    ("gaussian", "practical", "fixed"),
    ("gaussian", "kk21", "ids"),
    ("gaussian", "practical", "ids"),
):
    _static = {"family": _family, "threshold": _threshold, "target": _target}
    CASES.append(
        TraceCase(
            f"eb_tc-{_family}-{_target}-{_threshold}",
            "eb_tc",
            _k(eb_tc, **_static),
            _sampler(_family),
            functools.partial(ref_eb_tc.eb_tc, **_static),
            k_max=K_MAX,
            horizon=HORIZON,
        )
    )

for _name, _fn, _ref, _family, _threshold in (
    ("fws", fws, ref_fws.fws, "bernoulli", "practical"),
    ("fws", fws, ref_fws.fws, "gaussian", "practical"),
    ("fws", fws, ref_fws.fws, "bernoulli", "gk16"),
    ("dkm", dkm, ref_dkm.dkm, "bernoulli", "practical"),
    ("dkm", dkm, ref_dkm.dkm, "gaussian", "practical"),
    ("dkm", dkm, ref_dkm.dkm, "gaussian", "kk21"),
):
    _static = {"family": _family, "threshold": _threshold}
    CASES.append(
        TraceCase(
            f"{_name}-{_family}-{_threshold}",
            _name,
            _k(_fn, **_static),
            lambda rng, k_max, horizon, _f=_family: _instance(
                rng, k_max, horizon, _f, False, beta=False
            ),
            functools.partial(_ref, **_static),
            k_max=K_MAX,
            horizon=HORIZON,
        )
    )
