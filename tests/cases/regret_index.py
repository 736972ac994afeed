"""Trace cases: cumulative-regret policies of issue 4, part A (spec algorithms-regret §2.1-2.7).

EUCBV and UCB-Improved take a static policy horizon ``T`` (it fixes the round cap M);
the run budget is drawn at or below the case horizon. Parameters are chosen so that
rounds and eliminations happen within <= 100 pulls (small psi / rho for EUCBV, a short
policy horizon for UCB-Improved, large eps / delta for Median Elimination);
tests/policies/test_regret_*.py asserts that they do.
"""

from __future__ import annotations

import warnings
from functools import partial

import numpy as np
from harness import Instance, TraceCase, random_mask, random_table
from reference.regret import eucbv as ref_eucbv
from reference.regret import improved as ref_improved
from reference.regret import median_elimination as ref_me
from reference.regret import moss as ref_moss
from reference.regret import ocucb as ref_ocucb
from reference.regret import ucb as ref_ucb
from reference.regret import ucbv as ref_ucbv

from jbandits.policies import regret

K_MAX = 8
HORIZON = 100


def regret_instance(rng, k_max, horizon, hp) -> Instance:
    """Random K (often <= 4), padding at random positions, budget in [K, horizon]
    (often exactly the horizon), and reward tables that are random (Bernoulli /
    Gaussian / coarse with exact ties) or *spread* (Bernoulli with means near 0 and 1,
    so that elimination rules fire early)."""
    num_arms = int(
        rng.integers(2, 5) if rng.random() < 0.35 else rng.integers(2, k_max + 1)
    )
    mask = random_mask(rng, k_max, num_arms)
    budget = (
        horizon if rng.random() < 0.25 else int(rng.integers(num_arms, horizon + 1))
    )
    if rng.random() < 0.3:
        means = np.where(rng.random(k_max) < 0.5, 0.03, 0.97)
        means[rng.choice(np.flatnonzero(mask))] = 0.97
        table = (rng.random((k_max, horizon)) < means[:, None]).astype(np.float64)
        table[~mask] = 0.0
    else:
        table, _ = random_table(rng, mask, horizon)
    return Instance(num_arms, mask, table, budget, hp, {})


def _sampler(draw_hp):
    return lambda rng, k_max, horizon: regret_instance(
        rng, k_max, horizon, draw_hp(rng)
    )


def _policy(factory, **static):
    def make(**hp):
        with (
            warnings.catch_warnings()
        ):  # EUCBV warns for T < K^2.4 (small test horizons)
            warnings.simplefilter("ignore")
            return factory(num_arms=K_MAX, **static, **hp)

    return make


# ------------------------------------------------------------------ hyper-parameters
def _alpha(default):
    return lambda rng: {"alpha": float(rng.choice([default, rng.uniform(0.0, 4.0)]))}


def _ucbv_hp(rng):
    if rng.random() < 0.3:
        return {"zeta": 1.0, "c": 1.0 / 3.0, "b": 1.0}  # the EUCBV-paper preset
    return {
        "zeta": float(rng.uniform(0.5, 2.0)),
        "c": float(rng.uniform(0.0, 1.5)),
        "b": float(rng.choice([1.0, rng.uniform(0.2, 2.0)])),
    }


def _moss_hp(rng):
    # a horizon below the budget-ish range makes the clamp bind (bonus exactly 0)
    return {
        "alpha": float(rng.choice([1.0, rng.uniform(0.1, 4.0)])),
        "horizon": float(rng.choice([HORIZON, rng.integers(2, HORIZON + 1)])),
    }


def _ocucb_hp(rng):
    return {
        "alpha": float(rng.choice([2.0, 3.0, rng.uniform(0.0, 4.0)])),
        "psi": float(rng.choice([2.0, rng.uniform(1.0, 4.0)])),
        "horizon": float(HORIZON),
    }


def _eucbv_hp(rng):
    # small psi: L_m and n_m shrink (L_m = 0 clamps bind), rounds end and arms go
    return {
        "rho": float(rng.choice([0.5, rng.uniform(0.02, 1.0)])),
        "psi": float(
            rng.choice(
                [0.01, 0.02, 0.05, rng.uniform(0.005, 0.5), rng.uniform(0.5, 3.0)]
            )
        ),
    }


