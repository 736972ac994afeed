"""Reference: lil'UCB (JMNB14 Figure 1) with the LIL stopping criterion (Sec. 5) and
the two experimental settings (spec §4), written from the paper's text, one pull at a
time, compact numbering.

Hyper-parameters missing from ``inst.hp`` take the setting's values: theory eps = 0.01,
beta = 1, lambda = ((2 + beta)/beta)^2, delta = (sqrt(1 + nu') - 1)^2 / (4 c_eps);
heuristic eps = 0, beta = 1/2, lambda = 1 + 10/n, delta = nu'/5 and footnote 2's
log(log((1 + eps) T + 2) / delta); nu' = nu/2 with LS (which gets the other nu/2).
Ties: lowest index.
"""

from __future__ import annotations

import math

from reference.stats import arms as new_arms


def _first_max(values):
    return min(range(len(values)), key=lambda i: (-values[i], i))


def lil_ucb(inst, draws, *, family, setting, stopping):
    hp = inst.hp
    k = inst.num_arms
    theory = setting == "theory"
    nu = float(hp.get("delta", 0.1))
    nu_index = nu / 2.0 if stopping == "ls" else nu
    eps = float(hp.get("epsilon", 0.01 if theory else 0.0))
    beta = float(hp.get("beta", 1.0 if theory else 0.5))
    if "lam" in hp:
        lam = float(hp["lam"])
    else:
        lam = ((2.0 + beta) / beta) ** 2 if theory else 1.0 + 10.0 / k
    if "index_delta" in hp:
        delta = float(hp["index_delta"])
    elif theory:
        c_eps = (2.0 + eps) / eps * (1.0 / math.log(1.0 + eps)) ** (1.0 + eps)
        root = math.sqrt(1.0 + nu_index) - 1.0
        delta = root * root / (4.0 * c_eps)
    else:
        delta = nu_index / 5.0
    ls_eps = float(hp.get("ls_epsilon", hp.get("epsilon", 0.01)))
    base = (nu / 2.0) * ls_eps / (2.0 + ls_eps)
    ls_delta = math.log(1.0 + ls_eps) * base ** (1.0 / (1.0 + ls_eps))
    sigma = 0.5 if family == "bernoulli" else float(hp["sigma"])
    offset = 0.0 if theory else 2.0

    def index(a):
        factor = (1.0 + beta) * (1.0 + math.sqrt(eps))
        inner = math.log(math.log((1.0 + eps) * a.n + offset) / delta)
        width = math.sqrt(2.0 * (sigma * sigma) * (1.0 + eps) * inner / a.n)
        return a.mean + factor * width

    def ls_bound(a):
        inner = math.log(2.0 * math.log((1.0 + ls_eps) * a.n + 2.0) / (ls_delta / k))
        width = math.sqrt(2.0 * (sigma * sigma) * (1.0 + ls_eps) * inner / a.n)
        return (1.0 + math.sqrt(ls_eps)) * width

    arms, pulls = new_arms(k), []
    t = 0
    while len(pulls) < inst.budget:
        if t >= k:  # after the initial pulls: the two stopping tests, then the index
            counts = [a.n for a in arms]
            if stopping == "ls":
                means = [a.mean for a in arms]
                bounds = [ls_bound(a) for a in arms]
                best = _first_max(means)
                if all(
                    means[best] - bounds[best] >= means[j] + bounds[j]
                    for j in range(k)
                    if j != best
                ):
                    return pulls, best
            if any(c >= 1.0 + lam * (t - c) for c in counts):
                return pulls, _first_max(counts)
            i = _first_max([index(a) for a in arms])
        else:
            i = t
        arms[i].add(float(inst.table[i, arms[i].n]))
        pulls.append(i)
        t += 1
    return pulls, _first_max([a.mean if a.n else -math.inf for a in arms])
