"""AugUCB references (spec §4.1 and thresholding-authors-code.md §1), written literally.

Rounds are a loop with an explicit set B; the round constants are recomputed from
(K, T) with ``math`` (not taken from the JAX tables).
"""

from __future__ import annotations

import math

from reference.stats import arms as new_arms


def _constants(k, budget, m, authors):
    eps = 2.0**-m
    if authors:
        psi = budget / math.log(k)
        log_term = math.log(psi * budget * eps * eps)
        ell = math.ceil(2.0 * log_term / eps)
    else:
        a2 = math.log((3.0 / 16.0) * k * math.log(k)) ** 2
        psi = budget * eps / (128.0 * a2)
        log_term = math.log(budget * eps)
        ell = math.ceil(2.0 * psi * log_term / eps)
    return psi, log_term, ell


def _run(inst, authors):
    k, budget = inst.num_arms, inst.budget
    tau = float(inst.hp["threshold"])
    rho = float(inst.hp["rho"])
    on_empty = inst.extra.get("on_empty", "idle" if authors else "all")
    stats, pulls = new_arms(k), []

    def pull(i):
        stats[i].add(inst.table[i, stats[i].n])
        pulls.append(i)

    def s(i, psi, log_term):
        # s_i = sqrt(rho psi_m (v_i + 1) L_m / (4 n_i)), grouped as
        # sqrt((rho psi_m L_m) * ((v_i + 1) / (4 n_i))) like the JAX policy (same floats)
        a = stats[i]
        scale = rho * log_term if authors else rho * psi * log_term
        return math.sqrt(scale * ((a.var_biased + 1) / (4 * a.n)))

    big_m = math.floor(0.5 * math.log2(budget / math.e))
    m = 0
    psi, log_term, ell = _constants(k, budget, m, authors)
    big_b = set(range(k))  # selectable arms
    counted = set(
        range(k)
    )  # arms counted in |B| (authors: not removed by the mean rule)
    big_n = k * ell
    for i in range(k):  # steps 1..K
        if len(pulls) < budget:
            pull(i)
    t = k
    while t < budget:
        t += 1
        if big_b:
            candidates = sorted(big_b)
        elif on_empty == "all":
            candidates = list(range(k))
        else:
            break  # idle for the rest of the budget
        best, best_score = None, None
        for i in candidates:
            gap = abs(stats[i].mean - tau)
            score = (
                gap - s(i, psi, log_term) if authors else gap - 2 * s(i, psi, log_term)
            )
            if best is None or score < best_score:
                best, best_score = i, score
        pull(best)
        if authors:
            for i in sorted(big_b):
                mu = stats[i].mean
                c = math.sqrt((1.0 / 8.0) * log_term / (2 * stats[i].n))
                if mu - c > tau + c or mu + c < tau - c:
                    big_b.discard(i)
                    counted.discard(i)
            for i in sorted(big_b):
                mu, si = stats[i].mean, s(i, psi, log_term)
                if mu - si > tau + si or mu + si < tau - si:
                    big_b.discard(i)
        else:
            for i in sorted(big_b):
                if abs(stats[i].mean - tau) - 2 * s(i, psi, log_term) > 0:
                    big_b.discard(i)
            counted = set(big_b)
        if t >= big_n and m <= big_m:
            m += 1
            psi, log_term, ell = _constants(k, budget, m, authors)
            big_n = t + len(counted) * ell
    return pulls, [a.n > 0 and a.mean >= tau for a in stats]


def augucb_paper(inst, draws):
    return _run(inst, authors=False)


def augucb_authors_code(inst, draws):
    return _run(inst, authors=True)
