"""Helpers shared by the Thompson / Bayes-UCB / KL-UCB / DMED references.

``pick_max`` resolves exact ties the way spec §1.5 describes: ``"first"`` takes the
lowest index; ``"random"`` takes, among the exact maximisers,
:func:`reference.regret._common.random_tied` with the decision's tie key.
"""

from __future__ import annotations

import math

import numpy as np

from reference.regret._common import random_tied
from reference.stats import first_max


def pick_max(values, tie_break: str, draws, key_tie=None) -> int:
    """Exact maximiser; ties by ``tie_break``."""
    values = [float(v) for v in values]
    if tie_break == "first":
        return first_max(values)
    top = max(values)
    return random_tied([i for i, v in enumerate(values) if v == top], key_tie)


def empirical_best(arms) -> int:
    """Arm with the largest empirical mean among pulled arms (lowest index on ties)."""
    return first_max([a.mean if a.n else -math.inf for a in arms])


def scatter(draws, values, fill: float) -> np.ndarray:
    """``[k_max]`` array holding ``values`` at the real arms and ``fill`` elsewhere."""
    full = np.full(draws.k_max, fill, dtype=np.float64)
    full[draws.real] = values
    return full