def _eucbv_default_psi_hp(rng):
    return {"rho": float(rng.choice([0.5, rng.uniform(0.01, 0.2)]))}


def _me_hp(square):
    def draw(rng):
        if square:  # n_1 = ceil(4 / (eps / 4)^2 ln(6 / delta)) small when eps is large
            return {
                "eps": float(rng.uniform(2.0, 12.0)),
                "delta": float(rng.uniform(0.3, 0.99)),
            }
        return {
            "eps": float(rng.uniform(0.5, 6.0)),
            "delta": float(rng.uniform(0.05, 0.99)),
        }

    return draw


# ------------------------------------------------------------------------ the cases
def _cases():
    cases = []
    for tb in ("random", "first"):
        cases += [
            TraceCase(
                f"ucb1-{tb}",
                "ucb1",
                _policy(regret.ucb1, tie_break=tb),
                _sampler(_alpha(2.0)),
                partial(ref_ucb.ucb1, tie_break=tb),
                horizon=HORIZON,
            ),
            TraceCase(
                f"ucbv-{tb}",
                "ucbv",
                _policy(regret.ucbv, tie_break=tb),
                _sampler(_ucbv_hp),
                partial(ref_ucbv.ucbv, tie_break=tb),
                horizon=HORIZON,
            ),
            TraceCase(
                f"ocucb-{tb}",
                "ocucb",
                _policy(regret.ocucb, tie_break=tb),
                _sampler(_ocucb_hp),
                partial(ref_ocucb.ocucb, tie_break=tb),
                horizon=HORIZON,
            ),
        ]
        for anytime in (False, True):
            form = "anytime" if anytime else "horizon"
            cases.append(
                TraceCase(
                    f"moss-{form}-{tb}",
                    "moss",
                    _policy(regret.moss, anytime=anytime, tie_break=tb),
                    _sampler(_alpha(1.0) if anytime else _moss_hp),
                    partial(ref_moss.moss, anytime=anytime, tie_break=tb),
                    horizon=HORIZON,
                )
            )
    for elim, tb in (
        ("round", "random"),
        ("round", "first"),
        ("pulls", "random"),
        ("pulls", "first"),
    ):
        cases.append(
            TraceCase(
                f"eucbv-{elim}-{tb}",
                "eucbv",
                _policy(regret.eucbv, horizon=HORIZON, elim_count=elim, tie_break=tb),
                _sampler(_eucbv_hp),
                partial(
                    ref_eucbv.eucbv, horizon=HORIZON, elim_count=elim, tie_break=tb
                ),
                horizon=HORIZON,
            )
        )
    for elim in ("round", "pulls"):  # default psi = T / K^2 with K the real arms
        cases.append(
            TraceCase(
                f"eucbv-{elim}-default-psi",
                "eucbv",
                _policy(regret.eucbv, horizon=HORIZON, elim_count=elim),
                _sampler(_eucbv_default_psi_hp),
                partial(ref_eucbv.eucbv, horizon=HORIZON, elim_count=elim),
                horizon=HORIZON,
            )
        )
    # policy horizons 8 (M = 0), 20 (M = 1, rounds exhausted within the run) and 100
    for t_pol, tb in (
        (8, "random"),
        (20, "first"),
        (20, "random"),
        (HORIZON, "random"),
    ):
        cases.append(
            TraceCase(
                f"ucb_improved-T{t_pol}-{tb}",
                "ucb_improved",
                _policy(regret.ucb_improved, horizon=t_pol, tie_break=tb),
                _sampler(lambda rng: {}),
                partial(ref_improved.ucb_improved, horizon=t_pol, tie_break=tb),
                horizon=HORIZON,
            )
        )
    for square, means, tb in (
        (True, "round", "random"),
        (True, "round", "first"),
        (False, "cumulative", "random"),
        (False, "round", "first"),
        (True, "cumulative", "first"),
    ):
        cases.append(
            TraceCase(
                f"median_elimination-{'sq' if square else 'nosq'}-{means}-{tb}",
                "median_elimination",
                _policy(
                    regret.median_elimination, square=square, means=means, tie_break=tb
                ),
                _sampler(_me_hp(square)),
                partial(
                    ref_me.median_elimination, square=square, means=means, tie_break=tb
                ),
                horizon=HORIZON,
            )
        )
    return cases


CASES = _cases()
