"""Reference for SHVar (spec §5.5, AMB-16), from the spec text."""

from __future__ import annotations

import math

from reference.identification.sequential_halving import num_stages, run_stages


def shvar(inst, draws):
    var = [float(v) for v in draws.per_arm(inst.hp["variances"])]
    n_s = inst.budget // num_stages(inst.num_arms)

    def stage_pulls(active, local, stage):
        for _ in range(n_s):
            score = {i: var[i] / local[i].n if local[i].n else math.inf for i in active}
            best = max(score.values())
            tied = [i for i in active if score[i] == best]
            # ties: fewest stage pulls, then lowest index (see shvar.py docstring)
            yield min(tied, key=lambda i: (local[i].n, i))

    return run_stages(inst, stage_pulls)
