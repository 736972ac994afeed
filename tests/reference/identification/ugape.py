"""References for UGapEb / UGapEc (spec §6.2-6.5), written from the spec text.

Hoeffding widths (S003 Eq. 4) and the spec's UNVERIFIED Bernstein reconstruction.
"""

from __future__ import annotations

import math

from reference.stats import arms as new_arms


def _widths(arms, confidence, a, b):
    if confidence == "hoeffding":
        # b sqrt(a / T) evaluated as sqrt(a b^2 / T) (the JAX code avoids FMAs this way)
        return [math.sqrt(a * (b * b) / x.n) for x in arms]
    return [
        math.sqrt(2 * a * x.var_unbiased / x.n) + 7 * a * b / (3 * (x.n - 1))
        for x in arms
    ]


def select_arm(mu, beta, m):
    """SELECT-ARM (spec §6.2): returns (J as a sorted list, B_J, I(t), B, u, l)."""
    k = len(mu)
    upper = [mu[i] + beta[i] for i in range(k)]
    lower = [mu[i] - beta[i] for i in range(k)]
    index = []
    for i in range(k):
        # the arm with the m-th largest U among the others (stable: lowest index first)
        others = sorted((j for j in range(k) if j != i), key=lambda j: (-upper[j], j))
        j = others[m - 1]
        # B_i = U_j - L_i, summed as (mu_j - mu_i) + (beta_j + beta_i) so that equal
        # means give exactly equal B (see the JAX select_arm docstring)
        index.append((mu[j] - mu[i]) + (beta[j] + beta[i]))
    chosen = sorted(range(k), key=lambda i: (index[i], i))[:m]
    b_j = max(index[i] for i in chosen)
    outside = [j for j in range(k) if j not in chosen]
    u = min(outside, key=lambda j: (-upper[j], -beta[j], j))
    l = min(chosen, key=lambda i: (lower[i], -beta[i], i))
    arm = l if beta[l] >= beta[u] else u
    return sorted(chosen), b_j, arm, index, u, l


def _mask(k, chosen):
    return [i in chosen for i in range(k)]


def _top_empirical(arms, m):
    order = sorted(
        range(len(arms)), key=lambda i: (-(arms[i].mean if arms[i].n else -math.inf), i)
    )
    return order[:m]


def ugapeb(inst, draws, *, m, confidence):
    k, n = inst.num_arms, inst.budget
    a, b = float(inst.hp["a"]), float(inst.hp["b"])
    passes = 1 if confidence == "hoeffding" else 2
    arms, pulls = new_arms(k), []
    best_b, best_j = math.inf, None
    for t in range(1, n + 1):
        if t <= passes * k:
            i = (t - 1) % k
        else:
            beta = _widths(arms, confidence, a, b)
            chosen, b_j, i, *_ = select_arm([x.mean for x in arms], beta, m)
            if b_j <= best_b:  # ties -> latest t (AMB-20)
                best_b, best_j = b_j, chosen
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    if best_j is None:
        best_j = _top_empirical(arms, m)
    return pulls, _mask(k, best_j)


def ugapec(inst, draws, *, m, confidence):
    """Stops when B_J(t) < eps; the budget plays the role of the maximal horizon."""
    k = inst.num_arms
    eps, delta = float(inst.hp["epsilon"]), float(inst.hp["delta"])
    c, c0, b = float(inst.hp["c"]), float(inst.hp["c0"]), float(inst.hp["b"])
    passes = 1 if confidence == "hoeffding" else 2
    arms, pulls, current = new_arms(k), [], None
    t = 1
    while True:
        if t <= passes * k:
            i = (t - 1) % k
        else:
            a_t = c * math.log(c0 * k * (t - 1) ** 3 / delta)
            beta = _widths(arms, confidence, a_t, b)
            current, b_j, i, *_ = select_arm([x.mean for x in arms], beta, m)
            if b_j < eps:
                break  # stopped: n_stop = t - 1 pulls
        if len(pulls) == inst.budget:
            break  # horizon reached without stopping
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    if current is None:
        current = _top_empirical(arms, m)
    return pulls, _mask(k, current)
