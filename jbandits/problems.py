"""Named problem instances of the papers (means, noise, threshold)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Problem(NamedTuple):
    name: str
    means: np.ndarray  # [K]
    stds: (
        np.ndarray | None
    )  # [K] standard deviations for Gaussian families, None: Bernoulli
    threshold: float | None
    source: str


def lsa_setup(number: int) -> Problem:
    """Tao et al. (NeurIPS 2019) §5, Bernoulli arms, theta = 0.5 (spec §9 "S001")."""
    if number == 1:
        means = np.r_[0.2 + 0.05 * np.arange(4), 0.45, 0.55, 0.65 + 0.05 * np.arange(4)]
    elif number == 2:
        means = 0.405 + np.arange(20) / 100.0
    elif number == 3:
        means = np.r_[np.full(5, 0.45), np.full(5, 0.505)]
    else:
        raise ValueError(f"number must be 1, 2 or 3 (the paper's Setups), got {number}")
    return Problem(f"lsa-setup{number}", means, None, 0.5, "Tao et al. 2019, Sec. 5")
