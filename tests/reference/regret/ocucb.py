"""OCUCB (2015, horizon-dependent) reference (spec §2.5): t = n + 1."""

from __future__ import annotations

import math

from reference.regret.ucb import run_index_policy


def ocucb(inst, draws, tie_break="random"):
    alpha, psi, horizon = (float(inst.hp[k]) for k in ("alpha", "psi", "horizon"))

    def index(a, n, k):
        return a.mean + math.sqrt(alpha / a.n * math.log(psi * horizon / (n + 1)))

    return run_index_policy(inst, draws, tie_break, index)
