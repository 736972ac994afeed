"""Trace cases: fixed-confidence BAI (lucb): LUCB1, KL-LUCB, lil'UCB.

Parameters are drawn so that most runs stop inside the horizon (large epsilon or
delta, small k1, small Gaussian sigma) and some reach it (epsilon = 0, delta = 0.05,
KK13's k1 = 405.5); tables are Bernoulli or three-valued ({0, 1/2, 1}: many exact
ties) for the Bernoulli family, Gaussian for the Gaussian one.
"""

from __future__ import annotations

import functools

import numpy as np
from harness import TraceCase, basic_instance
from reference.fixed_confidence import lil_ucb as ref_lil
from reference.fixed_confidence import lucb as ref_lucb

from jbandits.policies.fixed_confidence.kl_lucb import kl_lucb
from jbandits.policies.fixed_confidence.lil_ucb import lil_ucb
from jbandits.policies.fixed_confidence.lucb1 import lucb1

K_MAX = 8
HORIZON = 200


def _kind(rng, family):
    if family == "gaussian":
        return "gauss"
    return str(rng.choice(["bernoulli", "coarse"]))


def _budget(num_arms):  # mostly long runs: a stop, not the budget, ends most traces
    return max(num_arms, HORIZON // 2)


def _instance(rng, k_max, horizon, hp, family):
    """``basic_instance`` with long budgets; half of the Bernoulli-family instances
    have one well-separated best arm (mean >= 0.8, the others <= 0.5), so that the
    GLR and KL rules stop inside the horizon too."""
    inst = basic_instance(
        rng, k_max, horizon, hp, kind=_kind(rng, family), min_budget=_budget
    )
    if family != "bernoulli" or rng.random() < 0.5:
        return inst
    means = rng.uniform(0.05, 0.5, k_max)
    means[rng.choice(np.flatnonzero(inst.arm_mask))] = rng.uniform(0.8, 0.95)
    table = (rng.random((k_max, horizon)) < means[:, None]).astype(np.float64)
    table[~inst.arm_mask] = 0.0
    return inst._replace(table=table)


def _lucb_sample(family):
    def sample(rng, k_max, horizon):
        hp = {
            "delta": float(rng.choice([0.05, 0.5, 0.95, 0.95])),
            "epsilon": float(rng.choice([0.0, 0.2, 0.5, 1.0, rng.uniform(0, 1.5)])),
            "alpha": float(rng.choice([1.1, rng.uniform(0.3, 2.0)])),
            "k1": float(rng.choice([405.5, 1.0, 1.0, rng.uniform(1.0, 20.0)])),
            "sigma": float(rng.choice([1.0, 0.3, 0.1])),
        }
        return _instance(rng, k_max, horizon, hp, family)

    return sample


def _case(name, registry_name, make, sample, reference):
    return TraceCase(
        name, registry_name, make, sample, reference, k_max=K_MAX, horizon=HORIZON
    )


_LUCB = [  # (policy, bound kind, family, rate, stopping, threshold)
    ("lucb1", "hoeffding", "bernoulli", "kk13", "lucb", "practical"),
    ("lucb1", "hoeffding", "gaussian", "practical", "lucb", "practical"),
    ("lucb1", "hoeffding", "bernoulli", "practical", "glr", "practical"),
    ("kl_lucb", "kl", "bernoulli", "kk13", "lucb", "practical"),
    ("kl_lucb", "kl", "bernoulli", "practical", "lucb", "practical"),
    ("kl_lucb", "kl", "gaussian", "kk13", "lucb", "practical"),
    ("kl_lucb", "kl", "bernoulli", "practical", "glr", "practical"),
    ("kl_lucb", "kl", "bernoulli", "kk13", "glr", "gk16"),
    ("kl_lucb", "kl", "gaussian", "practical", "glr", "practical"),
]
_FACTORIES = {"lucb1": lucb1, "kl_lucb": kl_lucb}

CASES = []
for _name, _kind_name, _family, _rate, _stop, _thr in _LUCB:
    _static = dict(family=_family, rate=_rate, stopping=_stop, threshold=_thr)
    CASES.append(
        _case(
            f"{_name}-{_family}-{_rate}-{_stop}"
            + (f"-{_thr}" if _stop == "glr" else ""),
            _name,
            functools.partial(_FACTORIES[_name], K_MAX, **_static),
            _lucb_sample(_family),
            functools.partial(
                ref_lucb.lucb,
                kind=_kind_name,
                family=_family,
                rate_name=_rate,
                stopping=_stop,
                threshold=_thr,
            ),
        )
    )


# ------------------------------------------------------------------------- lil'UCB
def _lil_sample(family, keys):
    """hp with only ``keys`` (the others derived by the setting). Small sigma and lam
    make Figure 1's rule stop inside the horizon; large ones let runs reach it."""

    def sample(rng, k_max, horizon):
        draw = {
            "delta": lambda: float(rng.choice([0.05, 0.1, 0.5, 0.9])),
            "sigma": lambda: float(
                rng.choice([0.5, 0.05, 0.01, rng.uniform(0.005, 0.3)])
            ),
            "epsilon": lambda: float(rng.choice([0.01, 0.1, rng.uniform(0.001, 0.9)])),
            "beta": lambda: float(rng.choice([1.0, 0.5, rng.uniform(0.05, 2.0)])),
            "lam": lambda: float(rng.choice([9.0, 1.0, 0.3, rng.uniform(0.1, 3.0)])),
            "index_delta": lambda: float(
                rng.choice([1e-4, 0.005, rng.uniform(1e-6, 1e-3)])
            ),
            "ls_epsilon": lambda: float(
                rng.choice([0.01, 0.5, rng.uniform(0.001, 0.9)])
            ),
        }
        hp = {key: draw[key]() for key in keys}
        return _instance(rng, k_max, horizon, hp, family)

    return sample


_ALL = ("sigma", "epsilon", "beta", "lam", "index_delta")
_LIL = [  # (family, setting, stopping, hp keys)
    ("gaussian", "theory", "pulls", ("delta", "sigma")),
    ("gaussian", "theory", "pulls", _ALL),
    ("bernoulli", "theory", "pulls", ("delta", "lam")),
    ("gaussian", "theory", "ls", ("delta", "sigma", "epsilon", "lam", "ls_epsilon")),
    ("bernoulli", "theory", "ls", ("delta", "lam")),
    ("gaussian", "heuristic", "pulls", ("delta", "sigma")),
    ("gaussian", "heuristic", "pulls", _ALL),
    ("bernoulli", "heuristic", "pulls", ("delta",)),
    ("gaussian", "heuristic", "ls", ("delta", "sigma")),
    ("gaussian", "heuristic", "ls", ("delta", *_ALL, "ls_epsilon")),
]
for _family, _setting, _stop, _keys in _LIL:
    _tag = "derived" if len(_keys) <= 2 else "set"
    CASES.append(
        _case(
            f"lil_ucb-{_family}-{_setting}-{_stop}-{_tag}",
            "lil_ucb",
            functools.partial(
                lil_ucb, K_MAX, family=_family, setting=_setting, stopping=_stop
            ),
            _lil_sample(_family, _keys),
            functools.partial(
                ref_lil.lil_ucb, family=_family, setting=_setting, stopping=_stop
            ),
        )
    )
