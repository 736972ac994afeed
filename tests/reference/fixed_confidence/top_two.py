"""References: the top-two family with GLR or posterior stopping (spec §5-§7), one pull
at a time, written from Russo (2020) Algorithm 1, Shang et al. (2020) Algorithm 1 and
Jourdan & Degenne (2023) as spec §7 describes them.

Common frame: every arm once (round robin); then at every ``t`` (samples observed) stop
if Chernoff's ``Z(t) > beta(t, delta)`` ("glr"; recommend the first empirical best) or
``max_i alpha_i >= c`` ("posterior"; recommend the first ``argmax alpha``, SciPy's
quadrature); else the sampling rule.

The keys: the decision for pull ``t`` splits its key into ``coin, leader, second, extra
= jax.random.split(key, 4)``. ``coin``: ``u = uniform(coin) < beta`` samples the leader.
``leader``: the posterior sample ``theta`` (Beta draws replayed from the library
sampler's raw tries, as the Thompson reference does; Gaussian ``mean + (sigma /
sqrt(n)) z`` with ``z = normal(leader, (k_max,))`` restricted to the real arms).
``second``: TTTS's resample ``r`` uses ``fold_in(second, r)``; the TC challenger's tie
uses ``bits(second)`` (Lemire's multiply-shift over the tied arms). ``extra``: TTTS's
fallback uniform.
"""

from __future__ import annotations

import math
import sys
from functools import partial

import jax

from reference.fixed_confidence import tracking_tools as tt
from reference.fixed_confidence.uniform_glr import best_arm_probabilities
from reference.regret._bayes_common import scatter
from reference.regret._common import random_tied
from reference.regret.thompson import _beta
from reference.stats import arms as new_arms

TIE_ULPS = 64


@jax.jit
def _keys(key):
    k = jax.random.split(key, 4)
    return jax.random.uniform(k[0], ()), k[1], k[2], jax.random.uniform(k[3], ())


_fold = jax.jit(jax.random.fold_in)


@partial(jax.jit, static_argnums=1)
def _normal(key, k_max):
    return jax.random.normal(key, (k_max,))


def sample_posterior(family, key, arms, draws, sigma) -> list[float]:
    """One ``theta ~ Pi_n`` over the real arms (every arm pulled for Gaussian)."""
    if family == "bernoulli":
        a = scatter(draws, [1.0 + x.total for x in arms], 1.0)
        b = scatter(draws, [1.0 + (x.n - x.total) for x in arms], 1.0)
        return [float(v) for v in draws.per_arm(_beta(key, a, b))]
    z = draws.per_arm(_normal(key, draws.k_max))
    return [x.total / x.n + (sigma / math.sqrt(x.n)) * float(z[j]) for j, x in
            enumerate(arms)]  # fmt: skip


def _stops(family, stopping, arms, t, delta, k, sigma, level, threshold) -> bool:
    if stopping == "glr":
        z, _, _ = tt.glr(family, arms, sigma)
        return z > tt.threshold(threshold, t, delta, k, family)
    return max(best_arm_probabilities(family, arms, sigma)) >= level


def _recommend(family, stopping, arms, sigma) -> int:
    if stopping == "posterior" and all(a.n for a in arms):
        return tt.first_best(best_arm_probabilities(family, arms, sigma))
    return tt.first_best([a.mean if a.n else -math.inf for a in arms])


def transport_cost(family, arms, i, j, sigma) -> float:
    """``W_n(i, j)``: 0 if ``mu_j >= mu_i``, else ``Z_{i,j}`` (Shang et al. eq. (1))."""
    if arms[j].mean >= arms[i].mean:
        return 0.0
    return tt.pairwise_z(
        family, arms[i].n, arms[i].mean, arms[j].n, arms[j].mean, sigma
    )


def tc_challenger(family, arms, leader, sigma, tie_key) -> int:
    """``argmin_{j != leader} W_n(leader, j)``, ties (within ``TIE_ULPS`` ulps)
    uniformly at random."""
    others = [j for j in range(len(arms)) if j != leader]
    if not others:
        return leader
    costs = {j: transport_cost(family, arms, leader, j, sigma) for j in others}
    low = min(costs.values())
    # costs within 64 ulps (float64) of the minimum tie: equal in exact arithmetic
    # (e.g. log(27/4) from two different (N, mu)) need not be equal once rounded
    level = low * (1.0 + TIE_ULPS * sys.float_info.epsilon)
    return random_tied([j for j in others if costs[j] <= level], tie_key)


