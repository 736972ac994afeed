"""References: LUCB1 and KL-LUCB (KK13 Algorithm 2, m = 1), written from the spec
(§2, §3) and the papers' texts, one pull at a time, compact numbering.

Stage structure: K initial pulls (stage t = 1, B(1) = inf), then per stage the
empirical best h_t followed by u_t = argmax_{j != h_t} U_j(t), both chosen at the
stage's start; at every later stage boundary stop if B(t) = U_{u_t} - L_{h_t} <= eps
(or, stopping="glr", if the GLR statistic exceeds the threshold at n samples).
Ties: lowest index. Bernoulli KL bounds by 50 halvings (the float64 trip count),
midpoint returned.
"""

from __future__ import annotations

import math

from reference.stats import arms as new_arms

STEPS = 50  # float64 bisection halvings


def _xlogy(x, y):
    """x log y with 0 log y = 0 (as scipy's / JAX's xlogy; log 0 = -inf)."""
    if x == 0:
        return 0.0
    return x * (math.log(y) if y > 0 else -math.inf)


def kl_bern(p, q):
    return _xlogy(p, p) - _xlogy(p, q) + _xlogy(1 - p, 1 - p) - _xlogy(1 - p, 1 - q)


def kl_upper_bern(p, level):
    p = min(max(p, 0.0), 1.0)
    level = max(level, 0.0)
    lo, hi = p, min(1.0, p + math.sqrt(level / 2.0))
    for _ in range(STEPS):
        mid = (lo + hi) / 2.0
        if kl_bern(p, mid) > level:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2.0


def kl_lower_bern(p, level):
    p = min(max(p, 0.0), 1.0)
    level = max(level, 0.0)
    lo, hi = max(0.0, p - math.sqrt(level / 2.0)), p
    for _ in range(STEPS):
        mid = (lo + hi) / 2.0
        if kl_bern(p, mid) > level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def bounds(kind, family, sigma, mean, n, beta, side):
    """L (side 0) or U (side 1) of one arm: kind "hoeffding" (KK13 eq. (3)) or "kl"
    (eqs. (4)-(5))."""
    if family == "gaussian":  # both kinds: the same closed form, two evaluation orders
        if kind == "hoeffding":
            w = math.sqrt(2.0 * (sigma * sigma) * beta / n)
        else:
            w = math.sqrt(2.0 * (sigma * sigma) * (beta / n))
        return mean + w if side else mean - w
    if kind == "hoeffding":
        w = math.sqrt(beta / (2.0 * n))
        return mean + w if side else mean - w
    return kl_upper_bern(mean, beta / n) if side else kl_lower_bern(mean, beta / n)


def rate(name, stage, n, k, delta, alpha, k1):
    if name == "kk13":
        x = math.log(k1 * k * stage**alpha / delta)
        return x + math.log(x)
    return math.log(math.log(n) + 1.0) + math.log(1.0 / delta)


# ---------------------------------------------------------------- GLR (GK16 eq. (7))
def _z(family, sigma, n_a, mu_a, n_b, mu_b):
    """Z_{a,b} for mu_a >= mu_b (GK16 eq. (7))."""
    total = n_a + n_b
    if family == "gaussian":
        gap = mu_a - mu_b
        return (n_a * n_b / total) * (gap * gap) / (2.0 * sigma * sigma)
    mid = min(max((n_a * mu_a + n_b * mu_b) / total, mu_b), mu_a)
    return n_a * kl_bern(mu_a, mid) + n_b * kl_bern(mu_b, mid)


def glr_value(family, sigma, arms):
    means = [a.mean for a in arms]
    lead = min(range(len(arms)), key=lambda i: (-means[i], i))
    vals = []
    for j, a in enumerate(arms):
        if j == lead:
            continue
        if means[j] >= means[lead]:
            vals.append(0.0)
        else:
            vals.append(_z(family, sigma, arms[lead].n, means[lead], a.n, means[j]))
    return min(vals)


def glr_threshold(name, t, delta, k):
    if name == "practical":
        return math.log(math.log(t) + 1.0) + math.log(1.0 / delta)
    if name == "gk16":
        return math.log(2.0 * t) + math.log((k - 1) / delta)
    if name == "bounded":
        return 2.0 * math.log(1.0 + t / 2.0) + (
            math.log(1.0 / delta) + 2.0 + math.log(k - 1)
        )
    raise ValueError(f"reference has no threshold {name!r}")


# ------------------------------------------------------------------------- the policy
def lucb(inst, draws, *, kind, family, rate_name, stopping, threshold="practical"):
    k = inst.num_arms
    hp = inst.hp
    delta, eps = float(hp["delta"]), float(hp["epsilon"])
    alpha, k1 = float(hp["alpha"]), float(hp["k1"])
    sigma = float(hp["sigma"])
    arms, pulls = new_arms(k), []

    def pull(i):
        arms[i].add(float(inst.table[i, arms[i].n]))
        pulls.append(i)

    for i in range(k):  # initial pulls
        if len(pulls) == inst.budget:
            return pulls, _best(arms)
        pull(i)
    stage = 1
    while True:
        n = len(pulls)
        beta = rate(rate_name, stage, n, k, delta, alpha, k1)
        means = [a.mean for a in arms]
        h = min(range(k), key=lambda i: (-means[i], i))

        def bound(i, side):  # side 0: lower, 1: upper
            return bounds(kind, family, sigma, means[i], arms[i].n, beta, side)

        upper = {j: bound(j, 1) for j in range(k) if j != h}
        u = min(upper, key=lambda j: (-upper[j], j))
        if stage > 1:
            if stopping == "lucb":
                stop = upper[u] - bound(h, 0) <= eps
            else:
                z = glr_value(family, sigma, arms)
                stop = z > glr_threshold(threshold, n, delta, k)
            if stop:
                return pulls, h
        for i in (h, u):
            if len(pulls) == inst.budget:
                return pulls, _best(arms)
            pull(i)
        stage += 1


def _best(arms):
    means = [a.mean if a.n else -math.inf for a in arms]
    return min(range(len(arms)), key=lambda i: (-means[i], i))
