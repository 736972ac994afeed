"""Reference: EB-TC / EB-TCε (Jourdan, Degenne & Kaufmann, NeurIPS 2023), one pull at a
time, written from ``benchmarks/notes_fc_baselines.md`` §1 (loops over arms, no masks).

Every arm once (round robin); then at every ``t`` (samples observed): leader ``B`` =
the first empirical best; stop if the GLR (Bernoulli: Chernoff's ``Z``; Gaussian: the
GLRε ``min_{j != B} (mu_B - mu_j + eps)^2 / (2 sigma^2 (1/N_B + 1/N_j))``) exceeds
``beta(t, delta)``; else challenger ``C`` = the arg-min of the transportation cost with
slack ``eps0`` (ties within 64 ulps at random with the ``second`` key, as T3C), and pull
``B`` when ``N^B_B <= sum of the targets of B's leader times`` (fixed: ``beta L_B``;
IDS: ``sum beta_s``), else ``C``. Recommend the first empirical best.
"""

from __future__ import annotations

import sys

from reference.fixed_confidence import tracking_tools as tt
from reference.fixed_confidence.top_two import _keys, tc_challenger
from reference.regret._common import random_tied
from reference.stats import arms as new_arms

TIE_ULPS = 64
GRID = 2.0**-20  # the rounding of the Bernoulli IDS share


def gaussian_cost(arms, b, j, sigma, slack) -> float:
    gap = (arms[b].mean - arms[j].mean) + slack
    inv = 1.0 / arms[b].n + 1.0 / arms[j].n
    return gap * gap / (2.0 * sigma * sigma * inv)


def ids_share(family, arms, b, c) -> float:
    """IDS's ``N_B d(mu_B, u) / (N_B d(mu_B, u) + N_C d(mu_C, u))``."""
    n_b, n_c = arms[b].n, arms[c].n
    ratio = n_c / (n_b + n_c)
    if family == "gaussian":
        return ratio
    mu_b, mu_c = arms[b].mean, arms[c].mean
    u = (n_b * mu_b + n_c * mu_c) / (n_b + n_c)
    a = n_b * tt.divergence(family, mu_b, u)
    other = n_c * tt.divergence(family, mu_c, u)
    share = a / (a + other) if a + other > 0 else ratio
    return round(share / GRID) * GRID


def eb_tc(inst, draws, *, family, threshold="practical", target="fixed"):
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    beta = float(inst.hp["beta"])
    eps = float(inst.hp.get("epsilon", 0.0))
    eps0 = float(inst.hp.get("epsilon0", eps))
    arms, pulls = new_arms(k), []
    leads, lead_pulls, target_sum = [0] * k, [0] * k, [0.0] * k
    t = 0
    while True:
        if t < k:
            i = t
        else:
            leader = tt.first_best([a.mean for a in arms])
            others = [j for j in range(k) if j != leader]
            if family == "gaussian":
                z = min(gaussian_cost(arms, leader, j, sigma, eps) for j in others)
            else:
                z, _, _ = tt.glr(family, arms, sigma)
            if z > tt.threshold(threshold, t, delta, k, family):
                break
            _, _, key_second, _ = _keys(draws.key_for_pull(t))
            if family == "gaussian":
                costs = {j: gaussian_cost(arms, leader, j, sigma, eps0) for j in others}
                level = min(costs.values()) * (1.0 + TIE_ULPS * sys.float_info.epsilon)
                tied = [j for j in others if costs[j] <= level]
                challenger = random_tied(tied, key_second)
            else:
                challenger = tc_challenger(family, arms, leader, sigma, key_second)
            if target == "fixed":
                share = beta
                play = lead_pulls[leader] <= beta * (leads[leader] + 1)
            else:
                share = ids_share(family, arms, leader, challenger)
                play = lead_pulls[leader] <= target_sum[leader] + share
            leads[leader] += 1
            lead_pulls[leader] += int(play)
            target_sum[leader] += share
            i = leader if play else challenger
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    return pulls, tt.first_best([a.mean if a.n else -float("inf") for a in arms])
