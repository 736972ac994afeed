"""UCB-Improved reference (spec §2.6, Auer and Ortner 2010; cumulative n_m)."""

from __future__ import annotations

import math

from reference.regret._common import best_mean, pick
from reference.stats import arms as new_arms


def schedule(horizon):
    """(M, n_m, w_m) for m = 0..M (spec §2.6)."""
    big_m = max(0, math.floor(0.5 * math.log2(horizon / math.e)))
    n, w = [], []
    for m in range(big_m + 1):
        d = 2.0**-m
        n.append(max(math.ceil(2 * math.log(horizon * d * d) / (d * d)), 1))
        w.append(math.sqrt(max(math.log(horizon * d * d), 0.0) / (2 * n[-1])))
    return big_m, n, w


def ucb_improved(inst, draws, horizon, tie_break="random", trace=None):
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    big_m, n_sched, w_sched = schedule(horizon)
    active, m = list(range(k)), 0
    for t in range(inst.budget):
        if t < k:  # each arm once, in index order
            i = t
        elif m <= big_m:  # least-pulled active arm (a single survivor until T)
            i = pick(
                active, {j: arms[j].n for j in active}, tie_break, draws, t, best=min
            )
        else:  # rounds exhausted: the active arm with the largest mean
            i = pick(active, {j: arms[j].mean for j in active}, tie_break, draws, t)
        arms[i].add(float(inst.table[i, arms[i].n]))
        pulls.append(i)
        if (
            len(active) > 1
            and m <= big_m
            and all(arms[j].n >= n_sched[m] for j in active)
        ):
            w = w_sched[m]
            lcb_max = max(arms[j].mean - w for j in active)
            active = [j for j in active if not arms[j].mean + w < lcb_max]
            m += 1
        if trace is not None:
            trace.append((t + 1, list(active), m))
    return pulls, best_mean(arms, active)
