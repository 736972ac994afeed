"""Reference: Frank-Wolfe Sampling (Wang, Tzeng & Proutière, NeurIPS 2021), one pull at
a time, written from ``benchmarks/notes_fc_baselines.md`` §2 (loops over arms, no
masks).

Every arm once (round robin), ``x = (1/K, ..., 1/K)``; then at every ``t`` (samples
observed): stop if Chernoff's ``Z(t) > beta(t, delta)``; else ``z`` = uniform (forced:
``floor(t/K)`` a perfect square, or a tie for the empirical best), the vertex of the
single near-active row, or the matrix game's solution by bisection on its value;
``x <- x (t-1)/t + z/t``; pull the first ``argmax_i x_i / (N_i / t)``.
"""

from __future__ import annotations

import math

from reference.fixed_confidence import tracking_tools as tt
from reference.stats import arms as new_arms

GRID = 2.0**-20
ITERS = 64  # float64 bisection steps on the game's value


def needed(s, w, a, b, c, rows) -> float:
    """``s + sum_{j in rows} max(w + c_j - s a_j, 0) / b_j``."""
    total = 0.0
    for j in rows:
        total += max(w + c[j] - s * a[j], 0.0) / b[j]
    return s + total


def candidates(w, a, c, rows, k) -> list[float]:
    out = [0.0, 1.0]
    for j in range(k):
        out.append(min(max((w + c[j]) / a[j], 0.0), 1.0) if j in rows else 0.0)
    return out


def game(a, b, c, rows, k):
    """``(z_rows, z_star)`` of ``max_z min_{j in rows} z_* a_j + z_j b_j - c_j``."""
    lo = min(a[j] - c[j] for j in rows)
    hi = min(max(a[j], b[j]) - c[j] for j in rows)
    for _ in range(ITERS):
        mid = (lo + hi) / 2.0
        if (
            min(needed(s, mid, a, b, c, rows) for s in candidates(mid, a, c, rows, k))
            <= 1.0
        ):
            lo = mid
        else:
            hi = mid
    w = lo
    cand = candidates(w, a, c, rows, k)
    feasible = [s for s in cand if needed(s, w, a, b, c, rows) <= 1.0 + GRID]
    s = max(feasible) if feasible else 1.0
    z = [0.0] * k
    for j in rows:
        z[j] = round((max(w + c[j] - s * a[j], 0.0) / b[j]) / GRID) * GRID
    return z, max(1.0 - sum(z), 0.0)


def direction(family, arms, x, t, sigma) -> list[float]:
    k = len(arms)
    means = [a.mean for a in arms]
    best = tt.first_best(means)
    others = [j for j in range(k) if j != best]
    root = math.isqrt(t // k)
    if any(means[best] - means[j] <= 0.0 for j in others) or root * root == t // k:
        return [1.0 / k] * k
    a, b, f = [0.0] * k, [0.0] * k, [0.0] * k
    for j in others:
        gap = means[best] - means[j]
        total = x[best] + x[j]
        up, down = gap * (x[j] / total), gap * (x[best] / total)
        if family == "gaussian":
            a[j] = up * up / (2.0 * sigma * sigma)
            b[j] = down * down / (2.0 * sigma * sigma)
        else:
            mid = means[j] + down  # mu_best - mid = up, mid - mu_j = down
            a[j] = tt.divergence(family, means[best], mid, sigma)
            b[j] = tt.divergence(family, means[j], mid, sigma)
        f[j] = x[best] * a[j] + x[j] * b[j]
    low = min(f[j] for j in others)
    r = float(t) ** -0.9 / k
    rows = [j for j in others if f[j] < low + r]
    z = [0.0] * k
    if len(rows) == 1:
        j = rows[0]
        tie = abs(a[j] - b[j]) <= GRID * max(a[j], b[j])
        star_first = best < j if tie else a[j] > b[j]
        z[best if star_first else j] = 1.0
        return z
    z, z_star = game(a, b, f, rows, k)
    z[best] += z_star
    return z


def fws(inst, draws, *, family, threshold="practical"):
    del draws
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    arms, pulls = new_arms(k), []
    x = [1.0 / k] * k
    t = 0
    while True:
        if t < k:
            i = t
        else:
            z_stat, _, _ = tt.glr(family, arms, sigma)
            if z_stat > tt.threshold(threshold, t, delta, k, family):
                break
            z = direction(family, arms, x, t, sigma)
            x = [x[j] * ((t - 1.0) / t) + z[j] / t for j in range(k)]
            ratio = [x[j] / (arms[j].n / t) for j in range(k)]
            i = tt.first_best([round(v / GRID) * GRID for v in ratio])
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    return pulls, tt.first_best([a.mean if a.n else -math.inf for a in arms])
