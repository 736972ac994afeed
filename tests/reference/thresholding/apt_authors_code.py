"""APT as called in the AugUCB authors' code: eps = 0.01 (thresholding-authors-code.md §2)."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms
from reference.stats import first_min


def apt_authors_code(inst, draws):
    tau, eps = float(inst.hp["threshold"]), 0.01
    k, stats, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        i = (
            t
            if t < k
            else first_min([math.sqrt(s.n) * (abs(s.mean - tau) + eps) for s in stats])
        )
        stats[i].add(inst.table[i, stats[i].n])
        pulls.append(i)
    return pulls, [s.n > 0 and s.mean >= tau for s in stats]
