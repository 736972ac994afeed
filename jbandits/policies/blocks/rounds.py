"""Data-dependent rounds of the elimination policies AugUCB and EUCBV.

Both run rounds m = 0..M (M = :func:`jbandits.policies.blocks.schedules.num_rounds`) whose end is a
step count fixed when the round starts: when round m has ended (``t >= end``) and
``m <= M``, round m + 1 starts and ends ``|B| * n_{m+1}`` steps later, ``|B|`` the
surviving arms and ``n_{m+1}`` the per-arm allotment of the round (Mukherjee,
Naveen, Sudarsanam, Ravindran: AugUCB, IJCAI 2017, Algorithm 1; EUCBV,
arXiv:1711.03591, Algorithm 1). At most one round starts per step; the update is a
fixed-shape masked one (no loop).
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jbandits.core.types import Array


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
