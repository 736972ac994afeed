"""Data-dependent rounds of the elimination policies AugUCB and EUCBV, and the
elimination rule of UCB-Improved and EUCBV.

Both run rounds m = 0..M (M = :func:`jbandits.policies.blocks.schedules.num_rounds`) whose end is a
step count fixed when the round starts: when round m has ended (``t >= end``) and
``m <= M``, round m + 1 starts and ends ``|B| * n_{m+1}`` steps later, ``|B|`` the
surviving arms and ``n_{m+1}`` the per-arm allotment of the round (Mukherjee,
Naveen, Sudarsanam, Ravindran: AugUCB, IJCAI 2017, Algorithm 1; EUCBV,
arXiv:1711.03591, Algorithm 1). At most one round starts per step; the update is a
fixed-shape masked one (no loop).

:func:`eliminate` is UCB-Improved's rule (Auer and Ortner, "UCB revisited", Periodica
Mathematica Hungarica 61, 2010, Section 3), which EUCBV applies with its own widths
(Algorithm 1, step 2).
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jbandits.core.types import Array
from jbandits.policies.blocks import arms


def advance(
    m: Array,
    end: Array,
    t: Array,
    live: Array,
    last: Array,
    length: Callable[[Array], Array],
) -> tuple[Array, Array]:
    """``(m, end)`` after step ``t``: when ``live``, ``t >= end`` and ``m <= last``,
    round ``m + 1`` starts and ends at ``t + length(m + 1)`` (an int32 step count)."""
    bump = live & (t >= end) & (m <= last)
    m_new = m + bump.astype(m.dtype)
    return m_new, jnp.where(bump, t + length(m_new), end)


def eliminate(mean: Array, width: Array, active: Array) -> tuple[Array, Array]:
    """``(kept, lcb)``: the ``active`` arms whose upper bound ``mean_i + width_i``
    reaches the largest lower bound ``max_{j active} (mean_j - width_j)`` (equality
    keeps the arm), and the lower bounds ``lcb [K]`` (``-inf`` off ``active``).

    ``width`` is one number for every arm (UCB-Improved's ``sqrt(ln(T D_m^2) /
    (2 n_m))``) or ``[K]`` (EUCBV's variance-aware widths). If every bound is NaN
    nothing is kept: a caller that must keep an arm falls back on ``lcb``.
    """
    lcb = jnp.where(active, mean - width, -jnp.inf)
    return active & (mean + width >= jnp.max(lcb)), lcb


def opening(num_arms: int, arm_mask: Array) -> tuple[arms.ArmStats, Array, Array]:
    """``(stats, active, arm)`` at the start of an elimination in rounds (UCB-Improved,
    EUCBV): fresh statistics, every real arm active, and the first real arm to pull
    (the first pulls go to the real arms in index order)."""
    return arms.init_stats(num_arms), arm_mask, arms.round_robin(0, arm_mask)
