"""Reference: Best Challenger (spec §1; GK16 Sec. 6, p. 13), one pull at a time.

Round robin over the K arms; then at every t: stop if Chernoff's ``Z(t) > beta(t,
delta)``; else the least pulled arm with ``N_a < sqrt(t) - K/2`` if any (D-Tracking's
forced exploration); else, with ``a`` the first empirical best and ``c`` the first
minimiser of ``Z_{a,c}``:

* "weights": ``a`` if ``N_a / (N_a + N_c) < w_a / (w_a + w_c)``, ``w`` the rounded
  ``w*`` (uniform on the tied best arms when the best is not unique), else ``c``;
* "divergences" (the authors' code): ``a`` if ``d(mu_a, m) > d(mu_c, m)`` with ``m``
  the pooled mean ``(S_a + S_c) / (N_a + N_c)``, else ``c``.
"""

from __future__ import annotations

from reference.fixed_confidence import tracking_tools as tt
from reference.fixed_confidence.track_and_stop import undersampled, weights
from reference.stats import arms as new_arms


def best_challenger(inst, draws, *, family, threshold="practical", rule="weights"):
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    arms, pulls = new_arms(k), []
    t = 0
    while True:
        if t < k:
            i = t
        else:
            z, a, c = tt.glr(family, arms, sigma)
            if z > tt.threshold(threshold, t, delta, k, family):
                break
            n_a, n_c = arms[a].n, arms[c].n
            if rule == "weights":
                _, w = weights(family, [x.mean for x in arms])
                play_a = n_a / (n_a + n_c) < w[a] / (w[a] + w[c])
            else:
                mid = (arms[a].total + arms[c].total) / (n_a + n_c)
                d_a = tt.divergence(family, arms[a].mean, mid, sigma)
                play_a = d_a > tt.divergence(family, arms[c].mean, mid, sigma)
            under = undersampled(arms, t)
            i = under if under is not None else (a if play_a else c)
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    return pulls, tt.first_best([x.mean for x in arms])
