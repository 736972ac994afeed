"""Reference for VBR_provisional (spec §5.9 placeholder rule), from the spec text."""

from __future__ import annotations

import math

from reference.identification.successive_rejects import sr_quotas
from reference.stats import arms as new_arms
from reference.stats import first_max, first_min


def vbr_provisional(inst, draws):
    k, gamma = inst.num_arms, float(inst.hp["gamma"])
    n = sr_quotas(k, inst.budget)
    # phase k ends once its budget |A_k| (n_k - n_{k-1}) is spent
    ends, total = [], 0
    for phase in range(1, k):
        total += (k + 1 - phase) * (n[phase] - n[phase - 1])
        ends.append(total)
    arms, pulls, active = new_arms(k), [], list(range(k))

    def width(a):
        # gamma sigma / sqrt(n) evaluated as gamma sqrt(sigma^2 / n)
        return gamma * math.sqrt(a.var_unbiased / a.n) if a.n else 0.0

    phase = 0
    while phase < k - 1:
        while phase < k - 1 and ends[phase] <= len(pulls):
            upper = [arms[i].mean + width(arms[i]) for i in active]
            active.remove(active[first_min(upper)])
            phase += 1
        if phase == k - 1:
            break
        if any(arms[i].n < 2 for i in active):  # two initial pulls per arm
            i = active[first_min([arms[i].n for i in active])]
        else:
            i = active[first_max([width(arms[i]) for i in active])]
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    assert len(pulls) <= inst.budget
    return pulls, active[0]
