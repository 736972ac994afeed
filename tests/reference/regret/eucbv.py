"""EUCBV reference (spec §2.1, [seed] Algorithm 1), written as the paper's loop."""

from __future__ import annotations

import math

from reference.regret._common import best_mean, pick
from reference.stats import arms as new_arms


def schedule(horizon, psi):
    """(M, n_m, L_m) for m = 0..M+1 in float64 (spec §2.1 "Derived schedule")."""
    big_m = max(0, math.floor(0.5 * math.log2(horizon / math.e)))
    eps = [2.0**-m for m in range(big_m + 2)]
    n = [max(math.ceil(math.log(psi * horizon * e * e) / (2 * e)), 1) for e in eps]
    logs = [max(math.log(psi * horizon * e), 0.0) for e in eps]
    return big_m, n, logs


def eucbv(inst, draws, horizon, elim_count="round", tie_break="random", trace=None):
    """``horizon`` is the policy's T (fixes M); the run lasts ``inst.budget`` pulls.

    ``trace`` (a list) receives ``(n, active, m, N)`` after every pull when given.
    """
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    rho = float(inst.hp["rho"])
    psi = float(inst.hp["psi"]) if "psi" in inst.hp else horizon / k**2
    big_m, n_sched, logs = schedule(horizon, psi)
    active, m, round_end = list(range(k)), 0, k * n_sched[0]

    def width(a, log_m, count):
        return math.sqrt(rho * (a.var_biased + 2) * log_m / (4 * count))

    for t in range(inst.budget):
        # pull: each arm once, then the largest index over B_m
        if t < k:
            i = t
        else:
            score = {
                j: arms[j].mean + width(arms[j], logs[m], arms[j].n) for j in active
            }
            i = pick(active, score, tie_break, draws, t)
        arms[i].add(float(inst.table[i, arms[i].n]))
        pulls.append(i)
        n = t + 1
        if n >= k + 1:  # the loop of Algorithm 1 starts at t = K + 1
            w = {
                j: width(
                    arms[j], logs[m], n_sched[m] if elim_count == "round" else arms[j].n
                )
                for j in active
            }
            lcb_max = max(arms[j].mean - w[j] for j in active)
            active = [j for j in active if not arms[j].mean + w[j] < lcb_max]
            if n >= round_end and m <= big_m:
                m += 1
                round_end = n + len(active) * n_sched[m]
        if trace is not None:
            trace.append((n, list(active), m, round_end))
    return pulls, best_mean(arms, active)
