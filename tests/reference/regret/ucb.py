"""UCB1 reference (spec §2.2)."""

from __future__ import annotations

import math

from reference.regret._common import best_mean, pick
from reference.stats import arms as new_arms


def run_index_policy(inst, draws, tie_break, index):
    """Pull arms 0..K-1 once, then argmax of ``index(arm, n, K)`` (n completed pulls)."""
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        if t < k:
            i = t
        else:
            score = [index(a, t, k) for a in arms]
            i = pick(range(k), score, tie_break, draws, t)
        arms[i].add(float(inst.table[i, arms[i].n]))
        pulls.append(i)
    return pulls, best_mean(arms, range(k))


def ucb1(inst, draws, tie_break="random"):
    alpha = float(inst.hp["alpha"])
    return run_index_policy(
        inst,
        draws,
        tie_break,
        lambda a, n, k: a.mean + math.sqrt(alpha * math.log(n) / a.n),
    )
