"""Batched entry points over the one runner (:mod:`jbandits.runner`).

* :func:`simulate`: one policy on one instance (or a stack of instances), ``R``
  replications -> :class:`~jbandits.engine.RunResult` with leaves ``[R, ...]``
  (``[N, R, ...]``).
* :func:`sweep`: ``make_policy(**hp)`` over a grid of ``P`` traced hyper-parameter
  points x instances x replications -> leaves ``[P, (N,) R, ...]``.
* :func:`sweep_grid`: the declarative sweep — policies x hyper-parameter grids x K x
  budgets x replications, padded to K buckets and horizon buckets (one compiled
  program per policy and bucket), with a resumable store and a tidy table
  (:class:`SweepResult`).

All of them default to ``permute=True`` (a random relabelling of the arms per
replication): the policies break ties toward the lowest index, which is faithful to
the papers only when arm labels are random.
"""

from __future__ import annotations

import inspect
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import jax
import numpy as np

from jbandits import _validate, runner
from jbandits.engine import RunResult
from jbandits.execution import Execution
from jbandits.types import Bandit, Key


# ------------------------------------------------------------------------ validation
def _budget_array(name: str, budget, count: int | None = None) -> np.ndarray:
    if isinstance(budget, (str, bytes)) or budget is None:
        raise ValueError(
            f"{name} must be an integer (or integer array), got {budget!r}"
        )
    if not _validate.is_concrete(budget):
        raise ValueError(f"{name} must be concrete (host) numbers here, got a tracer")
    try:
        arr = np.asarray(jax.device_get(budget))
    except Exception as err:  # noqa: BLE001 - anything unconvertible is a bad budget
        raise ValueError(f"{name} must be integers, got {budget!r}") from err
    if arr.dtype.kind not in "iuf" or arr.ndim > 1:
        raise ValueError(
            f"{name} must be an integer scalar or 1-D array, got {budget!r}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {budget!r}")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold whole numbers, got {budget!r}")
    if np.any(arr < 1):
        raise ValueError(f"{name} must be >= 1, got {budget!r}")
    if np.any(arr > _validate.INT32_MAX):  # the engine counts pulls in int32
        raise ValueError(
            f"{name} must be <= {_validate.INT32_MAX} (2**31 - 1), got {budget!r}"
        )
    arr = arr.astype(np.int64)
    if count is not None and arr.ndim == 1 and arr.shape[0] != count:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {count}")
    return arr


def _mask(params) -> np.ndarray:
    if not hasattr(params, "arm_mask"):
        raise ValueError(
            f"params must be an instance pytree with an arm_mask (from jbandits.envs), "
            f"got {type(params).__name__}"
        )
    mask = np.asarray(jax.device_get(params.arm_mask))
    if mask.ndim not in (1, 2):
        raise ValueError(
            f"params.arm_mask must be [K] or [N, K] (a stack of instances), "
            f"got shape {mask.shape}"
        )
    return mask


def _check_bandit(bandit, params) -> None:
    if not isinstance(bandit, Bandit):
        raise ValueError(
            f"bandit must be a jbandits Bandit, got {type(bandit).__name__}"
        )
    _validate.bandit_params(bandit, params)


def _check_cells(bandit, params, budgets, real_arms, horizon) -> None:
    _check_bandit(bandit, params)
    bandit.check(params, int(np.max(budgets)))
    if np.any(budgets > horizon):
        raise ValueError(f"budget {budgets.max()} exceeds horizon {horizon}")
    small = budgets < real_arms
    if np.any(small):
        raise ValueError(
            f"budget {budgets[small].min()} is smaller than the number of arms "
            f"{real_arms[small].max()}: every algorithm here needs at least one pull "
            "per arm"
        )


def _counts(num_reps, num_checkpoints) -> tuple[int, int]:
    """``num_reps`` and ``num_checkpoints`` as ints the engine can count in int32."""
    num_reps = _validate.static_int(
        "num_reps", num_reps, minimum=1, maximum=_validate.INT32_MAX
    )
    num_checkpoints = _validate.static_int(
        "num_checkpoints", num_checkpoints, minimum=1, maximum=_validate.INT32_MAX
    )
    return num_reps, num_checkpoints


def _check_key(key) -> None:
    """``key`` is one key (a typed ``jax.random.key`` of shape (), or legacy uint32
    data of shape (2,)), not a batch of them."""
    try:
        data = runner.key_data(key)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"key must be one jax.random.key (e.g. jax.random.key(0)), got {key!r}"
        ) from err
    if data.shape != (2,):
        raise ValueError(
            f"key must be one jax.random.key, got an array of keys of shape "
            f"{data.shape[:-1]} (the entry points derive every replication's key "
            "from one key)"
        )


