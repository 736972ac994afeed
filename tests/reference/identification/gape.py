"""References for GapE (spec §5.7) and GapE-V (spec §5.8), written from the spec text."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms
from reference.stats import first_max


def _gap(arms, k):
    """Delta_k = mean_k - max_{j != k} mean_j."""
    return arms[k].mean - max(arms[j].mean for j in range(len(arms)) if j != k)


def _run(inst, passes, index):
    k = inst.num_arms
    arms, pulls = new_arms(k), []
    for t in range(inst.budget):
        if t < passes * k:  # forced initial pulls, round robin in index order
            i = t % k
        else:
            i = first_max([index(arms, j) for j in range(k)])
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    return pulls, first_max([a_.mean if a_.n else -math.inf for a_ in arms])


def gape(inst, draws):
    a, b = float(inst.hp["a"]), float(inst.hp["b"])

    def index(arms, j):
        # b sqrt(a / n) evaluated as sqrt(a b^2 / n), as the JAX code does (no FMA)
        return -abs(_gap(arms, j)) + math.sqrt(a * (b * b) / arms[j].n)

    return _run(inst, 1, index)


def gape_v(inst, draws):
    a, b = float(inst.hp["a"]), float(inst.hp["b"])

    def index(arms, j):
        n, var = arms[j].n, arms[j].var_unbiased
        return (
            -abs(_gap(arms, j)) + math.sqrt(2 * a * var / n) + 7 * a * b / (3 * (n - 1))
        )

    return _run(inst, 2, index)
