"""Reference: DMED (spec §2.11), list-based.

Pull each arm once. Then play arms one per step from a list, in increasing index; when
the list is empty rebuild it (n = completed pulls) as
``{i : z_i kl(mu_i, mu_max) < ln(n / z_i)}`` ("genuine") or ``< ln n`` ("gc"), plus
the empirical best arm (lowest index among equal means).
"""

from __future__ import annotations

import math

from reference.regret._bayes_common import empirical_best
from reference.regret.klucb import kl_bernoulli
from reference.stats import arms as new_arms
from reference.stats import first_max


def make(variant: str, kl: str):
    def reference(inst, draws):
        k = inst.num_arms
        sigma2 = float(inst.hp.get("sigma2", 1.0))
        arms, pulls, todo = new_arms(k), [], []
        for n in range(inst.budget):
            if n < k:
                i = n
            else:
                if not todo:
                    mu_max = max(a.mean for a in arms)
                    for j, a in enumerate(arms):
                        if kl == "bernoulli":
                            div = float(kl_bernoulli(a.mean, mu_max))
                        else:
                            div = (mu_max - a.mean) ** 2 / (2.0 * sigma2)
                        rhs = math.log(n / a.n) if variant == "genuine" else math.log(n)
                        if a.n * div < rhs:
                            todo.append(j)
                    best = first_max([a.mean for a in arms])
                    if best not in todo:
                        todo = sorted(todo + [best])
                i = todo.pop(0)
            arms[i].add(float(inst.table[i, arms[i].n]))
            pulls.append(i)
        return pulls, empirical_best(arms)

    return reference
