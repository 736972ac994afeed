"""References for Uniform, UA, APT and LSA (spec §4.2, §4.6-4.8)."""

from __future__ import annotations

import math

import jax

from reference.stats import arms as new_arms
from reference.stats import first_max, first_min


def _labels(arms, tau):
    return [a.n > 0 and a.mean >= tau for a in arms]


def uniform(inst, draws):
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        i = t % k
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    tau = inst.hp.get("threshold")
    if tau is None:
        return pulls, first_max([a.mean if a.n else -math.inf for a in arms])
    return pulls, _labels(arms, float(tau))


def ua(inst, draws):
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        i = int(jax.random.randint(draws.key_for_pull(t), (), 0, k))
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    return pulls, _labels(arms, float(inst.hp["threshold"]))


def _index_policy(inst, index):
    k, arms, pulls = inst.num_arms, new_arms(inst.num_arms), []
    for t in range(inst.budget):
        i = t if t < k else first_min([index(a) for a in arms])
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    return pulls, _labels(arms, float(inst.hp["threshold"]))


def apt(inst, draws):
    tau, eps = float(inst.hp["threshold"]), float(inst.hp["epsilon"])
    return _index_policy(inst, lambda a: math.sqrt(a.n) * (abs(a.mean - tau) + eps))


def lsa(inst, draws):
    tau, alpha = float(inst.hp["threshold"]), float(inst.hp["alpha"])
    return _index_policy(
        inst, lambda a: alpha * a.n * (a.mean - tau) ** 2 + 0.5 * math.log(a.n)
    )
