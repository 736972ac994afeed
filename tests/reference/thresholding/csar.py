"""CSAR references: spec §4.5 (paper) and the authors' code (epochs, arm by arm).

Schedules are recomputed here with ``fractions`` from (K, T), not read from the hp.
"""

from __future__ import annotations

import math
from fractions import Fraction

from reference.stats import arms as new_arms


def csar_paper(inst, draws):
    k, budget, tau = inst.num_arms, inst.budget, float(inst.hp["threshold"])
    lt = sum(Fraction(1, i) for i in range(1, k + 1))
    stats, pulls = new_arms(k), []
    active = list(range(k))
    prev = 0
    for phase in range(1, k + 1):
        n_k = math.ceil(Fraction(budget - k) / (lt * (k - phase + 1)))
        for _ in range(n_k - prev):  # round robin over the active arms, index order
            for i in active:
                stats[i].add(inst.table[i, stats[i].n])
                pulls.append(i)
        prev = n_k
        far, far_gap = None, None
        for i in active:
            gap = abs(stats[i].mean - tau)
            if far is None or gap > far_gap:
                far, far_gap = i, gap
        active.remove(far)
    assert len(pulls) <= budget
    return pulls, [s.n > 0 and s.mean >= tau for s in stats]


def csar_authors_code(inst, draws):
    k, budget, tau = inst.num_arms, inst.budget, float(inst.hp["threshold"])
    lb = Fraction(1, 2) + sum(Fraction(1, i) for i in range(1, k + 1))
    stats, pulls = new_arms(k), []
    removed = [False] * k
    prev = 0
    for epoch in range(k):
        n_e = math.ceil(Fraction(budget - k) / (lb * (k + 1 - epoch)))
        for i in range(k):  # arm by arm
            for _ in range(n_e - prev):
                if not removed[i]:
                    if len(pulls) == budget:
                        return pulls, [s.n > 0 and s.mean >= tau for s in stats]
                    stats[i].add(inst.table[i, stats[i].n])
                    pulls.append(i)
        take = None
        for i in range(k):
            below = not removed[i] and stats[i].mean < tau
            if below and (take is None or stats[i].mean < stats[take].mean):
                take = i
        if take is not None:
            removed[take] = True
        prev = n_e
    return pulls, [s.n > 0 and s.mean >= tau for s in stats]
