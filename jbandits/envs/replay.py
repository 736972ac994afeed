"""Replay table: the ``j``-th reward of arm ``i`` is ``table[i, j]``.

Used to feed JAX policies and plain-Python references the very same rewards (trace
equivalence) and to replay recorded data. A run must not pull any arm more often than
the table has columns; :func:`simulate` checks ``budget <= table.shape[-1]``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import numpy as np

from jbandits.core.types import Array, ArrayLike, Bandit, Key
from jbandits.core.validate import instance_values, is_concrete
from jbandits.envs import common as _common


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
    for name in ("table", "means", "stds"):  # as the builder checks them
        instance_values(name, _common.host(getattr(params, name)))
    if budget is not None and is_concrete(budget):
        most = int(np.max(jax.device_get(budget)))
        if most > params.table.shape[-1]:
            raise ValueError(
                f"budget {most} exceeds the replay table's {params.table.shape[-1]} "
                "columns: an arm could be pulled more often than the table records"
            )


REPLAY = _common.family(
    "replay", ReplayParams, _sample, check=_check, arm_axes={"table": 0}
)


def replay(
    table, *, means=None, stds=None, arm_mask=None
) -> tuple[Bandit, ReplayParams]:
    """Replay bandit: the ``j``-th pull of arm ``i`` returns ``table[i, j]``.

    The replication key is ignored, so every replication sees the same rewards. Used
    to feed a JAX policy and a plain-Python reference the very same rewards (the
    trace-equivalence tests) and to replay recorded data.

    Args:
      table: rewards ``[K, J]`` (or a stack of instances ``[N, K, J]``): ``J`` rewards
        per arm. A run must not pull an arm more than ``J`` times:
        :func:`jbandits.simulate` refuses a budget larger than ``J``;
        :func:`jbandits.run` does not check it (an index past ``J`` is clamped by
        JAX's gather and repeats the last column).
      means: true means ``[..., K]`` that metrics and regret use (default: the row
        means of ``table``).
      stds: true standard deviations ``[..., K]`` (default: the row standard
        deviations, ``ddof=0``). Only read by diagnostics; not checked for sign.
      arm_mask: optional boolean ``[..., K]``; False marks a padded arm (its row is
        never read). Default: all arms real.

    Returns:
      ``(REPLAY, ReplayParams)``: the reward family and the instance pytree.

    Raises:
      ValueError: if ``table`` is not finite, has fewer than 2 axes or fewer than 2
        arms; if ``means`` or ``stds`` are not finite or do not have the shape
        ``table.shape[:-1]``; or on a bad ``arm_mask`` (not boolean, wrong shape,
        fewer than 2 real arms).

    Example::

        table = np.array([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]])
        bandit, params = jbandits.envs.replay(table)   # means [0.75, 0.25]
        res = jbandits.run(jbandits.make("ucb1", num_arms=2), bandit, params,
                           jax.random.key(0), budget=4, horizon=4, record_arms=True)
    """
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
