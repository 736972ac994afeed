"""Helpers shared by the Thompson / Bayes-UCB / KL-UCB / DMED references.

``pick_max`` resolves exact ties the way spec §1.5 describes: ``"first"`` takes the
lowest index; ``"random"`` takes, among the exact maximisers, the one with the largest
``U(0,1)`` draw (draws made in padded numbering with the decision's tie key, then
restricted to the real arms).
"""

from __future__ import annotations

import math
from functools import partial

import jax
import numpy as np

from reference.stats import first_max


@partial(jax.jit, static_argnums=1)
def _uniform(key, k_max):
    return jax.random.uniform(key, (k_max,))


def pick_max(values, tie_break: str, draws, key_tie=None, u_tie=None) -> int:
    """Exact maximiser; ties by ``tie_break`` (``u_tie``: tie uniforms if already drawn)."""
    values = [float(v) for v in values]
    if tie_break == "first":
        return first_max(values)
    top = max(values)
    if u_tie is None:
        u_tie = _uniform(key_tie, draws.k_max)
    u = draws.per_arm(u_tie)
    tied = [i for i, v in enumerate(values) if v == top]
    return max(tied, key=lambda i: (u[i], -i))


def empirical_best(arms) -> int:
    """Arm with the largest empirical mean among pulled arms (lowest index on ties)."""
    return first_max([a.mean if a.n else -math.inf for a in arms])


def scatter(draws, values, fill: float) -> np.ndarray:
    """``[k_max]`` array holding ``values`` at the real arms and ``fill`` elsewhere."""
    full = np.full(draws.k_max, fill, dtype=np.float64)
    full[draws.real] = values
    return full
