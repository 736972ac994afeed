"""Trace cases: fixed-confidence BAI (tracking): Track-and-Stop (D-/C-Tracking), Best
Challenger, uniform sampling with GLR stopping, KL-Racing and Chernoff-Racing.

Instances: Bernoulli or Gaussian replay tables (real K from 2 to ``K_MAX``, padded
arms at random positions), means spread over the range so that most runs stop before
the horizon at the drawn delta, some hit it (near-equal means, small delta, budgets
below the horizon).
"""

from __future__ import annotations

import functools

import numpy as np
from harness import Instance, TraceCase, random_mask
from reference.fixed_confidence import best_challenger as ref_bc
from reference.fixed_confidence import racing as ref_racing
from reference.fixed_confidence import track_and_stop as ref_tas
from reference.fixed_confidence import uniform_glr as ref_uniform

from jbandits.policies.fixed_confidence.best_challenger import best_challenger
from jbandits.policies.fixed_confidence.chernoff_racing import chernoff_racing
from jbandits.policies.fixed_confidence.kl_racing import kl_racing
from jbandits.policies.fixed_confidence.track_and_stop import track_and_stop
from jbandits.policies.fixed_confidence.uniform_glr import uniform_glr

K_MAX = 6
HORIZON = 160
RACING_HORIZON = 240  # racing needs a few rounds per eliminated arm


def _instance(rng, k_max, horizon, family, hp, loose=False):
    """A replay table of ``family`` rewards and the drawn ``hp`` (+ delta, sigma);
    ``loose``: large deltas (for the conservative thresholds)."""
    num_arms = int(rng.integers(2, k_max + 1))
    mask = random_mask(rng, k_max, num_arms)
    means = rng.uniform(0.05, 0.95, size=k_max)
    u = rng.random()
    if u < 0.15:  # exact ties in the truth
        means[:] = rng.choice(means[:2], size=k_max)
    elif u < 0.6 or loose:  # well separated, a unique best
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
    if loose:
        delta = float(rng.choice([0.5, 0.9, 0.99]))
    hp = {"delta": delta, "sigma": sigma, **hp}
    return Instance(num_arms, mask, table, budget, hp, {})


def _sampler(family, loose=False, posterior=False, lazy=False):
    """``posterior``: draw the posterior rule's confidence too, uniformly in [0.5,
    0.99]: with a round level such as 0.9 the small-count Beta posteriors give exact
    rational ``alpha`` values on it (Beta(1, 3) vs Beta(2, 1): 9/10), which the two
    implementations round to either side."""

    def sample(rng, k_max, horizon):
        hp = {"confidence": float(rng.uniform(0.5, 0.99))} if posterior else {}
        if lazy:  # the default ratio 2, or a drawn one (float32 products)
            hp["laziness"] = float(rng.choice([2.0, rng.uniform(1.01, 3.0)]))
        return _instance(rng, k_max, horizon, family, hp, loose)

    return sample


def _k(fn, **static):
    return lambda **hp: fn(num_arms=K_MAX, **static, **hp)


def _case(name, registry_name, make, sample, reference, horizon=HORIZON):
    return TraceCase(
        name, registry_name, make, sample, reference, k_max=K_MAX, horizon=horizon
    )


CASES = []

# ------------------------------------------------------------------------ racing
for _rule, _fn, _reg in (
    ("chernoff", chernoff_racing, "chernoff_racing"),
    ("kl", kl_racing, "kl_racing"),
):
    for _family, _threshold, _clock in (
        ("bernoulli", "practical", "round"),
        ("gaussian", "practical", "pulls"),
        ("bernoulli", "gk16", "pulls"),
        ("gaussian", "kk21", "round"),
    ):
        _static = {"family": _family, "threshold": _threshold, "clock": _clock}
        CASES.append(
            _case(
                f"{_reg}-{_family}-{_threshold}-{_clock}",
                _reg,
                _k(_fn, **_static),
                _sampler(_family, loose=_threshold != "practical"),
                functools.partial(ref_racing.racing, rule=_rule, **_static),
                horizon=RACING_HORIZON,
            )
        )

# ---------------------------------------------------------------- Track-and-Stop
for _family, _threshold, _tracking, _projection in (
    ("bernoulli", "practical", "d", True),
    ("gaussian", "practical", "d", True),
    ("bernoulli", "gk16", "c", True),
    ("gaussian", "practical", "c", True),
    ("bernoulli", "practical", "c", False),
    ("gaussian", "kk21", "c", False),
):
    _static = {"family": _family, "threshold": _threshold, "tracking": _tracking}
    if _tracking == "c":
        _static["projection"] = _projection
    _variant = "" if _projection else "-code"
    CASES.append(
        _case(
            f"track_and_stop-{_tracking}{_variant}-{_family}-{_threshold}",
            "track_and_stop",
            _k(track_and_stop, **_static),
            _sampler(_family, loose=_threshold != "practical"),
            functools.partial(ref_tas.track_and_stop, **_static),
        )
    )

# lazy updates (Jedra & Proutiere 2020): laziness drawn in (1, 3) or the default 2
for _family, _threshold, _tracking in (
    ("bernoulli", "practical", "d"),
    ("gaussian", "practical", "c"),
):
    _static = {"family": _family, "threshold": _threshold, "tracking": _tracking}
    CASES.append(
        _case(
            f"track_and_stop-{_tracking}-lazy-{_family}-{_threshold}",
            "track_and_stop",
            _k(track_and_stop, lazy=True, **_static),
            _sampler(_family, lazy=True),
            functools.partial(ref_tas.track_and_stop, lazy=True, **_static),
        )
    )

# --------------------------------------------------------------- Best Challenger
for _family, _threshold, _rule in (
    ("bernoulli", "practical", "weights"),
    ("gaussian", "practical", "weights"),
    ("bernoulli", "gk16", "divergences"),
    ("gaussian", "kk21", "divergences"),
):
    _static = {"family": _family, "threshold": _threshold, "rule": _rule}
    CASES.append(
        _case(
            f"best_challenger-{_rule}-{_family}-{_threshold}",
            "best_challenger",
            _k(best_challenger, **_static),
            _sampler(_family, loose=_threshold != "practical"),
            functools.partial(ref_bc.best_challenger, **_static),
        )
    )

# ----------------------------------------------------------------------- uniform
for _family, _threshold, _sampling, _stopping in (
    ("bernoulli", "practical", "round_robin", "glr"),
    ("gaussian", "kk21", "random", "glr"),
    ("bernoulli", "practical", "random", "posterior"),
    ("gaussian", "practical", "round_robin", "posterior"),
):
    _static = {
        "family": _family,
        "threshold": _threshold,
        "sampling": _sampling,
        "stopping": _stopping,
    }
    CASES.append(
        _case(
            f"uniform_glr-{_sampling}-{_stopping}-{_family}-{_threshold}",
            "uniform_glr",
            _k(uniform_glr, **_static),
            _sampler(
                _family,
                loose=_threshold != "practical",
                posterior=_stopping == "posterior",
            ),
            functools.partial(ref_uniform.uniform_glr, **_static),
        )
    )
