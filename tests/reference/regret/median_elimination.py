"""Median Elimination reference (spec §2.7), run for cumulative regret."""

from __future__ import annotations

import math

import numpy as np

from reference.regret._common import best_mean, pick
from reference.stats import arms as new_arms


def samples(eps_l, delta_l, square=True):
    """n_l: ceil(4 / eps_l^2 ln(3 / delta_l)) (paper) or ceil(1 / (eps_l / 2) ...)."""
    if square:
        return math.ceil(4 / (eps_l * eps_l) * math.log(3 / delta_l))
    return math.ceil(1 / (eps_l / 2) * math.log(3 / delta_l))


def median_elimination(
    inst, draws, square=True, means="round", tie_break="random", trace=None
):
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    eps_l, delta_l = float(inst.hp["eps"]) / 4, float(inst.hp["delta"]) / 2
    survivors = list(range(k))
    round_n, round_sum = [0] * k, [0.0] * k
    rounds_done = 0
    for t in range(inst.budget):
        i = pick(survivors, round_n, tie_break, draws, t, best=min)
        x = float(inst.table[i, arms[i].n])
        arms[i].add(x)
        round_n[i] += 1
        round_sum[i] += x
        pulls.append(i)
        n_l = samples(eps_l, delta_l, square)
        if len(survivors) > 1 and all(round_n[j] >= n_l for j in survivors):
            if means == "round":
                p = {j: round_sum[j] / round_n[j] for j in survivors}
            else:
                p = {j: arms[j].mean for j in survivors}
            med = float(np.median([p[j] for j in survivors]))
            survivors = [j for j in survivors if not p[j] < med]
            round_n, round_sum = [0] * k, [0.0] * k
            eps_l, delta_l = 0.75 * eps_l, 0.5 * delta_l
            rounds_done += 1
        if trace is not None:
            trace.append((t + 1, list(survivors), rounds_done))
    return pulls, best_mean(arms, survivors)
