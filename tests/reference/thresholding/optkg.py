"""Opt-KG reference (spec §4.9): log-space R+ with scipy's betainc / betaln.

Ties: values of ln R+ within 1e-9 of the maximum are tied (first index), as in
jbandits.policies.thresholding.optkg (R+ takes equal values on distinct states).
"""

from __future__ import annotations

import math

from scipy.special import betainc, betaln


def log_r_plus(a, b, x):
    if x == 0.5:  # R+(a, b) = R+(b, a) at x = 1/2: evaluate one canonical order
        a, b = max(a, b), min(a, b)
    i = 1.0 - betainc(a, b, x)
    log_g = a * math.log(x) + b * math.log1p(-x) - betaln(a, b)
    g = math.exp(log_g)
    if i >= 0.5 and i - g / b >= 0.5:
        return log_g - math.log(a)
    if i < 0.5 and i + g / a < 0.5:
        return log_g - math.log(b)
    r1 = abs(i + g / a - 0.5) - abs(i - 0.5)
    r2 = abs(i - g / b - 0.5) - abs(i - 0.5)
    best = max(r1, r2)
    return math.log(best) if best > 0 else -math.inf


def optkg(inst, draws):
    x = float(inst.hp["threshold"])
    k = inst.num_arms
    post = [[float(inst.hp["prior_a"]), float(inst.hp["prior_b"])] for _ in range(k)]
    taken = [0] * k
    pulls = []
    for _ in range(inst.budget):
        values = [log_r_plus(a, b, x) for a, b in post]
        best = max(values)
        i = next(j for j, v in enumerate(values) if v >= best - 1e-9)  # tie tolerance
        y = inst.table[i, taken[i]]
        taken[i] += 1
        post[i][0] += y
        post[i][1] += 1 - y
        pulls.append(i)
    if x == 0.5:  # spec §4.9: for theta = 1/2 the rule I >= 1/2 is exactly a >= b
        return pulls, [a >= b for a, b in post]
    return pulls, [1.0 - betainc(a, b, x) >= 0.5 for a, b in post]
