""":func:`sweep_grid`: the declarative sweep — policies x hyper-parameter grids x K x
budgets x replications, padded to K buckets (one compiled program per policy and
bucket), with a resumable store and a tidy table (:class:`SweepResult`)."""

from __future__ import annotations

import itertools
from typing import Any

import jax
import numpy as np

from jbandits.core.reward_model import is_fixed_confidence, of_policy
from jbandits.core.types import Bandit, Key
from jbandits.sim import checks as _checks
from jbandits.sim import entry as _entry
from jbandits.sim import runner
from jbandits.sim.runner.results import warn_capped
from jbandits.sim.sweep_result import SweepResult


def k_bucket(num_arms: int) -> int:
    """K bucket: the next power of two (at least 4)."""
    return max(4, 1 << (int(num_arms) - 1).bit_length())


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
    check_model: bool = True,
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
        Successive Rejects: :func:`jbandits.core.registry.min_budget`), with a warning
        line; False raises instead.
      metric: as in :func:`simulate`; ``"auto"`` (default) is the default metric of
        every policy and grid point, which must be the same one (policies of
        different settings, or several thresholds, need an explicit ``metric``).
      num_checkpoints, permute, memory_budget, batch_size, progress, store: as in
        :func:`simulate`.
      check_model: as in :func:`simulate`: every policy at every grid point against
        every instance (``jbandits sweep`` runs with the default, True).

    Returns:
      A :class:`SweepResult`; capped runs of a fixed-confidence policy are warned
      about (one line per policy) as in :func:`simulate`.

    Raises:
      ValueError: before anything runs, on a bad argument (named in the message):
        an empty grid axis, no budgets or instances, no cell left to run, params of
        another family than ``bandit``, a hyper-parameter the policy does not take
        or a string where it takes a number, a metric of another setting than a
        policy's, a budget past int32, ``num_checkpoints`` < 1, a batch of keys,
        instance numbers its family's builder refuses, a reward model that does not
        fit (``check_model``).
    """
    num_reps, num_checkpoints = _checks.counts(num_reps, num_checkpoints)
    key_host = _checks.one_key(key)
    budgets = _checks.budget_list(budgets)
    _checks.checkpoint_times(num_checkpoints, budgets)
    policies = _checks.policy_list(policies)
    instances = list(instances)
    _checks.instances(bandit, instances, budgets)
    points = {i: _grid_points(dict(hp), name) for i, (name, hp) in enumerate(policies)}
    for i, (name, _) in enumerate(policies):
        for point in points[i]:
            runner.registry.check_kwargs(name, point)
    inst_keys = runner.instance_keys(key_host, len(instances))
    metric = _grid_metric(policies, points, instances, budgets, metric)
    stopping = _model_checks(policies, points, instances, budgets, bandit, check_model)
    real = [int(np.asarray(p.arm_mask).sum()) for p in instances]
    cells, groups = _cells(policies, points, instances, real, budgets, skip_invalid)
    store = _entry.open_store(
        store,
        None,  # registered names
        code=None
        if store is None
        else runner.code_of(sorted({name for name, _ in policies}), bandit),
        policies=repr(policies),
        bandit=bandit.name,
        instances=instances,
        key=key,
        budgets=budgets,
        run=(num_reps, num_checkpoints, repr(metric), permute),
    )
    report = runner.Report()
    opts = runner.Options(
        num_checkpoints=num_checkpoints, metric=metric, permute=permute
    )
    parts, order = [], []
    for gi, ((name, kb, _), ids) in enumerate(sorted(groups.items())):
        ids = np.asarray(ids)
        source, lanes = _group(
            name, kb, ids, cells, instances, real, inst_keys, num_reps
        )
        parts.append(runner.Part(source, lanes, f"{name} K<={kb}", f"g{gi}"))
        order.append(ids)
    call = dict(
        batch_size=batch_size, memory_budget=memory_budget, progress=progress,
        report=report,
    )  # fmt: skip
    labelled = [{k: v for k, v in c.items() if k != "_point"} for c in cells]
    job = runner.Job(bandit, tuple(parts), opts, store, call, cells=labelled)
    values: dict = {}
    runner.run(
        job, lambda i, flat: _collect(values, flat, order[i], len(cells), num_reps)
    )
    for name in stopping:
        ids = [i for i, c in enumerate(labelled) if c["policy"] == name]
        each = np.asarray([labelled[i]["budget"] for i in ids])[:, None]
        warn_capped("sweep_grid", name, values["stopped"][ids], each)
    cells = labelled
    return SweepResult(cells, values, report)


def _grid_points(hp: dict, name: str = "") -> list[dict]:
    """Cartesian product of list-valued entries; scalars are shared."""
    keys = _checks.grid_axes(hp, name)
    fixed = {k: v for k, v in hp.items() if k not in keys}
    points = []
    for combo in itertools.product(*(hp[k] for k in keys)):
        points.append({**fixed, **dict(zip(keys, combo, strict=True))})
    return points


def _grid_metric(policies, points, instances, budgets, metric):
    """The sweep's metric (``"auto"``: every point's default, which must be one),
    checked against each policy built on the host at its first point."""
    kb0 = k_bucket(np.asarray(instances[0].arm_mask).shape[-1])
    b_max = int(budgets.max())
    if _checks.is_auto(metric):
        metric = _checks.one_metric(
            _entry.host_policy(name, kb0, point, b_max)
            for i, (name, _) in enumerate(policies)
            for point in points[i]
        )
    _checks.metric(metric)
    for i, (name, _) in enumerate(policies):
        if points[i]:
            policy = _entry.host_policy(name, kb0, points[i][0], b_max)
            _checks.use(policy, metric, False)
    return metric


def _model_checks(policies, points, instances, budgets, bandit, check) -> list:
    """Check every policy's reward model at every grid point against every instance
    (:func:`jbandits.sim.checks.reward_model`; a policy is built at its other points
    only when its first declares a model). Returns the names of the
    fixed-confidence policies (:func:`jbandits.core.reward_model.is_fixed_confidence`)."""
    kb0 = k_bucket(np.asarray(instances[0].arm_mask).shape[-1])
    b_max = int(budgets.max())
    names = []
    for i, (name, _) in enumerate(policies):
        if not points[i]:
            continue
        first = _entry.host_policy(name, kb0, points[i][0], b_max)
        if is_fixed_confidence(first) and name not in names:
            names.append(name)
        built = [first]
        if check and of_policy(first) is not None:
            built += [_entry.host_policy(name, kb0, p, b_max) for p in points[i][1:]]
        _checks.reward_model(built, bandit, instances, check)
    return names


def _cells(policies, points, instances, real, budgets, skip_invalid):
    """The cells (labels, and the ``_point`` each runs) and their groups: the cell
    indices per (policy, K bucket, static arguments), one compiled program each.
    Cells with a budget below what the policy needs are skipped (or refused)."""
    cells, groups = [], {}
    skipped = 0
    for i, (name, _hp) in enumerate(policies):
        for point in points[i]:
            static, _ = runner.registry.split_kwargs(point, name)
            gstatic = tuple(sorted(static.items()))
            for n, inst in enumerate(instances):
                need = runner.registry.min_budget(name, real[n], static)
                kb = k_bucket(np.asarray(inst.arm_mask).shape[-1])
                for b in budgets.tolist():
                    if b < need:
                        if not skip_invalid:
                            raise ValueError(
                                f"budget {b} is too small for {name} on instance {n} "
                                f"(K={real[n]}): it needs budget >= {need}"
                            )
                        skipped += 1
                        continue
                    groups.setdefault((name, kb, gstatic), []).append(len(cells))
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
    return cells, groups


def _group(name, kb, ids, cells, instances, real, inst_keys, num_reps):
    """The source and the lanes of one group's cells ``ids``: its instances padded
    to ``kb`` arms and stacked, its numbers per cell."""
    from jbandits.envs import pad_arms

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
    takes = _entry.accepted(name)
    for arg in ("budget", "horizon"):
        if arg in takes and arg not in hp:
            hp[arg] = cell_budget
    source = runner.registered(name, {**static, "num_arms": kb})
    cell_real = np.asarray([real[cells[i]["instance"]] for i in ids])
    hp.update(_entry.prepared(source, hp, kb, cell_real, cell_budget))
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
    return source, lanes


def _collect(values: dict, flat: dict, ids, num_cells: int, num_reps: int) -> None:
    """Write one group's fields into ``values`` (``[cells, reps, ...]``)."""
    for f, v in flat.items():
        if f.startswith("_") or f in ("pulls", "output"):
            continue  # K-shaped fields differ across buckets
        if f not in values:
            values[f] = np.zeros((num_cells, num_reps, *v.shape[2:]), v.dtype)
        values[f][ids] = v