def _check_use(policy, metric, diagnostics: bool) -> None:
    """The policy (a built one, e.g. a grid's first point) fits the metric and
    the diagnostics asked for."""
    from jbandits import metrics

    metrics.check_setting(metric, policy)
    if diagnostics and getattr(policy, "diagnostics", None) is None:
        spec = getattr(policy, "spec", None)
        what = spec.name if spec is not None else "this policy"
        raise ValueError(
            f"diagnostics=True but {what} has no diagnostics channel "
            "(Policy.diagnostics is None); pass diagnostics=False"
        )


def _check_metric(metric) -> None:
    from jbandits import metrics

    if metric in (metrics.thresholding, metrics.identification, metrics.top_m):
        raise ValueError(
            f"metric must be a built metric: call jbandits.metrics.{metric.__name__}"
            f"(...) (e.g. jbandits.metrics.thresholding(0.5)), got {metric!r}"
        )
    if metric is not None and not callable(metric):
        raise ValueError(
            "metric must be a jbandits.metrics metric, e.g. "
            f"jbandits.metrics.thresholding(0.5), None, or 'auto'; got "
            f"{metric!r}"
        )


def _is_auto(metric) -> bool:
    return isinstance(metric, str) and metric == "auto"


def _auto_metric(metric, policy):
    """``"auto"``: the policy's default metric (:func:`jbandits.metrics.for_policy`)."""
    if _is_auto(metric):
        from jbandits import metrics

        return metrics.for_policy(policy)
    return metric


def _one_metric(policies):
    """The default metric shared by ``policies`` (one per grid point); a sweep records
    one metric, so points that call for different ones are an error."""
    from jbandits import metrics

    found = {}
    for policy in policies:
        m = metrics.for_policy(policy)
        found.setdefault(repr(m), m)
    if len(found) > 1:
        raise ValueError(
            "metric='auto': the grid points call for different metrics "
            f"({', '.join(found)}); pass metric= (one metric per sweep)"
        )
    return next(iter(found.values()))


def _host_policy(name: str, num_arms: int, point: dict, budget: int):
    """The registered policy ``name`` at one grid point, built on the host (concrete
    numbers; ``budget`` / ``horizon`` filled in where the factory takes them)."""
    import warnings

    accepted = inspect.signature(runner.registry.raw_factory(name)).parameters
    kwargs = {k: v for k, v in point.items() if k != "num_arms"}
    for arg in ("budget", "horizon"):
        if arg in accepted and arg not in kwargs:
            kwargs[arg] = int(budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # range warnings are the run's to give
        return runner.registry.make(name, num_arms=num_arms, **kwargs)


def _points(grid: dict, num_points: int) -> list[dict]:
    """The distinct points of a grid of ``[P]`` leaves, as dicts of host values."""
    seen, out = set(), []
    for i in range(num_points):
        point = jax.tree_util.tree_map(lambda x, i=i: np.asarray(x)[i], grid)
        tag = repr(jax.tree_util.tree_map(lambda x: x.tolist(), point))
        if tag not in seen:
            seen.add(tag)
            out.append(point)
    return out


def _check_policy(policy, num_arms: int, budgets: np.ndarray) -> None:
    spec = getattr(policy, "spec", None)
    if spec is None:
        return
    kw = dict(spec.kwargs)
    if "num_arms" in kw and kw["num_arms"] != num_arms:
        raise ValueError(
            f"policy was built with num_arms={kw['num_arms']} but the bandit has "
            f"K={num_arms} arms (padded instances: build with num_arms=K_max)"
        )
    own = kw.get("budget")
    if own is not None and _validate.is_concrete(own):
        own = np.asarray(own)
        if own.ndim == 0 and np.any(budgets != int(own)):
            raise ValueError(
                f"policy was built with budget={int(own)} but is run with budget "
                f"{sorted(set(budgets.tolist()))}; build it with the run's budget"
            )


def _prepared(policy_source, numeric: dict, num_arms: int, real, budgets) -> dict:
    """Per-cell host arguments (exact schedules) from the policy's prepare hook."""
    hook = policy_source.prepare
    if hook is None:
        return {}
    static = dict(policy_source.static)
    static.pop("num_arms", None)
    cache, rows = {}, []
    for k_real, b in zip(real.tolist(), budgets.tolist(), strict=True):
        if (k_real, b) not in cache:
            kw = {**static, **{k: v for k, v in numeric.items() if k != "budget"}}
            cache[(k_real, b)] = hook(num_arms, k_real, b, **kw)
        rows.append(cache[(k_real, b)])
    if not rows[0]:
        return {}
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *rows)


