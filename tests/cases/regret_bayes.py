"""Trace cases: Thompson sampling, Bayes-UCB, KL-UCB and DMED (spec §2.8-2.11).

Both posteriors / KL kinds and both tie rules. Bernoulli and coarse (0, 1/2, 1)
reward tables give exact ties (equal posteriors, means of 1 with KL-UCB index exactly
1, Bayes-UCB's all-tied first decision); Gaussian tables exercise binarisation of
rewards outside {0, 1} and the Gaussian models.
"""

from __future__ import annotations

from harness import TraceCase, basic_instance
from reference.regret import bayes_ucb as ref_bayes_ucb
from reference.regret import dmed as ref_dmed
from reference.regret import klucb as ref_klucb
from reference.regret import thompson as ref_thompson

import jbandits
from jbandits.core.execution import Execution

K_MAX = 8
HORIZON = 48
BU_ITERS = 30


def _bounded(rng):
    return str(rng.choice(["bernoulli", "coarse"]))


def _any_kind(rng):
    return str(rng.choice(["bernoulli", "coarse", "gauss"]))


def _ts_sample(posterior):
    def sample(rng, k_max, horizon):
        hp = {"prior_var": float(rng.choice([1.0, rng.uniform(0.1, 4.0)]))}
        return basic_instance(rng, k_max, horizon, hp, kind=_any_kind(rng))

    return sample


def _bu_sample(posterior):
    def sample(rng, k_max, horizon):
        hp = {
            "c": float(rng.choice([0.0, 0.0, 1.0, rng.uniform(0.0, 5.0)])),
            "horizon": float(rng.choice([horizon, 2.0, rng.uniform(3.0, 1e4)])),
            "noise_var": float(rng.choice([1.0, rng.uniform(0.1, 2.0)])),
        }
        kind = _any_kind(rng) if posterior == "gauss" else _bounded(rng)
        return basic_instance(rng, k_max, horizon, hp, kind=kind)

    return sample


def _kl_sample(kl):
    def sample(rng, k_max, horizon):
        hp = {
            "c": float(rng.choice([0.0, 0.0, 3.0, rng.uniform(0.0, 3.0)])),
            "sigma2": float(rng.choice([1.0, 0.25, rng.uniform(0.1, 2.0)])),
        }
        kind = _any_kind(rng) if kl == "gauss" else _bounded(rng)
        return basic_instance(rng, k_max, horizon, hp, kind=kind)

    return sample


def _dmed_sample(kl):
    def sample(rng, k_max, horizon):
        hp = {"sigma2": float(rng.choice([1.0, 0.25, rng.uniform(0.1, 2.0)]))}
        kind = _any_kind(rng) if kl == "gauss" else _bounded(rng)
        return basic_instance(rng, k_max, horizon, hp, kind=kind)

    return sample


def _make(factory, **static):
    return lambda **hp: factory(num_arms=K_MAX, **static, **hp)


def _case(name, registry_name, static, sample, reference):
    factory = jbandits.factory(registry_name)
    return TraceCase(
        name,
        registry_name,
        _make(factory, **static),
        sample,
        reference,
        k_max=K_MAX,
        horizon=HORIZON,
    )


CASES = []
for _tie in ("random", "first"):
    for _post in ("beta", "gauss"):
        _static = {"posterior": _post, "tie_break": _tie}
        # Bayes-UCB-Beta: a 2^-30 snap grid (not float64's 2^-40) so that exact ties
        # between different posteriors (Beta(1,2), Beta(2,3) at alpha = 1/9: both
        # 2/3) and between equal posteriors reached along different warm starts are
        # not decided by last-ulp differences between XLA and NumPy
        _bu_static = dict(_static, num_iters=BU_ITERS) if _post == "beta" else _static
        CASES.append(
            _case(
                f"thompson-{_post}-{_tie}",
                "thompson",
                _static,
                _ts_sample(_post),
                ref_thompson.make(_post, _tie),
            )
        )
        CASES.append(
            _case(
                f"bayes_ucb-{_post}-{_tie}",
                "bayes_ucb",
                _bu_static,
                _bu_sample(_post),
                ref_bayes_ucb.make(_post, _tie, BU_ITERS),
            )
        )
    # the Gaussian form with every arm's mean and scale kept (Execution.gauss_kept_arms)
    CASES.append(
        _case(
            f"bayes_ucb-gauss-{_tie}-kept",
            "bayes_ucb",
            {
                "posterior": "gauss",
                "tie_break": _tie,
                "execution": Execution(gauss_kept_arms=2),
            },
            _bu_sample("gauss"),
            ref_bayes_ucb.make("gauss", _tie, BU_ITERS),
        )
    )
    for _kl in ("bernoulli", "gauss"):
        CASES.append(
            _case(
                f"klucb-{_kl}-{_tie}",
                "klucb",
                {"kl": _kl, "tie_break": _tie},
                _kl_sample(_kl),
                ref_klucb.make(_kl, _tie),
            )
        )
for _variant in ("genuine", "gc"):
    for _kl in ("bernoulli", "gauss"):
        CASES.append(
            _case(
                f"dmed-{_variant}-{_kl}",
                "dmed",
                {"variant": _variant, "kl": _kl},
                _dmed_sample(_kl),
                ref_dmed.make(_variant, _kl),
            )
        )
