"""Reference for Successive Rejects (spec §5.2), written from the spec text."""

from __future__ import annotations

import math
from fractions import Fraction

from reference.stats import arms as new_arms
from reference.stats import first_min


def sr_quotas(k: int, budget: int) -> list[int]:
    """[n_0 = 0, n_1, ..., n_{K-1}], n_k = ceil((T - K) / (logbar(K) (K + 1 - k)))."""
    logbar = Fraction(1, 2) + sum(Fraction(1, i) for i in range(2, k + 1))
    return [0] + [
        math.ceil(Fraction(budget - k) / (logbar * (k + 1 - j))) for j in range(1, k)
    ]


def successive_rejects(inst, draws):
    k = inst.num_arms
    n = sr_quotas(k, inst.budget)
    arms, pulls, active = new_arms(k), [], list(range(k))
    for phase in range(1, k):
        for _ in range(n[phase] - n[phase - 1]):  # each active arm, index order
            for i in active:
                arms[i].add(inst.table[i, arms[i].n])
                pulls.append(i)
        worst = active[first_min([arms[i].mean for i in active])]
        active.remove(worst)
    assert len(pulls) <= inst.budget
    return pulls, active[0]
