""":func:`sweep`: a policy over a grid of traced hyper-parameter points x instances x
replications, compiled once; :func:`product_grid` builds such a grid."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jbandits.core import validate as _validate
from jbandits.core.reward_model import is_fixed_confidence, of_policy
from jbandits.core.types import Bandit, Key
from jbandits.sim import checks as _checks
from jbandits.sim import entry as _entry
from jbandits.sim import runner
from jbandits.sim.engine import RunResult
from jbandits.sim.runner.results import warn_capped


def product_grid(**axes) -> dict:
    """Cartesian product of 1-D value lists -> dict of flat arrays ``[P]``.

    Raises:
      ValueError: an axis that is not a non-empty 1-D list.
    """
    names = list(axes)
    values = []
    for n in names:
        v = np.asarray(axes[n])
        if v.ndim != 1 or v.size == 0:
            raise ValueError(
                f"grid axis {n!r} must be a non-empty 1-D list, got {axes[n]!r}"
            )
        values.append(v)
    mesh = np.meshgrid(*values, indexing="ij")
    return {n: m.reshape(-1) for n, m in zip(names, mesh, strict=True)}


def sweep(
    make_policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    grid: dict,
    num_reps: int,
    horizon: int,
    budget: Any = None,
    num_checkpoints: int = 1,
    metric: Any = "auto",
    permute: bool = True,
    progress: bool | None = None,
    diagnostics: bool = False,
    batch_size: int | None = None,
    memory_budget: int | None = None,
    store=None,
    report: runner.Report | None = None,
    check_model: bool = True,
    fixed: dict | None = None,
    return_state: bool = False,
    min_lanes: int | None = None,
) -> RunResult:
    """Hyper-parameters (and budgets) x instances x replications, compiled once.

    Args:
      make_policy: ``(**hp) -> Policy`` called inside the compiled function with
        traced scalars ``hp`` (the optax closure pattern), a registered name
        (its numeric arguments come from ``grid``), or a
        :class:`jbandits.sim.runner.Source` (built with ``grid``'s numbers; the
        tuner's relaxed policies).
      bandit, params: reward family and instance(s); ``params.arm_mask`` ``[N, K]``
        for padded instances (:func:`jbandits.envs.pad_arms`).
      key: experiment key; every grid point uses the same replication keys (common
        random numbers), instance ``n`` of a stack uses ``fold_in(key, n)``.
      grid: dict of 1-D arrays with a common length P (see :func:`product_grid`);
        a ``"budget"`` entry is also each point's engine budget.
      num_reps: replications per (point, instance).
      horizon: checkpoint spacing (>= every budget); traced.
      budget: the budget when ``grid`` has none.
      metric: as in :func:`simulate`; ``"auto"`` (default) is the policy's default
        metric at every grid point, which must be the same one (a sweep over
        thresholds needs an explicit ``metric``).
      num_checkpoints, permute, batch_size, memory_budget, progress, diagnostics, store, report:
        as in :func:`simulate`.
      check_model: as in :func:`simulate`, at every distinct grid point (a grid
        over ``sigma`` is checked point by point).
      fixed: keyword arguments that every point shares (not also in ``grid``): a
        registered name's static (structural) ones fix the compiled program, its
        numbers (and all of a factory's) are every point's traced numbers.
      return_state: also return every run's final policy state (``res.state``).
      min_lanes: pad the work to at least this many lanes with copies of the first
        (point, instance) cell, whose results are dropped (not with ``store``): with
        a fixed ``batch_size``, calls over few or many points then run the same
        chunk shape, compiled once (:mod:`jbandits.tuning` sweeps varying numbers of
        points this way; :func:`jbandits.sim.runner.choose_chunk` shrinks the chunk
        to a smaller work).

    Returns:
      RunResult with leaves ``[P, N, R, ...]`` (``[P, R, ...]`` for one instance);
      capped runs of a fixed-confidence policy are warned about as in
      :func:`simulate`.

    Raises:
      ValueError: grid entries that are not 1-D of one length, a missing budget, ...
    """
    num_reps, num_checkpoints = _checks.counts(num_reps, num_checkpoints)
    horizon = _checks.static_horizon(horizon)
    _checks.checkpoint_times(num_checkpoints, horizon)
    key_host = _checks.one_key(key)
    arrays, num_points = _checks.grid_arrays(grid)
    arrays, static = _fixed(make_policy, fixed, arrays, num_points)
    min_lanes = _min_lanes(min_lanes, store)
    if "budget" not in arrays and budget is None:
        raise ValueError("give budget, or a 'budget' entry in grid")
    mask = _checks.mask(params)
    num_inst = mask.shape[0] if mask.ndim == 2 else 1
    point_budget = _checks.budget_array("budget", arrays.get("budget", budget))
    point_budget = np.broadcast_to(point_budget, (num_points,))
    real = mask.reshape(num_inst, -1).sum(-1)
    cell_budget = np.repeat(point_budget, num_inst)
    cell_inst = np.tile(np.arange(num_inst), num_points)
    _checks.cells(bandit, params, cell_budget, real[cell_inst], horizon)
    arrays, metric, first = _policy_checks(
        make_policy, arrays, num_points, metric, diagnostics, mask.shape[-1],
        point_budget, cell_budget, real[cell_inst], static,
    )  # fmt: skip
    build = _build(make_policy, mask.shape[-1], int(point_budget[0]), static)
    _model_checks(build, arrays, num_points, first, bandit, params, check_model)
    hp = jax.tree_util.tree_map(lambda v: np.repeat(v, num_inst, axis=0), arrays)
    keys, inst_params = _entry.instance_inputs(
        key_host, params, mask.ndim == 2, num_inst
    )
    keys = np.tile(keys, (num_points, 1))
    if isinstance(make_policy, str):  # a registered name: numbers from the grid
        make_policy = runner.registered(
            make_policy, {**static, "num_arms": mask.shape[-1]}
        )
        hp.update(
            _entry.prepared(
                make_policy, hp, mask.shape[-1], real[cell_inst], cell_budget
            )
        )
    source = runner.source_of(make_policy)[0]
    store = _entry.open_store(
        store,
        source,
        code=None if store is None else runner.code_of([source], bandit),
        policy=(source.ident, source.static),
        hp=hp,
        bandit=bandit.name,
        params=params,
        key=key,
        budget=cell_budget,
        run=(num_reps, horizon, num_checkpoints, repr(metric), permute)
        + ((True,) if diagnostics else ()),
    )
    num_cells = cell_budget.shape[0]
    pad = 0 if min_lanes is None else max(0, -(-min_lanes // num_reps) - num_cells)
    inputs = _padded((hp, cell_inst, cell_budget, keys), num_cells, pad)
    lane_hp, lane_inst, lane_budget, lane_keys = inputs
    lanes = _entry.lanes(
        lane_hp, inst_params, lane_budget, lane_keys, num_reps, horizon,
        instance=lane_inst,
    )  # fmt: skip
    opts = runner.Options(
        num_checkpoints=num_checkpoints, metric=metric, permute=permute,
        diagnostics=diagnostics, return_state=return_state,
    )  # fmt: skip
    lead = (num_points, *((num_inst,) if mask.ndim == 2 else ()), num_reps)
    call = dict(
        progress=progress, report=report, batch_size=batch_size,
        memory_budget=memory_budget,
    )  # fmt: skip
    job = runner.Job(bandit, (runner.Part(source, lanes),), opts, store, call)
    (flat,) = runner.run(job)
    if pad:
        flat = {k: v if k.startswith("_") else v[:num_cells] for k, v in flat.items()}
    res = runner.to_result(flat, lead)
    if is_fixed_confidence(first):
        each = np.reshape(cell_budget, lead[:-1] + (1,))
        warn_capped("sweep", first.spec.name, res.stopped, each)
    return res


def _min_lanes(min_lanes, store):
    """``min_lanes`` checked (a whole number >= 1, not with a store), or None."""
    if min_lanes is None:
        return None
    min_lanes = _validate.static_int("min_lanes", min_lanes, minimum=1)
    if store is not None:
        raise ValueError("min_lanes pads the work with dropped lanes: not with store")
    return min_lanes


def _padded(inputs, num_cells: int, pad: int):
    """The cells' inputs with ``pad`` copies of cell 0 appended (dropped after the
    run)."""
    if not pad:
        return inputs
    rows = np.zeros(num_cells + pad, np.int64)
    rows[:num_cells] = np.arange(num_cells)
    return jax.tree_util.tree_map(lambda x: np.asarray(x)[rows], inputs)


def _fixed(make_policy, fixed, arrays: dict, num_points: int):
    """``(grid, static)``: ``fixed``'s numbers added to the grid (every point's),
    and a registered name's static arguments."""
    if fixed is None:
        return arrays, {}
    if not isinstance(fixed, dict):
        raise ValueError(f"fixed must be a dict of keyword arguments, got {fixed!r}")
    both = sorted(set(fixed) & set(arrays))
    if both:
        raise ValueError(f"{both} both in fixed and in grid: give each in one of them")
    static, numbers = {}, dict(fixed)
    if isinstance(make_policy, str):
        static, numbers = runner.registry.split_kwargs(numbers, make_policy)
    wide = {
        k: np.broadcast_to(np.asarray(v), (num_points, *np.shape(v)))
        for k, v in numbers.items()
    }
    return {**wide, **arrays}, static


