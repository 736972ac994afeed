"""MOSS reference (spec §2.4): horizon form (H = T) and anytime form (H = n + 1)."""

from __future__ import annotations

import math

from reference.regret.ucb import run_index_policy


def moss(inst, draws, tie_break="random", anytime=False):
    alpha = float(inst.hp["alpha"])
    horizon = None if anytime else float(inst.hp["horizon"])

    def index(a, n, k):
        h = n + 1 if anytime else horizon
        return a.mean + math.sqrt(alpha * max(math.log(h / (k * a.n)), 0.0) / a.n)

    return run_index_policy(inst, draws, tie_break, index)
