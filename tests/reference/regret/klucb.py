"""Reference: KL-UCB with Bernoulli and Gaussian KL (spec §2.10, §3.1).

Pull each arm once, then the arm maximising
``u_j = max{q : z_j kl(mu_j, q) <= ln n + c ln(max(ln n, 1))}`` (n = completed pulls).
Bernoulli: the bisection of spec §3.1 with the float64 trip count (50), midpoint
returned, ``kl`` written with ``xlogy``. Gauss: ``mu + sqrt(2 sigma2 d)``.
Ties: spec §1.5 with the decision key.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import xlogy

from reference.regret._bayes_common import empirical_best, pick_max
from reference.stats import arms as new_arms

BISECTION_STEPS = 50  # float64


def kl_bernoulli(p, q):
    """``p ln(p/q) + (1-p) ln((1-p)/(1-q))`` with ``0 ln 0 = 0`` (spec §2.10)."""
    return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


def klucb_bernoulli(mu, d, steps: int = BISECTION_STEPS):
    """Bisection of spec §3.1, elementwise over NumPy arrays of arms."""
    mu, d = np.asarray(mu, float), np.asarray(d, float)
    lo, hi = mu, np.minimum(1.0, mu + np.sqrt(d / 2.0))
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        too_far = kl_bernoulli(mu, mid) > d
        lo, hi = np.where(too_far, lo, mid), np.where(too_far, mid, hi)
    return (lo + hi) / 2.0


def make(kl: str, tie_break: str):
    def reference(inst, draws):
        k = inst.num_arms
        c = float(inst.hp.get("c", 0.0))
        sigma2 = float(inst.hp.get("sigma2", 1.0))
        arms, pulls = new_arms(k), []
        for n in range(inst.budget):  # n = completed pulls
            if n < k:
                i = n
            else:
                level = math.log(n) + c * math.log(max(math.log(n), 1.0))
                mu = np.array([a.mean for a in arms])
                d = level / np.array([float(a.n) for a in arms])
                if kl == "bernoulli":
                    index = klucb_bernoulli(mu, d)
                else:
                    index = mu + np.sqrt(2.0 * sigma2 * d)
                i = pick_max(index, tie_break, draws, draws.key_for_pull(n))
            arms[i].add(float(inst.table[i, arms[i].n]))
            pulls.append(i)
        return pulls, empirical_best(arms)

    return reference
