"""Reference: Bayes-UCB with Beta and Gaussian posteriors (spec §2.9, §3.2-3.3).

Index of arm j at the decision of pull ``t`` (1-based): the upper quantile of its
posterior at tail probability ``alpha_t = 1 / (t (ln T)^c)`` (``ln T`` floored at 1).
Beta: bisection on ``betainc(b, a, 1 - x) > alpha`` with the same trip count as the
JAX policy under float64 (50 halvings of ``[0, 1]``, midpoint returned), so that exact
ties between arms with the same posterior stay exact. Gauss: posterior
``N(S/(k+1), s2/(k+1))``, index ``S/(k+1) + sqrt(s2/(k+1)) * (-ndtri(alpha))``.
Each decision's key splits into (binarisation, tie) keys.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy.special import betainc, ndtri

from reference.regret._bayes_common import empirical_best, pick_max
from reference.stats import arms as new_arms

BISECTION_STEPS = 50  # float64


@jax.jit
def _split(key):
    """Decision key -> (binarisation uniform, tie key)."""
    key_bin, key_tie = jax.random.split(key)
    return jax.random.uniform(key_bin, ()), key_tie


def beta_upper_quantile(a, b, alpha, steps=BISECTION_STEPS):
    """Vectorised over arms: x with P(Beta(a, b) > x) = alpha."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    lo, hi = np.zeros_like(a), np.ones_like(a)
    for _ in range(steps):
        mid = (lo + hi) / 2.0
        above = betainc(b, a, 1.0 - mid) > alpha
        lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
    return (lo + hi) / 2.0


def make(posterior: str, tie_break: str, steps: int = BISECTION_STEPS):
    def reference(inst, draws):
        k = inst.num_arms
        c = float(inst.hp.get("c", 0.0))
        horizon = inst.hp.get("horizon")
        noise_var = float(inst.hp.get("noise_var", 1.0))
        arms = new_arms(k)
        succ = [0.0] * k
        pulls, last = [], None
        for t in range(inst.budget):
            u_bin, key_tie = _split(draws.key_for_pull(t))
            if last is not None and posterior == "beta":
                i, r = last  # binarise the previous reward: success iff u < r
                succ[i] += 1.0 if float(u_bin) < r else 0.0
            factor = 1.0 if horizon is None else max(math.log(float(horizon)), 1.0) ** c
            alpha = 1.0 / ((t + 1) * factor)
            if posterior == "beta":
                a = [1.0 + succ[j] for j in range(k)]
                b = [1.0 + arms[j].n - succ[j] for j in range(k)]
                index = beta_upper_quantile(a, b, alpha, steps)
            else:
                z = -ndtri(alpha)
                index = [
                    arms[j].total / (arms[j].n + 1.0)
                    + math.sqrt(noise_var / (arms[j].n + 1.0)) * z
                    for j in range(k)
                ]
            i = pick_max(index, tie_break, draws, key_tie)
            r = float(inst.table[i, arms[i].n])
            arms[i].add(r)
            pulls.append(i)
            last = (i, r)
        return pulls, empirical_best(arms)

    return reference