def _run(inst, choose, *, family, stopping, threshold):
    """The common frame; ``choose(t, arms) -> arm`` is the sampling rule."""
    k = inst.num_arms
    delta, sigma = float(inst.hp["delta"]), float(inst.hp.get("sigma", 1.0))
    level = float(inst.hp.get("confidence", 1.0 - delta))
    arms, pulls = new_arms(k), []
    t = 0
    while True:
        if t < k:
            i = t
        else:
            if _stops(family, stopping, arms, t, delta, k, sigma, level, threshold):
                break
            i = choose(t, arms)
        if len(pulls) == inst.budget:
            break
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
        t += 1
    return pulls, _recommend(family, stopping, arms, sigma)


def ttts(inst, draws, *, family, threshold="practical", stopping="glr",
         max_resamples=16, counters=None):  # fmt: skip
    """Russo's TTTS; after ``max_resamples`` failed resamples the challenger is drawn
    from ``alpha_j / sum_{k != I} alpha_k`` (first running sum above ``u`` times the
    total), or is the runner-up of ``theta`` when those ``alpha`` are all 0."""
    beta, sigma = float(inst.hp["beta"]), float(inst.hp.get("sigma", 1.0))

    def choose(t, arms):
        u, key_leader, key_second, u_extra = _keys(draws.key_for_pull(t))
        theta = sample_posterior(family, key_leader, arms, draws, sigma)
        leader = tt.first_best(theta)
        if float(u) < beta:
            return leader
        if counters is not None:
            counters["challenges"] += 1
        for r in range(max_resamples):
            again = sample_posterior(family, _fold(key_second, r), arms, draws, sigma)
            if counters is not None:
                counters["resamples"] += 1
            j = tt.first_best(again)
            if j != leader:
                return j
        if counters is not None:
            counters["fallbacks"] += 1
        alpha = best_arm_probabilities(family, arms, sigma)
        others = [j for j in range(len(arms)) if j != leader]
        total = sum(alpha[j] for j in others)
        if total <= 0.0:
            return tt.first_best(theta, others)
        level, running = float(u_extra) * total, 0.0
        live = [j for j in others if alpha[j] > 0.0]
        for j in live:
            running += alpha[j]
            if running > level:
                return j
        return live[-1]

    return _run(inst, choose, family=family, stopping=stopping, threshold=threshold)


def t3c(inst, draws, *, family, threshold="practical", stopping="glr"):
    """Shang et al.'s T3C: Thompson leader, ``argmin W`` challenger (random ties)."""
    beta, sigma = float(inst.hp["beta"]), float(inst.hp.get("sigma", 1.0))

    def choose(t, arms):
        u, key_leader, key_second, _ = _keys(draws.key_for_pull(t))
        theta = sample_posterior(family, key_leader, arms, draws, sigma)
        leader = tt.first_best(theta)
        if float(u) < beta:
            return leader
        return tc_challenger(family, arms, leader, sigma, key_second)

    return _run(inst, choose, family=family, stopping=stopping, threshold=threshold)


def wbar_minus1(x: float) -> float:
    """``-W_{-1}(-e^{-x})``: the root ``y >= 1`` of ``y - log y = x`` (8 Newton steps
    from ``x + log x``; a test checks it against SciPy's Lambert W)."""
    y = x + math.log(x) if x > 1.0 else 1.0
    for _ in range(8):
        y = y - (y - math.log(y) - x) / (1.0 - 1.0 / y)
    return y


def ttucb(inst, draws, *, family, threshold="practical", target="tracking"):
    """Jourdan & Degenne's TTUCB: UCB leader with ``g_m(n)``, ``n = t + 1``; TC
    challenger (random ties); tracking ``N^B_B <= beta L_B`` or the coin."""
    beta, sigma = float(inst.hp["beta"]), float(inst.hp.get("sigma", 1.0))
    s, alpha = float(inst.hp.get("s", 1.2)), float(inst.hp.get("alpha", 1.2))
    leads = [0] * inst.num_arms  # times each arm was the leader
    lead_pulls = [0] * inst.num_arms  # times it was pulled as the leader

    def choose(t, arms):
        u, _, key_second, _ = _keys(draws.key_for_pull(t))
        log_n = math.log(t + 1)
        g = wbar_minus1(
            2.0 * s * alpha * log_n + 2.0 * math.log(2.0 + alpha * log_n) + 2.0
        )
        ucb = [tt.kl_upper(family, a.mean, g / a.n, sigma) for a in arms]
        leader = tt.first_best(ucb)
        challenger = tc_challenger(family, arms, leader, sigma, key_second)
        if target == "tracking":
            play = lead_pulls[leader] <= beta * (leads[leader] + 1)
        else:
            play = float(u) < beta
        leads[leader] += 1
        lead_pulls[leader] += int(play)
        return leader if play else challenger

    return _run(inst, choose, family=family, stopping="glr", threshold=threshold)
