"""Trace cases: index-based BAI (UCB-E, GapE, GapE-V) and UGapE (eps, m) policies."""

from __future__ import annotations

import functools

from harness import TraceCase, basic_instance
from reference.identification import gape as ref_gape
from reference.identification import ucb_e as ref_ucb_e
from reference.identification import ugape as ref_ugape

from jbandits.policies.identification import gape, gape_v, ucb_e, ugapeb, ugapec

K_MAX = 8
HORIZON = 64


def _a(rng):
    # tiny a: exploitation-driven (many exact index ties under Bernoulli rewards);
    # large a: near round robin (equal widths for equal counts)
    return float(rng.choice([1e-3, 0.1, 1.0, rng.uniform(0.01, 20.0)]))


def _b(rng):
    return float(rng.choice([1.0, 0.5, rng.uniform(0.05, 2.0)]))


def _ucb_e_sample(rng, k_max, horizon):
    return basic_instance(rng, k_max, horizon, {"a": _a(rng)})


def _gape_sample(rng, k_max, horizon):
    return basic_instance(rng, k_max, horizon, {"a": _a(rng), "b": _b(rng)})


def _gape_v_sample(rng, k_max, horizon):
    # budgets from K (init not finished) upwards; most runs go past the 2K forced pulls
    return basic_instance(rng, k_max, horizon, {"a": _a(rng), "b": _b(rng)})


def _ugapeb_sample(m, passes):
    def sample(rng, k_max, horizon):
        hp = {"a": _a(rng), "b": _b(rng), "epsilon": float(rng.choice([0.0, 0.1]))}
        inst = basic_instance(
            rng, k_max, horizon, hp, min_arms=m + 1, min_budget=lambda k: passes * k + 1
        )
        return inst._replace(hp={**hp, "budget": inst.budget})

    return sample


def _ugapec_sample(m):
    def sample(rng, k_max, horizon):
        # small b and large eps / delta so that many runs stop inside the horizon;
        # eps = 0 (stops only if B_J < 0) and runs that hit the horizon are kept too
        hp = {
            "epsilon": float(rng.choice([0.0, 0.3, 1.0, 2.0, rng.uniform(0, 3)])),
            "delta": float(rng.choice([0.05, 0.5, 0.95])),
            "c": float(rng.choice([0.5, 0.1, rng.uniform(0.01, 1.0)])),
            "c0": float(rng.choice([4.0, 1.0])),
            "b": float(rng.choice([1.0, 0.2, 0.05])),
        }
        return basic_instance(rng, k_max, horizon, hp, min_arms=m + 1)

    return sample


def _k(fn, **static):
    return lambda **hp: fn(num_arms=K_MAX, **static, **hp)


def _case(name, registry_name, make, sample, reference):
    return TraceCase(
        name, registry_name, make, sample, reference, k_max=K_MAX, horizon=HORIZON
    )


CASES = [
    _case("ucb_e", "ucb_e", _k(ucb_e), _ucb_e_sample, ref_ucb_e.ucb_e),
    _case("gape", "gape", _k(gape), _gape_sample, ref_gape.gape),
    _case("gape_v", "gape_v", _k(gape_v), _gape_v_sample, ref_gape.gape_v),
]
for _conf, _passes in (("hoeffding", 1), ("bernstein", 2)):
    for _m in (1, 2, 3):
        CASES.append(
            _case(
                f"ugapeb-{_conf}-m{_m}",
                "ugapeb",
                _k(ugapeb, m=_m, confidence=_conf),
                _ugapeb_sample(_m, _passes),
                functools.partial(ref_ugape.ugapeb, m=_m, confidence=_conf),
            )
        )
        CASES.append(
            _case(
                f"ugapec-{_conf}-m{_m}",
                "ugapec",
                _k(ugapec, m=_m, confidence=_conf),
                _ugapec_sample(_m),
                functools.partial(ref_ugape.ugapec, m=_m, confidence=_conf),
            )
        )
