"""Reference for SHAdaVar (spec §5.6, AMB-17, TV-6), from the spec text."""

from __future__ import annotations

import math

from reference.identification.sequential_halving import num_stages, run_stages
from reference.stats import first_max


def shadavar(inst, draws):
    delta = float(inst.hp["delta"])
    log_inv = math.log(1.0 / delta)
    n0 = math.floor(4 * log_inv) + 2
    n_s = inst.budget // num_stages(inst.num_arms)

    def score(arm):
        den = 1 - 2 * math.sqrt(log_inv / (arm.n - 1))
        upper = arm.var_unbiased / den if den > 0 else math.inf
        return upper / arm.n

    def stage_pulls(active, local, stage):
        for c in range(1, n_s + 1):
            if c <= len(active) * n0:
                yield active[(c - 1) % len(active)]
            else:
                yield active[first_max([score(local[i]) for i in active])]

    return run_stages(inst, stage_pulls)