def _open_store(store, source, **work):
    """A :class:`jbandits.store.Store` for ``store`` (a Store, a path, or None) of
    the runs of ``source`` (a registered policy: see :func:`jbandits.runner.storable`;
    None for sweep_grid's registered names)."""
    if store is None:
        return None
    from jbandits.store import Store, digest

    if source is not None and not runner.storable(source):
        raise ValueError(
            "store= needs a registered policy (jbandits.make, jbandits.<name>, "
            "@jbandits.registry.policy), whose name, static arguments and numbers "
            f"identify its runs; got {source.name or 'a hand-built policy'}"
        )

    if isinstance(store, Store):
        return store
    fingerprint = {k: digest(v) for k, v in work.items()}
    return Store(store, fingerprint=fingerprint)


def _run(source, bandit, lanes, opts, lead, store, progress, report, chunking):
    """:func:`jbandits.runner.execute`, the store closed, leaves shaped ``lead``."""
    flat = runner.execute(
        source,
        bandit,
        lanes,
        opts,
        progress=progress,
        store=store,
        report=report,
        **chunking,
    )
    if store is not None:
        store.finish()
    return runner.to_result(flat, lead)


# -------------------------------------------------------------------------- simulate
def simulate(
    policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    budget: Any,
    num_reps: int,
    horizon: int | None = None,
    num_checkpoints: int = 1,
    metric: Any = "auto",
    record_arms: bool = False,
    permute: bool = True,
    batch_size: int | None = None,
    memory_budget: int | None = None,
    progress: bool | None = None,
    return_state: bool = False,
    diagnostics: bool = False,
    store=None,
    report: runner.Report | None = None,
    execution: Execution | None = None,
) -> RunResult:
    """Run ``num_reps`` replications of ``policy`` (compiled once, chunked, sharded).

    Args:
      policy: a Policy. Policies from :func:`jbandits.make` or the top-level
        factories are rebuilt inside the compiled function with their numbers traced,
        so calling ``make`` + ``simulate`` in a loop over, say, ε compiles once.
      bandit, params: reward family and instance; ``params.arm_mask`` ``[N, K]``
        (a stack from :func:`jbandits.envs.stack_instances`) runs N instances.
      key: the experiment key. Instance ``n`` of a stack uses ``fold_in(key, n)``;
        replication ``r`` uses ``fold_in(instance key, r)``.
      budget: pulls per replication: an int, or ``[N]`` ints for a stack.
      num_reps: replications per instance (>= 1).
      horizon: checkpoint spacing (default: the largest budget); traced.
      num_checkpoints: metric read-outs at ``min(c * ceil(horizon / C), budget)``.
      metric: a :mod:`jbandits.metrics` metric; ``"auto"`` (default) picks the one
        the policy's ``setting`` calls for (:func:`jbandits.metrics.for_policy`:
        thresholding at the policy's threshold, identification, top-m, or None for
        regret policies); None records regret and reward only.
      record_arms: also return the arm of every step (small horizons only).
      permute: random arm relabelling per replication (default True: faithful
        tie-breaking); pass False to play the arms as numbered.
      batch_size: replications per chunk (default: chosen from ``memory_budget``).
      memory_budget: bytes a chunk may use (default 40% of free device memory).
      progress: True: progress bar at once; None: after 2 s; False: never.
      return_state: also return the final policy states (``res.state``).
      diagnostics: also read the policy's diagnostics channel at every checkpoint
        (``res.diagnostics``: ``{name: [R, C, ...]}``; see
        :class:`jbandits.types.Policy`).
      store: optional :class:`jbandits.store.Store` (resumable chunks).
      report: optional :class:`jbandits.runner.Report` filled with what ran.
      execution: optional :class:`jbandits.execution.Execution`: how the policy's
        step is compiled (never what it computes; default: the measured defaults of
        the devices' platform), e.g. to compare forms in a benchmark.

    Returns:
      A :class:`~jbandits.engine.RunResult` of NumPy arrays ``[R, ...]``
      (``[N, R, ...]`` for a stack).

    Raises:
      ValueError: a bad argument, named in the message (budget not a positive whole
        number, past 2**31 - 1, smaller than K or than a fixed-budget policy's
        schedule needs, or beyond ``horizon``; ``num_reps`` or ``num_checkpoints``
        < 1; a policy built for another K or budget; params of another family than
        ``bandit``; a metric of another setting than the policy's; ``diagnostics``
        for a policy without them; a batch of keys; ``batch_size`` < 1, ...).

    Example::

        bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
        pol = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
        res = jbandits.simulate(pol, bandit, params, jax.random.key(0), budget=200,
                                num_reps=1000, metric=jbandits.metrics.thresholding(0.5))
        res.metrics["error"].mean()
    """
    num_reps, num_checkpoints = _counts(num_reps, num_checkpoints)
    _check_key(key)
    mask = _mask(params)
    batched = mask.ndim == 2
    num_inst = mask.shape[0] if batched else 1
    if num_inst == 0:
        raise ValueError("params is an empty stack of instances (N = 0)")
    budgets = _budget_array("budget", budget, num_inst if batched else None)
    if budgets.ndim == 1 and not batched:
        raise ValueError("budget must be a scalar for a single instance")
    budgets = np.broadcast_to(budgets, (num_inst,))
    horizon = int(budgets.max()) if horizon is None else horizon
    horizon = _validate.static_int(
        "horizon", horizon, minimum=1, maximum=_validate.INT32_MAX
    )
    real = mask.reshape(num_inst, -1).sum(-1)
    _check_cells(bandit, params, budgets, real, horizon)
    _check_policy(policy, mask.shape[-1], budgets)
    metric = _auto_metric(metric, policy)
    _check_metric(metric)
    _check_use(policy, metric, diagnostics)
    if store is not None and return_state:
        raise ValueError("return_state cannot be combined with a store")
    source, numeric = runner.source_of(policy)
    if source.ident == ("registered", source.name):
        kwargs = {**dict(source.static), **numeric}
        runner.registry.check_budgets(source.name, kwargs, budgets, real)
    hp = _prepared(source, numeric, mask.shape[-1], real, budgets)
    store = _open_store(
        store,
        source,
        policy=(source.ident, source.static, numeric, hp),
        bandit=bandit.name,
        params=params,
        key=key,
        budget=budgets,
        run=(num_reps, horizon, num_checkpoints, repr(metric), permute, record_arms)
        + ((True,) if diagnostics else ()),
    )
    if batched:
        keys = runner.instance_keys(key, num_inst)
        inst_params = params
    else:
        keys = runner.key_data(key)[None]
        inst_params = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], params)
    lanes = runner.Lanes(
        hp=hp,
        params=inst_params,
        instance=np.arange(num_inst),
        budget=budgets,
        keys=keys,
        num_reps=num_reps,
        horizon=np.full(num_inst, horizon),
    )
    opts = runner.Options(
        horizon=horizon if record_arms else None,
        num_checkpoints=num_checkpoints,
        metric=metric,
        permute=permute,
        record_arms=record_arms,
        return_state=return_state,
        diagnostics=diagnostics,
        execution=Execution.resolve(execution) if execution is not None else None,
    )
    lead = (num_inst, num_reps) if batched else (num_reps,)
    chunking = dict(batch_size=batch_size, memory_budget=memory_budget)
    return _run(policy, bandit, lanes, opts, lead, store, progress, report, chunking)


