"""Trace cases: AugUCB, UCBE, UCBEV, CSAR, Opt-KG and APT[authors_code] (issue 5)."""

from __future__ import annotations

import numpy as np
from harness import Instance, TraceCase, basic_instance, random_mask, random_table
from reference.thresholding import apt_authors_code, augucb, csar, optkg, ucbe, ucbev

from jbandits.analysis.oracles import ucbe_oracle_a, ucbev_oracle_a
from jbandits.policies.blocks import schedules
from jbandits.policies.blocks.schedules import num_rounds
from jbandits.policies.thresholding import apt
from jbandits.policies.thresholding import augucb as augucb_fn
from jbandits.policies.thresholding import csar as csar_fn
from jbandits.policies.thresholding import optkg as optkg_fn
from jbandits.policies.thresholding import ucbe as ucbe_fn
from jbandits.policies.thresholding import ucbev as ucbev_fn
from jbandits.policies.thresholding.augucb import AugUCBTables, augucb_tables

K_MAX = 8
HORIZON = 64


def _tau(rng):
    return float(rng.choice([0.5, 0.25, rng.uniform(0.1, 0.9)]))


def _extreme_instance(rng, k_max, horizon, min_arms=2):
    """Small K, near-deterministic arms far from tau: eliminations / empty sets."""
    num_arms = int(rng.integers(min_arms, min(k_max, 5) + 1))
    mask = random_mask(rng, k_max, num_arms)
    means = rng.choice([0.0, 0.02, 0.98, 1.0], size=k_max)
    table = (rng.random((k_max, horizon)) < means[:, None]).astype(np.float64)
    table[~mask] = 0.0
    budget = int(rng.integers(max(num_arms + 1, horizon // 2), horizon + 1))
    return num_arms, mask, table, budget


# ----------------------------------------------------------------------------- AugUCB
def _augucb_sample(variant):
    size = num_rounds(HORIZON) + 2

    def sample(rng, k_max, horizon):
        default = 2.0 / 3.0 if variant == "authors_code" else 1.0 / 3.0
        rho = float(rng.choice([default, rng.uniform(0.01, 1.0)]))
        if rng.random() < 0.4:
            num_arms, mask, table, budget = _extreme_instance(rng, k_max, horizon)
            tau = float(rng.choice([0.5, rng.uniform(0.2, 0.8), -0.5, 1.5]))
        else:
            num_arms = int(rng.integers(2, k_max + 1))
            mask = random_mask(rng, k_max, num_arms)
            budget = int(rng.integers(num_arms + 1, horizon + 1))
            table, _ = random_table(rng, mask, horizon)
            tau = _tau(rng)
        tab = augucb_tables(num_arms, budget, variant=variant, size=size)
        hp = {"threshold": tau, "rho": rho, **tab._asdict()}
        return Instance(num_arms, mask, table, budget, hp, {})

    return sample


def _augucb_make(variant, on_empty=None):
    def make(threshold, rho, psi, log_term, ell, last_round, k_real):
        tables = AugUCBTables(psi, log_term, ell, last_round, k_real)
        return augucb_fn(
            K_MAX,
            threshold=threshold,
            rho=rho,
            variant=variant,
            on_empty=on_empty,
            tables=tables,
        )

    return make


def _with_extra(sample, **extra):
    def wrapped(rng, k_max, horizon):
        inst = sample(rng, k_max, horizon)
        return inst._replace(extra={**inst.extra, **extra})

    return wrapped


# ----------------------------------------------------------------------- UCBE / UCBEV
def _oracle_instance(rng, k_max, horizon, min_budget):
    """Instance with true means/variances away from tau (oracle a is finite)."""
    while True:
        num_arms = int(rng.integers(2, k_max + 1))
        mask = random_mask(rng, k_max, num_arms)
        kind = str(rng.choice(["bernoulli", "gauss", "coarse"]))
        table, means = random_table(rng, mask, horizon, kind)
        variances = rng.uniform(0.01, 0.5, size=k_max)
        tau = float(rng.choice([0.5, rng.uniform(0.1, 0.9)]))
        if np.min(np.abs(means[mask] - tau)) < 1e-3:
            continue
        budget = int(rng.integers(min_budget(num_arms), horizon + 1))
        return num_arms, mask, table, means, variances, tau, budget


def _ucbe_sample(variant):
    def sample(rng, k_max, horizon):
        while True:
            k, mask, table, means, _, tau, budget = _oracle_instance(
                rng, k_max, horizon, lambda n: n + 1
            )
            i = int(rng.choice([-1, 0, 4]))
            try:
                a = ucbe_oracle_a(
                    means,
                    threshold=tau,
                    budget=budget,
                    exponent=i,
                    variant=variant,
                    arm_mask=mask,
                )
            except ValueError:  # degenerate (e.g. authors' H1 over an empty set)
                continue
            extra = {"means": means[mask], "exponent": i}
            return Instance(k, mask, table, budget, {"threshold": tau, "a": a}, extra)

    return sample


def _ucbev_sample(variant):
    def sample(rng, k_max, horizon):
        while True:
            k, mask, table, means, var, tau, budget = _oracle_instance(
                rng, k_max, horizon, lambda n: 2 * n + 1
            )
            i = int(rng.choice([-1, 0, 4]))
            try:
                a = ucbev_oracle_a(
                    means,
                    var,
                    threshold=tau,
                    budget=budget,
                    exponent=i,
                    variant=variant,
                    arm_mask=mask,
                )
            except ValueError:
                continue
            b = float(rng.choice([1.0, rng.uniform(0.2, 2.0)]))
            extra = {"means": means[mask], "variances": var[mask], "exponent": i}
            hp = {"threshold": tau, "a": a, "b": b}
            return Instance(k, mask, table, budget, hp, extra)

    return sample


# ------------------------------------------------------------------------------- CSAR
def _csar_sample(variant):
    fn = schedules.csar if variant == "paper" else schedules.csar_authors_code

    def sample(rng, k_max, horizon):
        if rng.random() < 0.3:
            num_arms, mask, table, budget = _extreme_instance(rng, k_max, horizon)
            tau = _tau(rng)
        else:
            num_arms = int(rng.integers(2, k_max + 1))
            mask = random_mask(rng, k_max, num_arms)
            # small budgets: zero-length phases (several phases end on one step)
            low = num_arms + 1
            high = horizon if rng.random() < 0.6 else min(horizon, 3 * num_arms)
            budget = int(rng.integers(low, high + 1))
            table, _ = random_table(rng, mask, horizon)
            tau = _tau(rng)
        sched = fn(num_arms, budget, size=k_max)
        hp = {"threshold": tau, **{f"s_{k}": v for k, v in sched._asdict().items()}}
        return Instance(num_arms, mask, table, budget, hp, {})

    return sample


def _csar_make(variant):
    def make(threshold, s_per_arm, s_ends, s_num_phases, s_k_real, execution=None):
        sched = schedules.PhaseSchedule(s_per_arm, s_ends, s_num_phases, s_k_real)
        return csar_fn(
            K_MAX,
            threshold=threshold,
            variant=variant,
            schedule=sched,
            execution=execution,
        )

    return make


# ----------------------------------------------------------------------------- Opt-KG
def _optkg_sample(rng, k_max, horizon):
    tau = float(rng.choice([0.5, rng.uniform(0.1, 0.9)]))
    prior = rng.choice([1.0, 0.5, rng.uniform(0.3, 3.0)], size=2)
    hp = {"threshold": tau, "prior_a": float(prior[0]), "prior_b": float(prior[1])}
    return basic_instance(rng, k_max, horizon, hp, kind="bernoulli")


# -------------------------------------------------------------------------------- APT
def _apt_authors_sample(rng, k_max, horizon):
    return basic_instance(rng, k_max, horizon, {"threshold": _tau(rng)})


def _k(fn, **static):
    return lambda **hp: fn(K_MAX, **static, **hp)


CASES = [
    TraceCase(
        "augucb[paper]",
        "augucb",
        _augucb_make("paper"),
        _augucb_sample("paper"),
        augucb.augucb_paper,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "augucb[paper,on_empty=idle]",
        "augucb",
        _augucb_make("paper", "idle"),
        _with_extra(_augucb_sample("paper"), on_empty="idle"),
        augucb.augucb_paper,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "augucb[authors_code]",
        "augucb",
        _augucb_make("authors_code"),
        _augucb_sample("authors_code"),
        augucb.augucb_authors_code,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "ucbe[paper]",
        "ucbe",
        _k(ucbe_fn, variant="paper"),
        _ucbe_sample("paper"),
        ucbe.ucbe_paper,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "ucbe[authors_code]",
        "ucbe",
        _k(ucbe_fn, variant="authors_code"),
        _ucbe_sample("authors_code"),
        ucbe.ucbe_authors_code,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "ucbev[paper]",
        "ucbev",
        _k(ucbev_fn, variant="paper"),
        _ucbev_sample("paper"),
        ucbev.ucbev_paper,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "ucbev[authors_code]",
        "ucbev",
        _k(ucbev_fn, variant="authors_code"),
        _ucbev_sample("authors_code"),
        ucbev.ucbev_authors_code,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "csar[paper]",
        "csar",
        _csar_make("paper"),
        _csar_sample("paper"),
        csar.csar_paper,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "csar[authors_code]",
        "csar",
        _csar_make("authors_code"),
        _csar_sample("authors_code"),
        csar.csar_authors_code,
        K_MAX,
        HORIZON,
    ),
    TraceCase(
        "optkg", "optkg", _k(optkg_fn), _optkg_sample, optkg.optkg, K_MAX, HORIZON
    ),
    TraceCase(
        "apt[authors_code]",
        "apt",
        _k(apt, variant="authors_code"),
        _apt_authors_sample,
        apt_authors_code.apt_authors_code,
        K_MAX,
        HORIZON,
    ),
]
