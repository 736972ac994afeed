"""The one-call tuner (:func:`tune`) and budget sweeps (:func:`tune_budgets`).

Which to use: :func:`grid_tune` or :func:`tune` for one parameter (about equal);
:func:`tune` for two or more (a halved grid, ES steps and a race use a quarter of a
20 x 20 grid and came closer to the optimum, and beat TPE more often, than a 5 x 5
grid); ``estimator=PG()`` for index policies on short horizons or Bayes objectives.
The runs behind each choice: ``benchmarks/notes_tuning_tasks.md``.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import jax
import numpy as np
import optax

from jbandits.analysis.stats import count
from jbandits.tuning import (
    allocation,
    choosing,
    confidence,
    estimators,
    options,
    relaxed,
)
from jbandits.tuning.choosing import Descent, descend
from jbandits.tuning.objective import Objective, as_key
from jbandits.tuning.options import ES, PG, Plan, Report, Search
from jbandits.tuning.results import TuneResult
from jbandits.tuning.space import Space


def default_optimizer(learning_rate: float = 0.1, decay: float = 5.0):
    """Adam on a step ``learning_rate / (1 + step / decay)`` (normalised units)."""
    return optax.adam(lambda n: learning_rate / (1.0 + n / decay), b1=0.5)


_SEARCH, _ES, _REPORT = Search(), ES(), Report()  # the defaults (frozen)


def tune(
    objective: Objective,
    space,
    *,
    search: Search = _SEARCH,
    estimator: ES | PG = _ES,
    report: Report = _REPORT,
    key: Any = 0,
) -> TuneResult:
    """Tune a policy's hyper-parameters by simulation: one call, compiled once.

    The objective is the mean loss of ``policy(**fixed, **theta)`` over replications
    of a budget-``budget`` run on an instance (or on instances drawn from a prior):
    an :class:`Objective`. Steps run on :func:`jbandits.sweep` with a fixed chunk
    shape, so the program is compiled once and cached: later calls with other
    starting points, keys or budgets (same policy, bandit, K and options) compile
    nothing.

    A grid (or ``search.start``) gives the start, an optax optimiser follows the
    ES or policy-gradient estimate in normalised coordinates (a non-finite estimate
    is rejected), the iterates are averaged and, for two or more parameters, a final
    comparison on fresh common replications lets an evaluated point closer to a
    steep edge win when it is better (:class:`Search` has the details).

    Args:
      objective: what to minimise: ``Objective(policy, bandit, instance,
        budget=..., loss=..., metric=..., fixed=..., permute=...)``.
      space: ``{name: Box | LogSpace | Logit}`` (a pytree; names are the policy's
        keyword arguments) or a :class:`Space`.
      search: the simulation budget and the search (:class:`Search`).
      estimator: :class:`ES` (antithetic ES, any policy) or :class:`PG` (score
        function of the softmax relaxation; index policies LSA, APT, UCB-E).
      report: the final evaluation and printing (:class:`Report`).
      key: a key or an int seed.

    Returns:
      A :class:`TuneResult`.

    Raises:
      ValueError: an empty or malformed space, a parameter the policy does not take,
        a NaN / out-of-range start, bad bounds, an option group of the wrong type, a
        policy without an index for :class:`PG`.

    Example::

        bandit, params = jbandits.envs.bernoulli(means)
        objective = Objective("lsa", bandit, params, budget=1000,
                              fixed={"threshold": 0.5}, loss="misclassified",
                              metric=jbandits.analysis.metrics.thresholding(0.5))
        res = jbandits.tuning.tune(objective, {"alpha": LogSpace(0.05, 20.0)},
                                 search=Search(simulations=2000),
                                 report=Report(evaluate=2000))
        res.theta, res.evaluation.paired["tuned - grid"]
    """
    t0 = time.perf_counter()
    plan = _plan(objective, space, search, estimator, report)
    _check_simulations(plan)
    space = plan.space
    k_init, k_steps, k_pick, k_eval = jax.random.split(as_key(key), 4)
    reserve = int(plan.select * search.simulations)
    starts = choosing.starting_points(plan, k_init, search.simulations - reserve)
    opt = search.optimizer or default_optimizer(starts.step0)
    budget_left = max(0, search.simulations - starts.sims - reserve)
    estimate = _estimate_fn(plan, k_init, starts.seen)
    runs: list[Descent] = []
    step_keys = jax.random.split(k_steps, len(starts.z))
    for s, z0 in enumerate(starts.z):
        runs.append(
            descend(
                estimate,
                space,
                opt,
                z0,
                step_keys[s],
                allowance=budget_left // len(starts.z),
                cost=plan.cost,
                verbose=report.verbose,
                label=s,
            )
        )
    candidates = [run.candidate for run in runs]
    z_best, race, used = choosing.pick(plan, candidates, starts, reserve, k_pick)
    theta = space.from_z(z_best)
    result = TuneResult(
        theta=theta,
        start=space.from_z(starts.z[0]),
        path=[step for run in runs for step in run.path],
        simulations=int(starts.sims + sum(run.spent for run in runs) + used),
        stopped=runs[-1].stopped,
        rejected=sum(run.rejected for run in runs),
        init=starts.init,
        seconds=time.perf_counter() - t0,
        method=plan.method,
        extra={
            "z": z_best,
            "space": space,
            "chunk": plan.chunk,
            "race": race,
            **starts.extra,
        },
    )
    confidence.attach(
        result,
        plan.objective,
        space,
        report,
        search.num_reps,
        grid=(
            starts.grid_best,
            choosing.best_evaluated(space, starts),
            starts.grid_per,
        ),
        key=k_eval,
        chunk=plan.chunk,
    )
    return result


def _plan(objective, space, search, estimator, report) -> Plan:
    if not isinstance(objective, Objective):
        raise ValueError(
            "tune(objective, space, ...) takes an Objective(policy, bandit, instance, "
            f"budget=..., ...), got {type(objective).__name__}"
        )
    options.check(search, estimator, report)
    space = space if isinstance(space, Space) else Space(space)
    objective.check_names(space.keys())
    select = search.select_for(space.dim)
    if isinstance(estimator, PG):
        if (
            not isinstance(objective.policy, str)
            or objective.policy not in relaxed.INDEX
        ):
            raise ValueError(
                "the PG estimator needs an index policy given by name, one of "
                f"{sorted(relaxed.INDEX)}; use ES()"
            )
        pg = _relaxed_copy(objective, space, estimator.temperature)
        n = search.num_reps
        plan = Plan(objective, space, search, estimator, pg, select, n, n)
    else:
        es = estimator.resolved(space.dim)
        chunk = 2 * es.num_pairs * search.num_reps
        plan = Plan(objective, space, search, es, objective, select, chunk, chunk)
    design = _design(search, space.dim, select)
    plan.init_points = design[0]
    plan.method = _describe(search, plan.estimator, space.dim, select, design)
    return plan


def _design(search: Search, dim: int, select: float) -> tuple[int, str]:
    """``(points per axis of the starting grid, why)``; 0 from ``search.start``."""
    if search.start is not None:
        return 0, "Search(start=...) given: no starting grid"
    if search.halving_for(dim):
        return allocation.halving_design(
            dim, search.simulations, select, allocation.HALVING_KEEP
        )
    n = options.GRID_POINTS
    return n, f"{n} points per axis (the default grid for {dim} parameter(s))"


def _describe(search: Search, estimator, dim: int, select: float, design) -> dict:
    """``TuneResult.method``: ``allocation``, ``design``, ``estimator``, ``final``
    (what ran) and ``why`` (one sentence for each)."""
    if search.start is not None:
        name, a_why = "start", "Search(start=...) given: no grid"
    elif dim == 1:
        name = "grid"
        a_why = "the default for one parameter: an even grid, then ES steps"
    else:
        name, a_why = (
            "halving",
            (
                f"the default for {dim} parameters: successive halving of a grid, ES "
                "steps, a race between the candidates"
            ),
        )
    if isinstance(estimator, PG):
        est, e_why = f"PG(temperature={estimator.temperature:g})", "given"
    else:
        est = f"ES(sigma={estimator.sigma:g}, num_pairs={estimator.num_pairs}, "
        est += f"crn={estimator.crn}"
        if np.isfinite(estimator.sigma_decay):
            est += f", sigma_decay={estimator.sigma_decay:g}"
        est += ")"
        e_why = "the default (any policy)" if estimator == ES().resolved(dim) else ""
        e_why = e_why or "given (unset fields: their defaults for this dimension)"
    if select <= 0:
        final, f_why = "none", "select=0: the descent's average is the result"
    elif search.halving_for(dim):
        final, f_why = "race", f"select={select:g} of the simulations, as a race"
    else:
        final = "equal shares"
        f_why = f"select={select:g} of the simulations, equal shares"
    return {
        "allocation": name,
        "design": " x ".join([str(design[0])] * dim) if design[0] else "none",
        "estimator": est,
        "final": final,
        "why": {
            "allocation": a_why,
            "design": design[1],
            "estimator": e_why,
            "final": f_why,
        },
    }


def int_like(value):
    """A NumPy integer scalar (or 0-d integer array) as an int; anything else as it
    is (for the integer checks, which refuse floats and bools)."""
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    return int(value) if isinstance(value, np.integer) else value


def _check_simulations(plan: Plan) -> None:
    """ValueError unless ``search.simulations`` covers what the search spends
    before it can stop (the grid, the halving's first replications, or one gradient
    estimate from ``start``): a budget it cannot honour is refused, never
    overspent."""
    search, select = plan.search, plan.select
    points = len(plan.space.grid(plan.init_points)) if plan.init_points else 0
    halving = search.halving_for(plan.space.dim)
    share = allocation.halving_share(plan.space.dim)
    if not points:
        first = plan.cost
        what = f"one gradient estimate from start ({first} simulations)"
    elif halving:
        first = 2 * points
        what = (
            f"successive halving of {points} grid points (at least 2 replications "
            f"per survivor and round, within what select={select:g} leaves)"
        )
    else:
        first = points * search.num_reps
        what = (
            f"the coarse grid ({points} points x num_reps={search.num_reps} = "
            f"{first} simulations, besides select={select:g}'s reserve)"
        )

    def enough(sims):  # with halving, the steps get what the halving leaves
        left = sims - int(select * sims)
        if halving and points:
            spend = allocation.halving_spend(
                points, int(share * left), allocation.HALVING_KEEP
            )
            return spend <= left
        return left >= first

    if enough(search.simulations):
        return
    need = first
    while not enough(need):
        need += 1
    raise ValueError(
        f"Search(simulations={search.simulations}) cannot be honoured: {what} "
        f"needs simulations >= {need}; raise simulations, or lower num_reps"
    )


def _estimate_fn(plan: Plan, k_init, seen: list):
    """``(z, key, step) -> (value, value_se, grad, grad_se, used)`` of the
    estimator (``step``: the ES smoothing's schedule, ``ES.sigma_decay``)."""
    num_reps, chunk = plan.search.num_reps, plan.chunk
    if isinstance(plan.estimator, PG):
        return lambda z, k, i: estimators.pg_gradient(
            plan.estimate_on, plan.space, z, k, num_reps=num_reps, chunk=chunk
        )
    es = plan.estimator
    return lambda z, k, i: estimators.es_gradient(
        plan.objective,
        plan.space,
        z,
        k,
        sigma=es.sigma / (1.0 + i / es.sigma_decay),
        num_pairs=es.num_pairs,
        num_reps=num_reps,
        chunk=chunk,
        run_key=k_init if es.crn else None,
        record=seen if es.crn else None,
    )


def _relaxed_copy(objective: Objective, space: Space, temperature: float):
    import copy

    from jbandits.core import registry

    pg = copy.copy(objective)
    static, _ = registry.split_kwargs(
        {**objective.fixed, "num_arms": objective.num_arms}, objective.policy
    )
    pg.source = relaxed.source(
        objective.policy, static, tuple(space.keys()), temperature
    )
    return pg


def tune_budgets(
    objective: Objective,
    space,
    *,
    budgets,
    search=_SEARCH,
    estimator=_ES,
    report=_REPORT,
    key=0,
) -> dict:
    """``theta`` as a function of the budget: :func:`tune` for each budget in turn
    (``search``, ``estimator``, ``report``, ``key``: as in :func:`tune`).

    ``objective``'s own budget is replaced by each of ``budgets``. The first budget
    starts from ``search.start`` (by default the coarse grid), each next one from
    the previous optimum (warm start). The budget is traced, so every budget reuses
    one program (except for policies whose horizon is static, such as EUCBV).

    Returns:
      ``{budget: TuneResult}``.

    Raises:
      ValueError: ``budgets`` empty or not integers >= 1 (before anything runs).
    """
    if isinstance(budgets, (str, bytes)) or not hasattr(budgets, "__iter__"):
        budgets = None
    budgets = None if budgets is None else list(budgets)
    if not budgets:
        raise ValueError(
            "tune_budgets(budgets=...) must be a non-empty list of budgets"
        )
    budgets = [count("budgets[]", int_like(b), 1) for b in budgets]
    out = {}
    for b in budgets:
        res = tune(
            objective.with_budget(int(b)),
            space,
            search=search,
            estimator=estimator,
            report=report,
            key=key,
        )
        out[int(b)] = res
        search = dataclasses.replace(search, start=res.theta)
    return out
