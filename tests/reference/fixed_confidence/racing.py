"""References for KL-Racing and Chernoff-Racing (spec §1 "Racing baselines"; GK16 Sec.
6, pp. 13-14), one pull at a time.

Rounds: every active arm once, in index order; at the end of round r the empirical
best and worst active arms (first on ties) are tested, the worst eliminated if the
test passes; stop when one arm remains (recommend it). A run cut by its budget
recommends the empirical best active arm. Rate time: r ("round") or the samples so
far ("pulls").
"""

from __future__ import annotations

from reference.fixed_confidence import tracking_tools as tt
from reference.stats import arms as new_arms


def _chernoff(family, sigma, mu_best, mu_worst, r, beta):
    mid = (mu_best + mu_worst) / 2.0
    d = tt.divergence(family, mu_best, mid, sigma) + tt.divergence(
        family, mu_worst, mid, sigma
    )
    return r * d > beta


def _kl(family, sigma, mu_best, mu_worst, r, beta):
    level = beta / r
    upper = tt.kl_upper(family, mu_worst, level, sigma)
    return upper < tt.kl_lower(family, mu_best, level, sigma)


RULES = {"chernoff": _chernoff, "kl": _kl}


def racing(inst, draws, *, rule, family, threshold="practical", clock="round"):
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    test = RULES[rule]
    arms, pulls = new_arms(k), []
    active = list(range(k))
    r = 0
    while len(active) > 1:
        for a in active:
            if len(pulls) == inst.budget:
                means = [x.mean for x in arms]
                return pulls, tt.first_best(means, [i for i in active if arms[i].n])
            arms[a].add(inst.table[a, arms[a].n])
            pulls.append(a)
        r += 1
        means = [x.mean for x in arms]
        best, worst = tt.first_best(means, active), tt.first_worst(means, active)
        when = r if clock == "round" else len(pulls)
        beta = tt.threshold(threshold, when, delta, k, family)
        if best != worst and test(family, sigma, means[best], means[worst], r, beta):
            active.remove(worst)
    return pulls, active[0]
