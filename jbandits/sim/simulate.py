""":func:`simulate`: one policy on one instance (or a stack), ``R`` replications."""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from jbandits.core.execution import Execution
from jbandits.core.reward_model import is_fixed_confidence
from jbandits.core.types import Bandit, Key
from jbandits.sim import checks as _checks
from jbandits.sim import entry as _entry
from jbandits.sim import runner
from jbandits.sim.engine import RunResult
from jbandits.sim.runner.results import warn_capped


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
    check_model: bool = True,
    numbers: dict | None = None,
    shared: tuple = (),
    refill: bool | None = None,
) -> RunResult:
    """Run ``num_reps`` replications of ``policy`` (compiled once, chunked, sharded).

    Args:
      policy: a Policy. Policies from :func:`jbandits.make` or the top-level
        factories are rebuilt inside the compiled function with their numbers traced,
        so calling ``make`` + ``simulate`` in a loop over, say, ε compiles once.
      bandit, params: reward family and instance; ``params.arm_mask`` ``[N, K]``
        (a stack from :func:`jbandits.envs.stack_instances`) runs N instances.
      key: the experiment key. Instance ``n`` of a stack uses ``fold_in(key, n)``;
        replication ``r`` uses ``fold_in(instance key, r)``. Or a batch of typed
        keys: ``[N]`` for a stack, each instance's key (replication ``r`` of
        instance ``n``: ``fold_in(key[n], r)``), or the results' leading shape
        (``[R]`` for one instance, ``[N, R]`` for a stack), each replication's own
        key (e.g. to pair runs with another study's).
      budget: pulls per replication: an int, or ``[N]`` ints for a stack.
      num_reps: replications per instance (>= 1).
      horizon: checkpoint spacing (default: the largest budget); traced.
      num_checkpoints: metric read-outs at ``min(c * ceil(horizon / C), budget)``.
      metric: a :mod:`jbandits.analysis.metrics` metric; ``"auto"`` (default) picks the one
        the policy's ``setting`` calls for (:func:`jbandits.analysis.metrics.for_policy`:
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
        :class:`jbandits.core.types.Policy`).
      store: optional :class:`jbandits.analysis.store.Store` (resumable chunks).
      report: optional :class:`jbandits.sim.runner.Report` filled with what ran.
      execution: optional :class:`jbandits.core.execution.Execution`: how the policy's
        step is compiled (never what it computes; default: the measured defaults of
        the devices' platform), e.g. to compare forms in a benchmark.
      check_model: refuse a policy whose declared reward model does not fit the
        bandit's rewards (default True; :mod:`jbandits.core.reward_model`: a
        fixed-confidence policy's ``family``/``sigma`` against the instance). False
        runs it anyway.
      numbers: for a stack of ``N`` instances, per-instance values of some of the
        policy's numbers, ``{name: [N, ...]}``: instance ``n`` runs the policy with
        ``numbers[name][n]`` in place of its own value (oracle-tuned parameters,
        per-instance horizons, host schedules); one program for all of them. Each
        must be a number of the policy, of its shape, and is cast to its declared
        type.
      refill: lanes whose run stopped take the next replication from a queue
        (:mod:`jbandits.sim.runner.refill`); None (default): for policies that stop
        by themselves; False: plain chunks, each run until its last lane is done
        (the results are the same either way).
      shared: names of ``params`` fields held once for every instance of a stack
        (no leading ``N`` axis, e.g. a large data matrix every instance reads).

    Returns:
      A :class:`~jbandits.sim.engine.RunResult` of NumPy arrays ``[R, ...]``
      (``[N, R, ...]`` for a stack). ``res.stopped`` says which runs the policy
      stopped, ``res.num_stopped`` / ``res.num_capped`` count them; a
      fixed-confidence policy with capped runs (budget reached without stopping)
      gets a one-line :class:`~jbandits.sim.runner.results.CappedRunsWarning`.

    Raises:
      ValueError: a bad argument, named in the message (budget not a positive whole
        number, past 2**31 - 1, smaller than K or than a fixed-budget policy's
        schedule needs, or beyond ``horizon``; ``num_reps`` or ``num_checkpoints``
        < 1; a policy built for another K or budget; params of another family than
        ``bandit``; a metric of another setting than the policy's; ``diagnostics``
        for a policy without them; a batch of keys; ``batch_size`` < 1; instance
        numbers its family's builder refuses (NaN or infinite means, Bernoulli means
        outside [0, 1], negative stds); a reward model that does not fit, ...).

    Example::

        bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
        pol = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
        res = jbandits.simulate(pol, bandit, params, jax.random.key(0), budget=200,
                                num_reps=1000, metric=jbandits.analysis.metrics.thresholding(0.5))
        res.metrics["error"].mean()
    """
    num_reps, num_checkpoints = _checks.counts(num_reps, num_checkpoints)
    mask, budgets = _instances(params, budget)
    num_inst, batched = budgets.shape[0], mask.ndim == 2
    keys, per_rep = _entry.keys_of(key, num_inst, batched, num_reps)
    horizon = _checks.static_horizon(int(budgets.max()) if horizon is None else horizon)
    _checks.checkpoint_times(num_checkpoints, horizon)
    real = mask.reshape(num_inst, -1).sum(-1)
    _checks.cells(bandit, params, budgets, real, horizon)
    _checks.policy_given(policy)
    metric = _checks.auto_metric(metric, policy)
    _checks.metric(metric)
    _checks.use(policy, metric, diagnostics)
    _checks.reward_model([policy], bandit, [params], check_model)
    if store is not None and return_state:
        raise ValueError("return_state cannot be combined with a store")
    source, numeric = runner.source_of(policy)
    registered = source.ident == ("registered", source.name)
    given = _entry.per_instance(
        source.name if registered else None, numbers, numeric, num_inst, batched
    )
    _checks.policy_fits(policy, mask.shape[-1], budgets, given)
    if registered:
        kwargs = {**dict(source.static), **numeric}
        runner.registry.check_budgets(source.name, kwargs, budgets, real)
    hp = _entry.prepared(source, numeric, mask.shape[-1], real, budgets)
    store = _entry.open_store(
        store,
        source,
        code=None if store is None else runner.code_of([source], bandit),
        policy=(source.ident, source.static, numeric, hp) + ((given,) if given else ()),
        bandit=bandit.name,
        params=params,
        key=key if keys.ndim == 1 else keys,
        budget=budgets,
        run=(num_reps, horizon, num_checkpoints, repr(metric), permute, record_arms)
        + ((True,) if diagnostics else ())
        + (("shared", tuple(shared)) if shared else ()),
    )
    if keys.ndim == 1:  # one key
        keys, params = _entry.instance_inputs(keys, params, batched, num_inst)
    elif not batched:
        params = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], params)
    # the policy's numbers ride with the per-cell ones: the runner is handed the
    # source made above, not the policy (which it would resolve again)
    numbers = {**numeric, **hp, **given} if numeric else hp
    if per_rep:  # every leaf per cell: each cell is split into its replications
        numbers = {
            k: v if k in hp or k in given else _per_instance(v, num_inst)
            for k, v in numbers.items()
        }
    lanes = _entry.lanes(
        numbers, params, budgets, keys, num_reps, horizon, per_rep=per_rep,
        shared=shared,
    )  # fmt: skip
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
    call = dict(
        progress=progress, report=report, batch_size=batch_size,
        memory_budget=memory_budget,
    )  # fmt: skip
    part = runner.Part(source, lanes, refill=refill)
    job = runner.Job(bandit, (part,), opts, store, call)
    (flat,) = runner.run(job)
    res = runner.to_result(flat, (num_inst, num_reps) if batched else (num_reps,))
    if is_fixed_confidence(policy):
        each = budgets[:, None] if batched else budgets[0]
        warn_capped("simulate", policy.spec.name, res.stopped, each)
    return res


def _per_instance(value, num_inst: int):
    """A number's value (a pytree) broadcast to a leading axis of ``num_inst``."""
    return jax.tree_util.tree_map(
        lambda x: np.broadcast_to(x, (num_inst, *np.shape(x))), value
    )


def _instances(params, budget) -> tuple[np.ndarray, np.ndarray]:
    """The arm mask of ``params`` (one instance ``[K]`` or a stack ``[N, K]``) and
    one budget per instance ``[N]`` (``N = 1`` for one instance)."""
    mask = _checks.mask(params)
    batched = mask.ndim == 2
    num_inst = mask.shape[0] if batched else 1
    if num_inst == 0:
        raise ValueError("params is an empty stack of instances (N = 0)")
    budgets = _checks.budget_array("budget", budget, num_inst if batched else None)
    if budgets.ndim == 1 and not batched:
        raise ValueError("budget must be a scalar for a single instance")
    return mask, np.broadcast_to(budgets, (num_inst,))