# ----------------------------------------------------------------------------- sweep
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
    batch_size: int | None = None,
    memory_budget: int | None = None,
    progress: bool | None = None,
    diagnostics: bool = False,
    store=None,
    report: runner.Report | None = None,
) -> RunResult:
    """Hyper-parameters (and budgets) x instances x replications, compiled once.

    Args:
      make_policy: ``(**hp) -> Policy`` called inside the compiled function with
        traced scalars ``hp`` (the optax closure pattern), or a registered name
        (its numeric arguments come from ``grid``).
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
      num_checkpoints, permute, batch_size, memory_budget, progress, diagnostics,
        store, report: as in :func:`simulate`.

    Returns:
      RunResult with leaves ``[P, N, R, ...]`` (``[P, R, ...]`` for one instance).

    Raises:
      ValueError: grid entries that are not 1-D of one length, a missing budget, ...
    """
    num_reps, num_checkpoints = _counts(num_reps, num_checkpoints)
    horizon = _validate.static_int(
        "horizon", horizon, minimum=1, maximum=_validate.INT32_MAX
    )
    _check_key(key)
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid must be a non-empty dict of 1-D arrays, got {grid!r}")
    arrays = {}
    for k, v in grid.items():
        if isinstance(v, (list, tuple)):  # a list of values, not a pytree
            v = np.asarray(v)
        a = jax.tree_util.tree_map(lambda x: np.asarray(jax.device_get(x)), v)
        if any(np.ndim(x) < 1 for x in jax.tree_util.tree_leaves(a)):
            raise ValueError(
                f"grid[{k!r}] must have a leading axis of grid points (one value per "
                "point); wrap a single value in a list"
            )
        arrays[k] = a
    sizes = {x.shape[0] for x in jax.tree_util.tree_leaves(arrays)}
    if len(sizes) != 1:
        raise ValueError(f"grid entries must share one leading length, got {sizes}")
    num_points = sizes.pop()
    if num_points == 0:
        raise ValueError(f"grid has no points (its entries are empty): {grid!r}")
    if "budget" not in arrays and budget is None:
        raise ValueError("give budget, or a 'budget' entry in grid")
    mask = _mask(params)
    batched = mask.ndim == 2
    num_inst = mask.shape[0] if batched else 1
    point_budget = _budget_array("budget", arrays.get("budget", budget))
    point_budget = np.broadcast_to(point_budget, (num_points,))
    real = mask.reshape(num_inst, -1).sum(-1)
    cell_budget = np.repeat(point_budget, num_inst)
    cell_inst = np.tile(np.arange(num_inst), num_points)
    _check_cells(bandit, params, cell_budget, real[cell_inst], horizon)
    if isinstance(make_policy, str) and "budget" in arrays:
        accepted = inspect.signature(runner.registry.raw_factory(make_policy))
        if "budget" not in accepted.parameters:  # the engine's budget only
            arrays = {k: v for k, v in arrays.items() if k != "budget"}
    points = _points(arrays, num_points if _is_auto(metric) else 1)
    if isinstance(make_policy, str):
        runner.registry.check_kwargs(make_policy, points[0])
        b0 = int(point_budget[0])
        built = [_host_policy(make_policy, mask.shape[-1], p, b0) for p in points]
    else:
        built = [make_policy(**p) for p in points]
    if _is_auto(metric):
        metric = _one_metric(built)
    _check_metric(metric)
    _check_use(built[0], metric, diagnostics)
    spec = getattr(built[0], "spec", None)
    if spec is not None:
        runner.registry.check_budgets(
            spec.name, dict(spec.kwargs), cell_budget, real[cell_inst]
        )
    hp = jax.tree_util.tree_map(lambda v: np.repeat(v, num_inst, axis=0), arrays)
    if batched:
        keys = np.tile(runner.instance_keys(key, num_inst), (num_points, 1))
        inst_params = params
    else:
        keys = np.tile(runner.key_data(key)[None], (num_points, 1))
        inst_params = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], params)
    if isinstance(make_policy, str):  # a registered name: numbers from the grid
        make_policy = runner.registered(make_policy, {"num_arms": mask.shape[-1]})
        hp.update(
            _prepared(make_policy, hp, mask.shape[-1], real[cell_inst], cell_budget)
        )
    source = runner.source_of(make_policy)[0]
    store = _open_store(
        store,
        source,
        policy=(source.ident, source.static),
        hp=hp,
        bandit=bandit.name,
        params=params,
        key=key,
        budget=cell_budget,
        run=(num_reps, horizon, num_checkpoints, repr(metric), permute)
        + ((True,) if diagnostics else ()),
    )
    lanes = runner.Lanes(
        hp=hp,
        params=inst_params,
        instance=cell_inst,
        budget=cell_budget,
        keys=keys,
        num_reps=num_reps,
        horizon=np.full(cell_budget.shape, horizon),
    )
    opts = runner.Options(
        num_checkpoints=num_checkpoints,
        metric=metric,
        permute=permute,
        diagnostics=diagnostics,
    )
    lead = (num_points, num_inst, num_reps) if batched else (num_points, num_reps)
    chunking = dict(batch_size=batch_size, memory_budget=memory_budget)
    return _run(
        make_policy, bandit, lanes, opts, lead, store, progress, report, chunking
    )


