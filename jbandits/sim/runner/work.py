"""The work of an :func:`~jbandits.sim.runner.execute` call: cells x replications.

:class:`Lanes` describes it on the host; :func:`key_data` and :func:`instance_keys`
give its keys; :func:`per_cell` and :func:`_check_numbers` give every numeric argument
per cell and check it; :class:`Work` lays the lanes out in run order and gathers the
arguments of a chunk of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import registry
from jbandits.core.prng import key_data
from jbandits.core.types import Key, Policy
from jbandits.sim.runner.programs import Source, storable


@dataclass
class Lanes:
    """Host-side description of the work: ``num_cells`` cells x ``num_reps`` lanes.

    Attributes:
      hp: numeric policy arguments, a dict of pytrees with leaves ``[num_cells, ...]``.
      params: instance pytree with leaves ``[num_instances, ...]`` (except the fields
        named in ``shared``, one array for all instances).
      instance: ``[num_cells]`` int, the instance of each cell.
      budget: ``[num_cells]`` int budgets.
      keys: ``[num_cells, 2]`` uint32 key data, each cell's key.
      num_reps: replications per cell.
      horizon: ``[num_cells]`` int checkpoint horizons (default: the budgets).
      fold_reps: lane key ``fold_in(cell key, rep)``; False: the cell key itself
        (needs ``num_reps == 1``).
    """

    hp: dict
    params: Any
    instance: np.ndarray
    budget: np.ndarray
    keys: np.ndarray
    num_reps: int
    shared: tuple = ()
    fold_reps: bool = True
    horizon: np.ndarray | None = None

    @property
    def num_cells(self) -> int:
        return int(self.budget.shape[0])

    @property
    def num_lanes(self) -> int:
        return self.num_cells * self.num_reps


def instance_keys(key: Key, num_instances: int) -> np.ndarray:
    """Key data of ``fold_in(key, n)`` for n < ``num_instances``."""
    k = jax.random.wrap_key_data(jnp.asarray(key_data(key)))
    return np.asarray(
        jax.random.key_data(
            jax.vmap(lambda n: jax.random.fold_in(k, n))(jnp.arange(num_instances))
        )
    )


def _check_numbers(source: Source, hp: dict, num_cells: int) -> str:
    """Reject NaN/inf numbers, then build the policy on the host once per distinct
    row of numbers, so that its own checks (ranges, signs) see concrete values —
    inside the compiled program they are traced and cannot raise. Returns the name
    to show for the work: the source's, or for an anonymous factory (a lambda) the
    registered name of the policy it builds."""
    optional = registry.optional_numbers(source.ident[1]) if storable(source) else ()
    for path, leaf in jax.tree_util.tree_flatten_with_path(hp)[0]:
        leaf = np.asarray(leaf)
        if getattr(path[0], "key", None) in optional:
            continue  # NaN: not given (jbandits.core.numbers.NOT_GIVEN)
        if leaf.dtype.kind == "f" and not np.all(np.isfinite(leaf)):
            bad = np.flatnonzero(~np.isfinite(leaf).reshape(num_cells, -1).all(-1))
            raise ValueError(
                f"{jax.tree_util.keystr(path)} must be finite, got "
                f"{leaf.reshape(num_cells, -1)[bad[0]]} (cell {bad[0]})"
            )
    name = source.name if source.name not in ("", "<lambda>") else None
    if isinstance(source.ident, Policy) or not hp:
        return name or source.name or "policy"
    leaves, treedef = jax.tree_util.tree_flatten(hp)
    seen = set()
    for cell in range(num_cells):
        row = [np.asarray(x)[cell] for x in leaves]
        sig = b"".join(r.tobytes() for r in row)
        if sig in seen:
            continue
        seen.add(sig)
        memo = _memo_key(source, treedef, row, sig)
        if memo is not None and memo in _CHECKED:
            built_name = _CHECKED[memo]
        else:
            kw = jax.tree_util.tree_unflatten(treedef, row)
            try:
                built = source.policy(kw)
            except ValueError as err:
                raise ValueError(f"{source.name}, cell {cell}: {err}") from err
            built_name = getattr(getattr(built, "spec", None), "name", None)
            if memo is not None:
                if len(_CHECKED) >= 4096:
                    _CHECKED.clear()
                _CHECKED[memo] = built_name
        if name is None and built_name is not None:
            name = built_name
        if len(seen) >= 4096:  # enough to catch bad grids; the rest is traced
            break
    return name or source.name or "policy"


# numbers already built on the host without error: (source, tree, row) -> the built
# policy's registered name. Repeated calls (notebooks, tuning, benchmarks) then skip
# the host build; the checks are a function of the source and the numbers only.
_CHECKED: dict = {}


def _memo_key(source: Source, treedef, row: list, sig: bytes):
    """The memo key of one row of numbers, or None (an unhashable source)."""
    shapes = tuple((r.dtype.str, r.shape) for r in row)
    key = (source, treedef, shapes, sig)
    try:
        hash(key)
    except TypeError:
        return None
    return key


def _per_cell(x, num_cells: int):
    x = np.asarray(x)
    if x.ndim == 0 or x.shape[0] != num_cells:
        return np.broadcast_to(x, (num_cells, *x.shape))
    return x


def per_cell(hp: dict, num_cells: int) -> dict:
    """Every numeric argument with a leading cell axis (scalars given once broadcast)."""
    return jax.tree_util.tree_map(lambda x: _per_cell(x, num_cells), hp)


class Work:
    """The lanes of a call laid out for chunks: lane ``i`` is replication
    ``i % reps`` of cell ``order[i // reps]`` (cells ordered by budget by default, so
    a chunk stops at its own largest budget). One instance is passed unbatched (a
    constant of every lane, not a gather)."""

    def __init__(self, lanes: Lanes, hp: dict, order: np.ndarray | None):
        self.lanes = lanes
        self.hp = hp  # leaves [num_cells, ...] (per_cell)
        self.reps = lanes.num_reps
        self.total = lanes.num_lanes
        shared, params = lanes.shared, lanes.params
        batched = [f for f in params._fields if f not in shared]
        if batched and np.shape(getattr(params, batched[0]))[0] == 1:
            params = params._replace(
                **{f: np.asarray(getattr(params, f))[0] for f in batched}
            )
            shared, batched = tuple(params._fields), []
        self.params, self.shared, self.batched = params, shared, batched
        self.order = np.argsort(lanes.budget, kind="stable") if order is None else order
        horizons = lanes.budget if lanes.horizon is None else lanes.horizon
        self.horizons = np.broadcast_to(np.asarray(horizons), (lanes.num_cells,))

    @property
    def shape(self) -> tuple[int, int]:
        """(cells, replications): the leading axes of the results."""
        return self.lanes.num_cells, self.reps

    def placement(self, lane_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(cell, replication) of each lane."""
        return self.order[lane_ids // self.reps], lane_ids % self.reps

    def gather(self, lane_ids: np.ndarray) -> tuple:
        """The compiled program's arguments for ``lane_ids``: (numbers, instances,
        key data, replication, budget, horizon), each with a leading lane axis (but
        for the shared instance fields)."""
        lanes, params = self.lanes, self.params
        cells, rep = self.placement(lane_ids)
        h = jax.tree_util.tree_map(lambda x: x[cells], self.hp)
        inst = lanes.instance[cells]
        p = params._replace(
            **{f: np.asarray(getattr(params, f))[inst] for f in self.batched}
        )
        return (
            h,
            p,
            lanes.keys[cells],
            rep.astype(np.int32),
            lanes.budget[cells].astype(np.int32),
            self.horizons[cells].astype(np.int32),
        )
