"""UCB-V reference (spec §2.3): E = zeta ln(t), t = n + 1, biased variance."""

from __future__ import annotations

import math

from reference.regret.ucb import run_index_policy


def ucbv(inst, draws, tie_break="random"):
    zeta, c, b = (float(inst.hp[k]) for k in ("zeta", "c", "b"))

    def index(a, n, k):
        e = zeta * math.log(n + 1)
        return a.mean + math.sqrt(2 * a.var_biased * e / a.n) + c * 3 * b * e / a.n

    return run_index_policy(inst, draws, tie_break, index)