# ------------------------------------------------------------------------ sweep_grid
def k_bucket(num_arms: int) -> int:
    """K bucket: the next power of two (at least 4)."""
    return max(4, 1 << (int(num_arms) - 1).bit_length())


@dataclass
class SweepResult:
    """Labelled results of :func:`sweep_grid`.

    Attributes:
      cells: list of dicts, one per cell: policy, hyper-parameters, K, instance,
        budget (the labels).
      values: ``{field: array [cells, reps, ...]}`` (``metric.NAME`` ``[.., C]``,
        ``regret``, ``times``, ``num_pulls``, ...).
      report: what ran (:class:`jbandits.runner.Report`), incl. the no-op fraction.
    """

    cells: list
    values: dict
    report: runner.Report = field(default_factory=runner.Report)

    def to_dataframe(self):
        """Tidy table: one row per (cell, replication, checkpoint) (needs pandas)."""
        import pandas as pd

        num_cells, reps, num_ckpt = self.values["times"].shape
        idx = np.arange(num_cells * reps * num_ckpt)
        cell = idx // (reps * num_ckpt)
        frame = pd.DataFrame(self.cells).iloc[cell].reset_index(drop=True)
        frame["rep"] = (idx // num_ckpt) % reps
        frame["checkpoint"] = idx % num_ckpt
        for name, value in self.values.items():
            if value.shape[2:] == (num_ckpt,):
                frame[name.removeprefix("metric.")] = value.reshape(-1)
        return frame

    def summary(self, z: float = 1.959963984540054):
        """Mean and CI per (cell, checkpoint) of each value (``NAME``, ``NAME_lo``,
        ``NAME_hi``).

        Rates (an ``error`` metric, boolean values) get the Wilson score interval
        (:func:`jbandits.metrics.binomial_ci`: inside [0, 1], not empty at a rate of
        0 or 1); other values (regret, reward, misclassified, simple regret) the
        normal interval ``mean +- z * sd / sqrt(reps)``.
        """
        import pandas as pd

        from jbandits.metrics import binomial_ci

        rows = []
        num_ckpt = self.values["times"].shape[2]
        rates = {name: _is_rate(name, v) for name, v in self.values.items()}
        for c, labels in enumerate(self.cells):
            for j in range(num_ckpt):
                row = {
                    **labels,
                    "checkpoint": j,
                    "time": int(self.values["times"][c, 0, j]),
                }
                for name, value in self.values.items():
                    if name == "times" or value.shape[2:] != (num_ckpt,):
                        continue
                    x = value[c, :, j].astype(np.float64)
                    short = name.removeprefix("metric.")
                    if rates[name]:
                        mean, lo, hi = (float(v) for v in binomial_ci(x, z=z))
                    else:
                        se = x.std(ddof=1) / math.sqrt(x.size) if x.size > 1 else 0.0
                        mean, lo, hi = x.mean(), x.mean() - z * se, x.mean() + z * se
                    row[short] = mean
                    row[short + "_lo"] = lo
                    row[short + "_hi"] = hi
                rows.append(row)
        frame = pd.DataFrame(rows)
        # policy, hyper-parameters (of every policy), K, instance, budget, values
        labels = list(dict.fromkeys(k for c in self.cells for k in c))
        tail = [k for k in ("K", "instance", "budget") if k in labels]
        labels = [k for k in labels if k not in tail] + tail
        return frame[labels + [c for c in frame.columns if c not in labels]]


def _is_rate(name: str, value: np.ndarray) -> bool:
    """A field of 0/1 outcomes: booleans, or an ``error`` metric that is 0 or 1."""
    if value.dtype == np.bool_:
        return True
    return name.removeprefix("metric.") == "error" and bool(
        np.all((value == 0) | (value == 1))
    )


def _grid_points(hp: dict, name: str = "") -> list[dict]:
    """Cartesian product of list-valued entries; scalars are shared."""
    keys = [k for k, v in hp.items() if isinstance(v, (list, tuple))]
    for k in keys:
        if not hp[k]:
            raise ValueError(
                f"grid axis {k!r} of {name or 'a policy'} is empty: give at least "
                "one value (or a scalar)"
            )
    fixed = {k: v for k, v in hp.items() if k not in keys}
    points = []
    for combo in itertools.product(*(hp[k] for k in keys)):
        points.append({**fixed, **dict(zip(keys, combo, strict=True))})
    return points


def _check_policy_list(policies) -> list:
    """``policies`` as a list of ``(registered name, hp dict)`` pairs."""
    if (
        isinstance(policies, tuple)
        and len(policies) == 2
        and isinstance(policies[0], str)
    ):
        policies = [policies]  # one pair
    if not isinstance(policies, (list, tuple)) or not policies:
        raise ValueError(
            f"policies must be a non-empty list of (name, hp) pairs, got {policies!r}"
        )
    out = []
    for pair in policies:
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], dict)
        ):
            raise ValueError(
                "policies must be (name, hp) pairs, e.g. [('apt', {'threshold': "
                f"0.5}})], got {pair!r}"
            )
        runner.registry.prepare_hook(pair[0])  # an unknown name lists the known
        out.append(pair)
    return out


