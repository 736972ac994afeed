"""Trace cases: SR, SAR, Sequential Halving (both variants), SHVar, SHAdaVar, VBR_prov.

Schedules are computed on the host for each instance's real K and budget, padded to a
common size and passed as traced hyper-parameters (as in a budget sweep). Budgets are
drawn near their minimum a third of the time: SR/SAR/VBR then have several phases
ending on one step (n_k = n_{k-1}), and the halving family has stages of exactly
|A_s| pulls. K = 2 gives a single stage / phase.
"""

from __future__ import annotations

import numpy as np
from harness import TraceCase, basic_instance
from reference.identification import sar as sar_ref
from reference.identification import sequential_halving as sh_ref
from reference.identification import shadavar as shadavar_ref
from reference.identification import shvar as shvar_ref
from reference.identification import successive_rejects as sr_ref
from reference.identification import vbr as vbr_ref

from jbandits.core.registry import raw_factory
from jbandits.policies.blocks import schedules
from jbandits.policies.identification import (
    halving_schedule,
    sequential_halving,
    shadavar,
    shvar,
    sr_schedule,
    successive_rejects,
    vbr_provisional,
)

K_MAX = 8
HORIZON = 64
STAGES = schedules.num_halving_stages(K_MAX)


def _budget(rng, low, horizon):
    if rng.random() < 0.35:  # near the minimum: zero-length phases / tight stages
        return int(rng.integers(low, min(low + 4, horizon) + 1))
    return int(rng.integers(low, horizon + 1))


def _instance(rng, k_max, horizon, hp_fn, min_budget):
    inst = basic_instance(rng, k_max, horizon, {})
    budget = _budget(rng, min_budget(inst.num_arms), horizon)
    return inst._replace(budget=budget, hp=hp_fn(rng, inst.num_arms, budget, inst))


def _sr_hp(rng, k, budget, inst):
    return dict(sr_schedule(k, budget, size=K_MAX - 1)._asdict())


def _halving_hp(variant):
    def hp(rng, k, budget, inst):
        return dict(halving_schedule(k, budget, size=STAGES, variant=variant)._asdict())

    return hp


def _sr_min(k):
    return k + 1


def _sh_min(k):
    return k * schedules.num_halving_stages(k)


def _sr_sample(rng, k_max, horizon):
    return _instance(rng, k_max, horizon, _sr_hp, _sr_min)


def _sar_sample(rng, k_max, horizon):
    def hp(rng, k, budget, inst):
        return {**_sr_hp(rng, k, budget, inst), "m": int(rng.integers(1, k))}

    return _instance(rng, k_max, horizon, hp, _sr_min)


def _vbr_sample(rng, k_max, horizon):
    def hp(rng, k, budget, inst):
        gamma = float(rng.choice([1.96, 0.0, rng.uniform(0.1, 3.0)]))
        return {**_sr_hp(rng, k, budget, inst), "gamma": gamma}

    return _instance(rng, k_max, horizon, hp, _sr_min)


def _sh_sample(variant):
    def sample(rng, k_max, horizon):
        return _instance(rng, k_max, horizon, _halving_hp(variant), _sh_min)

    return sample


def _shvar_sample(rng, k_max, horizon):
    def hp(rng, k, budget, inst):
        kind = rng.integers(4)
        if kind == 0:  # equal variances: SH's round robin
            var = np.full(k_max, rng.choice([0.25, 1.0]))
        elif kind == 1:  # all zero: ties everywhere
            var = np.zeros(k_max)
        elif kind == 2:  # coarse values: exact ties of sigma^2 / N across counts
            var = rng.choice([0.0, 0.5, 1.0, 2.0], size=k_max)
        else:
            var = rng.uniform(0.01, 2.0, size=k_max)
        base = _halving_hp("equal_stages")(rng, k, budget, inst)
        return {**base, "variances": var.astype(np.float64)}

    return _instance(rng, k_max, horizon, hp, _sh_min)


def _shadavar_sample(rng, k_max, horizon):
    def hp(rng, k, budget, inst):
        # large deltas give n0 = 2..4 so that adaptive steps occur within the horizon
        delta = float(rng.choice([0.05, 0.5, 0.7, 0.9, rng.uniform(0.3, 0.95)]))
        return {**_halving_hp("equal_stages")(rng, k, budget, inst), "delta": delta}

    return _instance(rng, k_max, horizon, hp, _sh_min)


def _phase(fn, **kw):
    def make(per_arm, ends, num_phases, k_real, **hp):
        sched = schedules.PhaseSchedule(per_arm, ends, num_phases, k_real)
        return fn(K_MAX, schedule=sched, **kw, **hp)

    return make


def _stage(fn, **kw):
    def make(ends, sizes, keep, per_arm, num_stages, k_real, **hp):
        sched = schedules.StageSchedule(ends, sizes, keep, per_arm, num_stages, k_real)
        return fn(K_MAX, schedule=sched, **kw, **hp)

    return make


def _case(name, registry_name, make, sample, reference):
    return TraceCase(
        name, registry_name, make, sample, reference, k_max=K_MAX, horizon=HORIZON
    )


CASES = [
    _case(
        "successive_rejects",
        "successive_rejects",
        _phase(successive_rejects),
        _sr_sample,
        sr_ref.successive_rejects,
    ),
    # the registered factory itself: m is static for the runner, traced here
    _case("sar", "sar", _phase(raw_factory("sar")), _sar_sample, sar_ref.sar),
    _case(
        "sequential_halving_equal_stages",
        "sequential_halving",
        _stage(sequential_halving),
        _sh_sample("equal_stages"),
        sh_ref.sh_equal_stages,
    ),
    _case(
        "sequential_halving_karnin",
        "sequential_halving",
        _stage(sequential_halving),
        _sh_sample("karnin"),
        sh_ref.sh_karnin,
    ),
    _case("shvar", "shvar", _stage(shvar), _shvar_sample, shvar_ref.shvar),
    _case(
        "shadavar",
        "shadavar",
        _stage(shadavar),
        _shadavar_sample,
        shadavar_ref.shadavar,
    ),
    _case(
        "vbr_provisional",
        "vbr_provisional",
        _phase(vbr_provisional),
        _vbr_sample,
        vbr_ref.vbr_provisional,
    ),
]
