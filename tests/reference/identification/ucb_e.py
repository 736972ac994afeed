"""Reference for UCB-E (spec §5.1), written from the spec text."""

from __future__ import annotations

import math

from reference.stats import arms as new_arms
from reference.stats import first_max


def ucb_e(inst, draws):
    """B_i = mean_i + sqrt(a / n_i), +inf when n_i = 0; pull argmax B (first)."""
    k, a = inst.num_arms, float(inst.hp["a"])
    arms, pulls = new_arms(k), []
    for _ in range(inst.budget):
        index = [a_.mean + math.sqrt(a / a_.n) if a_.n else math.inf for a_ in arms]
        i = first_max(index)
        arms[i].add(inst.table[i, arms[i].n])
        pulls.append(i)
    return pulls, first_max([a_.mean if a_.n else -math.inf for a_ in arms])