def sweep_grid(
    policies,
    bandit: Bandit,
    instances,
    key: Key,
    *,
    budgets,
    num_reps: int,
    num_checkpoints: int = 1,
    metric: Any = "auto",
    permute: bool = True,
    memory_budget: int | None = None,
    batch_size: int | None = None,
    progress: bool | None = None,
    store=None,
    skip_invalid: bool = True,
) -> SweepResult:
    """Policies x hyper-parameter grids x instances (any K) x budgets x replications.

    Instances are padded to K buckets (:func:`k_bucket`); each (policy and its static
    arguments, K bucket) is one compiled program, whatever the budgets and numeric
    hyper-parameters (all traced). Lanes run in chunks ordered by budget and every
    chunk stops at its own largest budget; each cell's ``num_checkpoints`` read-outs
    are evenly spaced over its own budget.

    Args:
      policies: list of ``(name, hp)``: a registered policy name and a dict of its
        keyword arguments; a list value is a grid axis (cartesian product), a scalar
        is shared. ``num_arms`` and ``budget`` are filled in per cell.
      bandit: the reward family.
      instances: list of instance pytrees (e.g. ``bandit_params`` from
        :func:`jbandits.envs.bernoulli`), any K each.
      key: experiment key; instance ``n`` uses ``fold_in(key, n)``, replication ``r``
        ``fold_in(instance key, r)``, the same for every policy, grid point and
        budget (common random numbers).
      budgets: list of budgets (or one budget), each <= 2**31 - 1.
      num_reps: replications per cell.
      skip_invalid: drop cells whose budget is below what the policy needs on the
        instance (K pulls, or a fixed-budget schedule's minimum, e.g. K + 1 for
        Successive Rejects: :func:`jbandits.registry.min_budget`), with a warning
        line; False raises instead.
      metric: as in :func:`simulate`; ``"auto"`` (default) is the default metric of
        every policy and grid point, which must be the same one (policies of
        different settings, or several thresholds, need an explicit ``metric``).
      num_checkpoints, permute, memory_budget, batch_size, progress, store: as in
        :func:`simulate`.

    Returns:
      A :class:`SweepResult`.

    Raises:
      ValueError: before anything runs, on a bad argument (named in the message):
        an empty grid axis, no budgets or instances, no cell left to run, params of
        another family than ``bandit``, a hyper-parameter the policy does not take
        or a string where it takes a number, a metric of another setting than a
        policy's, a budget past int32, ``num_checkpoints`` < 1, a batch of keys.
    """
    from jbandits.envs import pad_arms

    num_reps, num_checkpoints = _counts(num_reps, num_checkpoints)
    _check_key(key)
    if isinstance(budgets, (str, bytes)):
        _budget_array("budgets", budgets)  # refused, with the string in the message
    if np.ndim(budgets) == 0:
        budgets = [budgets]  # one budget
    budgets = _budget_array("budgets", list(budgets))
    policies = _check_policy_list(policies)
    instances = list(instances)
    if not instances:
        raise ValueError("instances must be a non-empty list of instances")
    for inst in instances:
        if _mask(inst).ndim != 1:
            raise ValueError(
                "instances must be single instances (arm_mask [K]), got a stack of "
                f"shape {np.shape(inst.arm_mask)}: pass its instances as a list"
            )
        _check_bandit(bandit, inst)
        bandit.check(inst, int(budgets.max()))
    points = {i: _grid_points(dict(hp), name) for i, (name, hp) in enumerate(policies)}
    for i, (name, _) in enumerate(policies):
        for point in points[i]:
            runner.registry.check_kwargs(name, point)
    inst_keys = runner.instance_keys(key, len(instances))
    kb0 = k_bucket(np.asarray(instances[0].arm_mask).shape[-1])
    b_max = int(budgets.max())
    if _is_auto(metric):
        metric = _one_metric(
            _host_policy(name, kb0, point, b_max)
            for i, (name, _) in enumerate(policies)
            for point in points[i]
        )
    _check_metric(metric)
    for i, (name, _) in enumerate(policies):
        if points[i]:
            _check_use(_host_policy(name, kb0, points[i][0], b_max), metric, False)
    real = [int(np.asarray(p.arm_mask).sum()) for p in instances]
    cells, groups = [], {}
    skipped = 0
    for i, (name, _hp) in enumerate(policies):
        for point in points[i]:
            static_point, _ = runner.registry.split_kwargs(point, name)
            for n, inst in enumerate(instances):
                need = runner.registry.min_budget(name, real[n], static_point)
                for b in budgets.tolist():
                    if b < need:
                        if not skip_invalid:
                            raise ValueError(
                                f"budget {b} is too small for {name} on instance {n} "
                                f"(K={real[n]}): it needs budget >= {need}"
                            )
                        skipped += 1
                        continue
                    kb = k_bucket(np.asarray(inst.arm_mask).shape[-1])
                    static, _ = runner.registry.split_kwargs(point, name)
                    gkey = (name, kb, tuple(sorted(static.items())))
                    groups.setdefault(gkey, []).append(len(cells))
                    cells.append(
                        {
                            "policy": name,
                            **point,
                            "K": real[n],
                            "instance": n,
                            "budget": b,
                            "_point": point,
                        }
                    )
    if not cells:
        raise ValueError(
            f"sweep_grid has no cells to run: every budget {budgets.tolist()} is below "
            "what the policies need for the instances' K (at least K, more for "
            "fixed-budget schedules)"
        )
    if skipped:
        print(
            f"sweep_grid: skipped {skipped} cells with a budget below what the "
            "policy needs for K (K, or its schedule's minimum)",
            flush=True,
        )
    store = _open_store(
        store,
        None,  # registered names
        policies=repr(policies),
        bandit=bandit.name,
        instances=instances,
        key=key,
        budgets=budgets,
        run=(num_reps, num_checkpoints, repr(metric), permute),
    )
    values: dict = {}
    report = runner.Report()
    for gi, ((name, kb, _), ids) in enumerate(sorted(groups.items())):
        ids = np.asarray(ids)
        padded = {}
        for i in ids:
            n = cells[i]["instance"]
            if n not in padded:
                inst = instances[n]
                padded[n] = pad_arms(inst, kb) if inst.arm_mask.shape[-1] < kb else inst
        inst_order = sorted(padded)
        pos = {n: j for j, n in enumerate(inst_order)}
        params = jax.tree_util.tree_map(
            lambda *xs: np.stack([np.asarray(x) for x in xs]),
            *[padded[n] for n in inst_order],
        )
        point0 = cells[ids[0]]["_point"]
        static, _ = runner.registry.split_kwargs(point0, name)
        numeric_keys = [k for k in point0 if k not in static]
        hp = {
            k: np.asarray([cells[i]["_point"][k] for i in ids], np.float64)
            for k in numeric_keys
        }
        cell_budget = np.asarray([cells[i]["budget"] for i in ids])
        accepted = inspect.signature(runner.registry.raw_factory(name)).parameters
        for arg in ("budget", "horizon"):
            if arg in accepted and arg not in hp:
                hp[arg] = cell_budget
        source = runner.registered(name, {**static, "num_arms": kb})
        cell_real = np.asarray([real[cells[i]["instance"]] for i in ids])
        hp.update(_prepared(source, hp, kb, cell_real, cell_budget))
        hp = jax.tree_util.tree_map(
            lambda v: v.astype(np.float32) if v.dtype == np.float64 else v, hp
        )
        lanes = runner.Lanes(
            hp=hp,
            params=params,
            instance=np.asarray([pos[cells[i]["instance"]] for i in ids]),
            budget=cell_budget,
            keys=inst_keys[[cells[i]["instance"] for i in ids]],
            num_reps=num_reps,
        )
        opts = runner.Options(
            num_checkpoints=num_checkpoints, metric=metric, permute=permute
        )
        flat = runner.execute(
            source,
            bandit,
            lanes,
            opts,
            batch_size=batch_size,
            memory_budget=memory_budget,
            progress=progress,
            store=store,
            group=f"g{gi}",
            report=report,
            label=f"{name} K<={kb}",
        )
        for f, v in flat.items():
            if f.startswith("_") or f in ("pulls", "output"):
                continue  # K-shaped fields differ across buckets
            if f not in values:
                values[f] = np.zeros((len(cells), num_reps, *v.shape[2:]), v.dtype)
            values[f][ids] = v
    for c in cells:
        c.pop("_point")
    if store is not None:
        store.write_cells(cells)
        store.finish(noop_fraction=report.noop_fraction, lanes=report.lanes)
    return SweepResult(cells, values, report)
