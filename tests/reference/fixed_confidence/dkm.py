"""Reference: the Degenne-Koolen-Ménard game rule (NeurIPS 2019; AdaHedge vs best
response, optimistic gains, C-Tracking), one pull at a time, written from
``benchmarks/notes_fc_baselines.md`` §3 (loops over arms, no masks).

Initialisation: pull the first arm that is unpulled (Bernoulli: or has mean 0 or 1)
while there is one. Then at every ``t``: stop if Chernoff's ``Z(t) > beta(t, delta)``;
else the learner of ``i*`` (first empirical best) plays ``w``, nature answers with the
closest alternative ``k``, the learner incurs minus the optimistic gains, ``S += w`` and
the pull is the first ``argmin N - S``.
"""

from __future__ import annotations

import math

from reference.fixed_confidence import tracking_tools as tt
from reference.stats import arms as new_arms

GRID = 2.0**-20  # w enters the tracking rounded to this grid


def _unready(family, arm) -> bool:
    if arm.n == 0:
        return True
    return family == "bernoulli" and (arm.total == 0 or arm.total == arm.n)


def dkm(inst, draws, *, family, threshold="practical"):
    del draws
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    arms, pulls = new_arms(k), []
    losses = [[0.0] * k for _ in range(k)]
    scales = [0.01] * k
    tracked = None
    t = 0
    while True:
        waiting = [a for a in range(k) if _unready(family, arms[a])]
        if waiting:
            i = waiting[0]
        else:
            z, _, _ = tt.glr(family, arms, sigma)
            if z > tt.threshold(threshold, t, delta, k, family):
                break
            means = [a.mean for a in arms]
            best = tt.first_best(means)
            loss_row, scale = losses[best], scales[best]
            eta = math.log(k) / scale
            low = min(loss_row)
            u = [math.exp(-eta * (v - low)) for v in loss_row]
            w = [v / sum(u) for v in u]
            # nature's best response
            value, theta = [math.inf] * k, [0.0] * k
            for j in range(k):
                if j != best:
                    theta[j] = (w[best] * means[best] + w[j] * means[j]) / (
                        w[best] + w[j]
                    )
                    value[j] = w[best] * tt.divergence(
                        family, means[best], theta[j], sigma
                    ) + w[j] * tt.divergence(family, means[j], theta[j], sigma)
            near = tt.first_worst(value)
            lam = list(means)
            lam[best] = lam[near] = theta[near]
            # optimistic gains, AdaHedge's update
            gains = []
            for a in range(k):
                level = math.log(t) / arms[a].n
                up = tt.kl_upper(family, means[a], level, sigma)
                down = tt.kl_lower(family, means[a], level, sigma)
                gains.append(max(
                    tt.divergence(family, up, lam[a], sigma),
                    tt.divergence(family, down, lam[a], sigma),
                    level,
                ))  # fmt: skip
            loss = [-g for g in gains]
            new = [loss_row[a] + loss[a] for a in range(k)]

            def mix(row, eta=eta):
                low = min(row)
                return (
                    low
                    - math.log(sum(math.exp(-eta * (v - low)) for v in row) / k) / eta
                )

            mixed = mix(new) - mix(loss_row)
            scales[best] = scale + (sum(w[a] * loss[a] for a in range(k)) - mixed)
            losses[best] = new
            if tracked is None:
                tracked = [float(a.n) for a in arms]
            tracked = [tracked[a] + round(w[a] / GRID) * GRID for a in range(k)]
            i = tt.first_worst([arms[a].n - tracked[a] for a in range(k)])
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    return pulls, tt.first_best([a.mean if a.n else -math.inf for a in arms])
