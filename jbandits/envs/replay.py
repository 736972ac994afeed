"""Replay table: the ``j``-th reward of arm ``i`` is ``table[i, j]``.

Used to feed JAX policies and plain-Python references the very same rewards (trace
equivalence) and to replay recorded data. A run must not pull any arm more often than
the table has columns; :func:`simulate` checks ``budget <= table.shape[-1]``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from jbandits._validate import is_concrete
from jbandits.envs import _common
from jbandits.types import Array, ArrayLike, Bandit, Key


class ReplayParams(NamedTuple):
    table: Array  # [K, J] rewards
    means: Array  # [K] true means used by metrics (default: row means)
    stds: Array  # [K] true standard deviations (default: row std)
    arm_mask: Array  # [K] bool


def _sample(params: ReplayParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    del key
    return params.table[arm, pull_index]


def _check(params: ReplayParams, budget) -> None:
    _common.check_budget(budget)
    if budget is not None and is_concrete(budget):
        most = int(np.max(jax.device_get(budget)))
        if most > params.table.shape[-1]:
            raise ValueError(
                f"budget {most} exceeds the replay table's {params.table.shape[-1]} "
                "columns: an arm could be pulled more often than the table records"
            )


REPLAY = Bandit(
    sample=_sample,
    means=lambda p: p.means,
    stds=lambda p: p.stds,
    check=_check,
    name="replay",
)


def replay(
    table, *, means=None, stds=None, arm_mask=None
) -> tuple[Bandit, ReplayParams]:
    """Replay bandit over ``table[..., K, J]``."""
    table = _common.as_float_array("table", table)
    if table.ndim < 2:
        raise ValueError(f"table must have shape [K, J], got {table.shape}")
    if table.shape[-2] < 2:
        raise ValueError(f"table must describe K >= 2 arms, got shape {table.shape}")
    means = (
        table.mean(axis=-1) if means is None else _common.as_float_array("means", means)
    )
    stds = table.std(axis=-1) if stds is None else _common.as_float_array("stds", stds)
    _common.check_shapes("table rows", table[..., 0], "means", means)
    _common.check_shapes("table rows", table[..., 0], "stds", stds)
    mask = _common.make_mask(arm_mask, means.shape)
    return REPLAY, ReplayParams(table=table, means=means, stds=stds, arm_mask=mask)
