"""Tie-breaking and read-out shared by the regret references (spec §1.5)."""

from __future__ import annotations

import jax
import numpy as np


def pick(candidates, score, tie_break, draws, t, best=max):
    """The candidate with the best ``score`` (``best`` = max or min).

    Ties: lowest index ("first") or the tied arm with the largest uniform of the draw
    made with the key of pull ``t`` ("random"; the draw covers all K_max padded arms,
    restricted to the real ones).
    """
    candidates = list(candidates)
    top = best(score[i] for i in candidates)
    tied = [i for i in candidates if score[i] == top]
    if tie_break == "first" or len(tied) == 1:
        return tied[0]
    u = draws.per_arm(
        np.asarray(jax.random.uniform(draws.key_for_pull(t), (draws.k_max,)))
    )
    return max(tied, key=lambda i: u[i])


def best_mean(arms, candidates):
    """Output: the pulled candidate with the largest empirical mean (first on ties)."""
    pulled = [i for i in candidates if arms[i].n > 0]
    return max(pulled, key=lambda i: arms[i].mean) if pulled else 0