def _build(make_policy, num_arms: int, budget: int, static: dict):
    """``point -> Policy``: the policy at one grid point, built on the host."""
    if isinstance(make_policy, str):
        return lambda p: _entry.host_policy(
            make_policy, num_arms, {**static, **p}, budget
        )
    if isinstance(make_policy, runner.Source):
        return make_policy.policy
    return lambda p: make_policy(**p)


def _model_checks(build, arrays, num_points, first, bandit, params, check):
    """The reward model of the policy at every distinct grid point fits the
    instances (:func:`jbandits.sim.checks.reward_model`); only a policy whose first
    point declares a model is built at the others."""
    _checks.reward_model([first], bandit, [params], check)
    if not check or of_policy(first) is None or num_points == 1:
        return
    others = _entry.points(arrays, num_points)[1:]
    _checks.reward_model([build(p) for p in others], bandit, [params], check)


def _policy_checks(
    make_policy,
    arrays,
    num_points,
    metric,
    diagnostics,
    num_arms,
    point_budget,
    cell_budget,
    cell_real,
    static,
):
    """Build the policy on the host at the grid's distinct points (every point for
    ``metric="auto"``, else the first) and check it against the metric, the
    diagnostics and the cells' budgets. Returns the grid (less a ``budget`` entry
    that a registered policy does not take: the engine's budget only), the metric
    and the policy at the first point."""
    registered = isinstance(make_policy, str)
    if (
        registered
        and "budget" in arrays
        and "budget" not in _entry.accepted(make_policy)
    ):  # the engine's budget only
        arrays = {k: v for k, v in arrays.items() if k != "budget"}
    points = _entry.points(arrays, num_points if _checks.is_auto(metric) else 1)
    if registered:
        runner.registry.check_kwargs(make_policy, points[0])
    build = _build(make_policy, num_arms, int(point_budget[0]), static)
    built = [build(p) for p in points]
    if _checks.is_auto(metric):
        metric = _checks.one_metric(built)
    _checks.metric(metric)
    _checks.use(built[0], metric, diagnostics)
    spec = getattr(built[0], "spec", None)
    if spec is not None:
        runner.registry.check_budgets(
            spec.name, dict(spec.kwargs), cell_budget, cell_real
        )
    return arrays, metric, built[0]
