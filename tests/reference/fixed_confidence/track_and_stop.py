"""Reference: Track-and-Stop (spec §1; GK16 Sec. 3.1-3.2), one pull at a time.

Round robin over the K arms; then at every t (samples observed): stop if Chernoff's
``Z(t) > beta(t, delta)``; else

* D-Tracking: if some ``N_a < sqrt(t) - K/2``, the least pulled such arm; else, with a
  unique empirical best, ``argmax t w*_a - N_a``, and with a tied best the first tied
  best arm;
* C-Tracking: ``argmax D_a``, ``D = sum_{s >= K} v_s - N`` (the deficit after the round
  robin), ``v_s`` the projection of ``w*(mu_hat(s))`` on ``Sigma^eps_s``, ``eps_s =
  (K^2 + s)^{-1/2}/2`` (paper), or ``w*`` itself with D-Tracking's forced exploration
  (``projection=False``, the authors' code). A tied best: ``w`` uniform on the tied arms.

``w*`` comes from :func:`reference.fixed_confidence.tracking_tools.optimal_weights`,
rounded to a multiple of ``2^-20``. Ties of argmax/argmin: lowest index.

``lazy=True`` (Jedra & Proutière, NeurIPS 2020, lazy updates): the weights (uniform on
the tied best arms at a tie) are recomputed only at the decision times ``t >= u``,
``u`` starting at 0 and set to ``max(ceil(lambda t), t + 1)`` (``lambda t`` rounded to
float32, as the library computes it) at each update; D-Tracking then pulls ``argmax t
w_a - N_a`` after the forced exploration (no tied-best special case), C-Tracking sums the
kept weights as usual.
"""

from __future__ import annotations

import math

import numpy as np

from reference.fixed_confidence import tracking_tools as tt
from reference.stats import arms as new_arms


def weights(family, means):
    """``(unique, w)``: the rounded ``w*``, or uniform weights on the tied best arms."""
    top = max(means)
    tied = [a for a, m in enumerate(means) if m == top]
    if len(tied) > 1:
        return False, [1.0 / len(tied) if a in tied else 0.0 for a in range(len(means))]
    _, w = tt.optimal_weights(family, means)
    return True, [round(v * tt.GRID_SCALE) / tt.GRID_SCALE for v in w]


def undersampled(arms, t):
    k = len(arms)
    level = math.sqrt(t) - k / 2.0
    under = [a for a in range(k) if arms[a].n < level]
    return min(under, key=lambda a: (arms[a].n, a)) if under else None


def next_update(t: int, laziness: float) -> int:
    """``max(ceil(fl32(lambda) fl32(t)), t + 1)``: the lazy schedule's next time."""
    scaled = np.float32(laziness) * np.float32(t)
    return max(int(math.ceil(float(scaled))), t + 1)


def track_and_stop(inst, draws, *, family, threshold="practical", tracking="d",
                   projection=True, lazy=False):  # fmt: skip
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    laziness = float(inst.hp.get("laziness", 2.0))
    arms, pulls = new_arms(k), []
    deficit = [0.0] * k
    kept, update = None, 0  # lazy: the weights of the last update, the next time
    t = 0
    while True:
        if t < k:
            i = t
        else:
            z, leader, _ = tt.glr(family, arms, sigma)
            if z > tt.threshold(threshold, t, delta, k, family):
                break
            means = [a.mean for a in arms]
            if lazy:
                if t >= update:
                    kept, update = weights(family, means)[1], next_update(t, laziness)
                unique, w = True, kept
            else:
                unique, w = weights(family, means)
            under = undersampled(arms, t)
            if tracking == "d":
                if under is not None:
                    i = under
                elif unique:
                    i = tt.first_best([t * w[a] - arms[a].n for a in range(k)])
                else:
                    i = leader
            else:
                if projection:
                    w = tt.project(w, 0.5 / math.sqrt(k**2 + t))
                deficit = [deficit[a] + w[a] for a in range(k)]
                i = tt.first_best(deficit)
                if not projection and under is not None:
                    i = under
                deficit[i] -= 1.0
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    means = [a.mean for a in arms]
    return pulls, tt.first_best(means)
