"""The one-call tuner (:func:`tune`), the compile-once grid (:func:`grid_tune`) and
budget sweeps (:func:`tune_budgets`).

Which to use (numbers from ``python -m benchmarks.tuning``: 5 seeds, ratio = tuned
loss over the loss of a fine grid's optimum with 10x the simulations):

* One parameter: :func:`grid_tune` or :func:`tune`, about equal. ``n`` grid points on
  common random numbers need no tuning of the tuner; :func:`tune` (5-point grid, then
  ES steps) reached ratio <= 1.02 in 17/20 runs with half the simulations of a
  20-point grid, which itself did in 17/20. Neither helps where the loss is mostly
  noise (UCB-E's 0/1 identification error: 2/5 and 3/5).
* Two or more parameters: :func:`tune` with ``estimator="es"`` (default). A grid
  needs ``n ** d`` points; the tuner's 5 x 5 grid, ES steps on the grid's
  replications and a final paired comparison used a quarter of a 20 x 20 grid.
* ``estimator="pg"``: the score-function gradient of the softmax relaxation of an
  index policy (LSA, APT, UCB-E); one point per step, no smoothing scale, unbiased for
  the relaxed policy, but its variance grows with the horizon and the relaxed optimum
  need not be the hard policy's. On LSA alpha (T = 1000) its median ratio was 1.019
  against ES's 0.997; keep it for short horizons and Bayes objectives over a prior.
"""

from __future__ import annotations

import math
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optax

from jbandits.tuning import estimators, relaxed
from jbandits.tuning.objective import Objective, as_key
from jbandits.tuning.results import Evaluation, GridResult, Step, TuneResult, _ci, _fmt
from jbandits.tuning.space import Space


def _setup(policy, bandit, instance, space, budget, loss, metric, fixed, permute):
    space = space if isinstance(space, Space) else Space(space)
    objective = Objective(
        policy,
        bandit,
        instance,
        budget=budget,
        loss=loss,
        metric=metric,
        fixed=fixed,
        permute=permute,
    )
    objective.check_names(space.keys())
    return space, objective


def _reps(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 2:
        raise ValueError(f"{name} must be an integer >= 2, got {value!r}")
    return int(value)


# ------------------------------------------------------------------------- the grid
def grid_tune(
    policy,
    bandit,
    instance,
    *,
    space,
    budget: int,
    points: int = 20,
    num_reps: int = 200,
    loss: Any = "regret",
    metric: Any = None,
    fixed: dict | None = None,
    permute: bool = True,
    key: Any = 0,
    chunk: int | None = None,
    keep_per_rep: bool = False,
) -> GridResult:
    """Evaluate an even grid of ``points`` per parameter on common random numbers.

    One compiled program serves every point (the numbers are traced); every point
    sees the same replication keys, so the arg-min is decided on paired noise.

    Args:
      policy, bandit, instance, space, budget, loss, metric, fixed, permute: as in
        :func:`tune`.
      points: grid points per parameter (cell centres of the normalised range).
      num_reps: replications per point (>= 2).
      key: key or int seed.
      chunk: lanes per compiled call (default ``min(all lanes, 1024)``).
      keep_per_rep: also return the ``[G, R]`` per-replication losses.

    Returns:
      A :class:`GridResult`.

    Raises:
      ValueError: bad space, names, budget, ``points`` < 1 or ``num_reps`` < 2.

    Example::

        bandit, params = jbandits.envs.bernoulli(means)
        g = jbandits.tune.grid_tune("lsa", bandit, params, budget=1000,
                                    space={"alpha": LogSpace(0.05, 20.0)},
                                    fixed={"threshold": 0.5}, points=20,
                                    loss="misclassified",
                                    metric=jbandits.metrics.thresholding(0.5))
        g.theta   # {"alpha": ...}
    """
    space, objective = _setup(
        policy, bandit, instance, space, budget, loss, metric, fixed, permute
    )
    num_reps = _reps("num_reps", num_reps)
    z = space.grid(points)
    chunk = chunk or min(len(z) * num_reps, 1024)
    per_rep = objective.losses(
        space.batch_from_z(z), as_key(key), num_reps, chunk=chunk
    )
    mean = per_rep.mean(1)
    se = per_rep.std(1, ddof=1) / math.sqrt(num_reps)
    best = int(np.nanargmin(mean))
    return GridResult(
        thetas=space.batch_from_z(z),
        z=z,
        loss=mean,
        loss_se=se,
        theta=space.from_z(z[best]),
        simulations=len(z) * num_reps,
        per_rep=per_rep if keep_per_rep else None,
    )


# ------------------------------------------------------------------------ the tuner
def default_optimizer(learning_rate: float = 0.1, decay: float = 5.0):
    """Adam on a step ``learning_rate / (1 + step / decay)`` (normalised units)."""
    return optax.adam(lambda n: learning_rate / (1.0 + n / decay), b1=0.5)


def tune(
    policy,
    bandit=None,
    instance=None,
    *args,
    space=None,
    budget: int | None = None,
    loss: Any = "regret",
    metric: Any = None,
    fixed: dict | None = None,
    estimator: str = "es",
    start: Any = None,
    simulations: int = 4000,
    num_reps: int = 100,
    init_points: int | None = None,
    starts: int = 1,
    optimizer: optax.GradientTransformation | None = None,
    sigma: float | None = None,
    num_pairs: int | None = None,
    max_steps: int = 100,
    snr_stop: float | None = None,
    patience: int = 5,
    average: bool = True,
    crn: bool | None = None,
    select: float | None = None,
    temperature: float = 1.0,
    evaluate: int = 0,
    permute: bool = True,
    key: Any = 0,
    verbose: bool = False,
    **legacy,
) -> TuneResult:
    """Tune a policy's hyper-parameters by simulation: one call, compiled once.

    The objective is the mean ``loss`` of ``policy(**fixed, **theta)`` over
    replications of a budget-``budget`` run on ``instance`` (or on instances drawn from
    a prior). Steps run on :func:`jbandits.runner.execute` with a fixed chunk shape,
    so the program is compiled once and cached: later calls with other starting
    points, keys or budgets (same policy, bandit, K and options) compile nothing.

    Procedure: (1) unless ``start`` is given, a coarse grid of ``init_points`` per
    parameter on common random numbers picks the ``starts`` best points, each moved
    to the vertex of the parabola through it and its grid neighbours; (2) from
    each, an optax optimiser (default :func:`default_optimizer`: Adam with a
    decaying step) follows the ES or policy-gradient estimate in normalised
    coordinates (see :mod:`jbandits.tuning.space`) until the simulations are spent,
    ``max_steps`` is reached, or (with ``snr_stop``) the mean gradient of the last
    ``patience`` steps is within ``snr_stop`` standard errors of 0; a non-finite
    estimate is rejected (theta is kept); (3) each start's candidate is the average of
    the second half of its iterates (Polyak-Ruppert averaging; Polyak and Juditsky,
    SIAM J. Control Optim. 1992); (4) with ``select`` > 0, a share of the simulations
    is kept for a final paired comparison on fresh common replications between these
    averages, the start and the best point evaluated during the search (with ``crn``
    the grid and every ES step share one set of replications, so their means are
    comparable): the lowest mean wins. The averaged ES iterate minimises a smoothed
    loss, which sits away from a steep edge of the landscape; the comparison lets an
    evaluated point closer to the edge win when it is better.

    Args:
      policy: a registered name (``"lsa"``), a Policy from :func:`jbandits.make`
        (its arguments are kept fixed except the tuned ones) or a factory
        ``(**kwargs) -> Policy``.
      bandit: the reward family.
      instance: an instance (``params``), or a prior ``key -> params`` traced inside
        the program (a Bayes objective: each replication draws its instance).
      space: ``{name: Box | LogSpace | Logit}`` (a pytree; names are the factory's
        keyword arguments).
      budget: the run's budget T.
      loss: ``"regret"``, a metric name (``"misclassified"``, ``"error"``,
        ``"simple_regret"``, needs ``metric``), ``"reward"`` (maximised) or a
        function ``RunResult -> [P, R]`` losses.
      metric: a :mod:`jbandits.metrics` metric.
      fixed: the policy's other keyword arguments (``threshold``, ``horizon``, ...).
      estimator: ``"es"`` (antithetic ES, any policy) or ``"pg"`` (score function
        of the softmax relaxation; index policies LSA, APT, UCB-E).
      start: a ``theta`` pytree (or a list of them) to start from instead of the grid.
      simulations: total simulations for the search (grid included).
      num_reps: replications per evaluated point (>= 2).
      init_points: coarse-grid points per parameter (default 5 for d <= 2, 3
        beyond; for EUCBV (rho, psi) a 5 x 5 grid reached the edge of the low-regret
        valley that a 4 x 4 one missed: mean ratio to the fine grid 1.013 -> 1.007
        over 5 seeds, with the final comparison).
      starts: how many of the best grid points to start from (multi-start).
      optimizer: any ``optax.GradientTransformation`` (acts on normalised coords).
      sigma: ES smoothing scale in normalised coordinates (0 < sigma < 0.5);
        default 0.1 for one parameter, 0.05 for more (measured on EUCBV (rho, psi):
        a wider smoothing moved the optimum of the smoothed objective).
      num_pairs: ES antithetic pairs per step (default 1 for d = 1, else d).
      max_steps: at most this many steps per start.
      snr_stop: if set (e.g. 1.0), stop when the mean gradient of the last
        ``patience`` steps is within ``snr_stop`` standard errors of 0: it saves
        simulations once converged, but can also stop on a plateau (off by
        default; every step's SNR is in ``path`` either way).
      average: return the averaged iterate (else the last one).
      crn: every ES step reuses the coarse grid's replication keys (default: for two
        or more parameters); otherwise each step draws fresh replications.
      select: share of ``simulations`` kept for the final comparison (default 0.2 for
        two or more parameters, 0 for one, where the budget is a few steps); it is
        skipped when there is a single candidate.
      temperature: softmax temperature of the ``"pg"`` relaxation (index units).
      evaluate: if > 0, evaluate the tuned theta, the start and the best grid point
        on this many fresh common replications each (:class:`Evaluation`).
      permute: random arm relabelling per replication.
      key: a key or an int seed.
      verbose: print every step.

    Returns:
      A :class:`TuneResult`.

    Raises:
      ValueError: an empty or malformed space, a parameter the policy does not take,
        a NaN / out-of-range ``start``, bad bounds, an unknown estimator or loss, a
        policy without an index for ``"pg"``, ``num_reps`` < 2, ``sigma`` outside
        (0, 0.5).

    Example::

        bandit, params = jbandits.envs.bernoulli(means)
        res = jbandits.tune.tune("lsa", bandit, params, budget=1000,
                                 space={"alpha": LogSpace(0.05, 20.0)},
                                 fixed={"threshold": 0.5}, loss="misclassified",
                                 metric=jbandits.metrics.thresholding(0.5),
                                 simulations=2000, evaluate=2000)
        res.theta, res.evaluation.paired["tuned - grid"]
    """
    if isinstance(instance, optax.GradientTransformation):  # tune(loss, theta0, opt)
        return estimators.minimize(
            policy,
            bandit,
            instance,
            *args,
            key=key,
            sigma=0.1 if sigma is None else sigma,
            num_pairs=num_pairs or 8,
            verbose=verbose,
            **legacy,
        )
    if args or legacy:
        raise TypeError(f"unexpected arguments {args or ''} {sorted(legacy)}")
    if space is None or budget is None:
        raise ValueError("tune needs space={...} and budget=...")
    t0 = time.perf_counter()
    space, objective = _setup(
        policy, bandit, instance, space, budget, loss, metric, fixed, permute
    )
    num_reps = _reps("num_reps", num_reps)
    if sigma is None:
        sigma = 0.1 if space.dim == 1 else 0.05
    if not 0.0 < sigma < 0.5:
        raise ValueError(f"sigma must lie in (0, 0.5) (normalised units), got {sigma}")
    if estimator not in ("es", "pg"):
        raise ValueError(f"estimator must be 'es' or 'pg', got {estimator!r}")
    d = space.dim
    num_pairs = num_pairs or (1 if d == 1 else d)
    crn = d > 1 if crn is None else bool(crn)
    select = (0.0 if d == 1 else 0.2) if select is None else float(select)
    if not 0.0 <= select < 1.0:
        raise ValueError(f"select must lie in [0, 1), got {select}")
    key = as_key(key)
    k_init, k_steps, k_pick, k_eval = jax.random.split(key, 4)
    if estimator == "pg":
        if (
            not isinstance(objective.policy, str)
            or objective.policy not in relaxed.INDEX
        ):
            raise ValueError(
                "estimator='pg' needs an index policy given by name, one of "
                f"{sorted(relaxed.INDEX)}; use estimator='es'"
            )
        pg_objective = _relaxed_copy(objective, space, temperature)
        chunk = num_reps
        cost = num_reps
    else:
        chunk = 2 * num_pairs * num_reps
        cost = chunk
    sims = 0
    init = None
    grid_best = None
    seen = []  # (points [n, d], mean losses [n]) on the shared keys (crn)
    if start is None:
        n0 = init_points or (5 if d <= 2 else 3)
        z_grid = space.grid(n0)
        per = objective.losses(
            space.batch_from_z(z_grid), k_init, num_reps, chunk=chunk
        )
        sims += per.size
        means = per.mean(1)
        seen.append((z_grid, means))
        order = np.argsort(np.where(np.isfinite(means), means, np.inf))
        z_starts = np.stack(  # parabolic refinement of the best grid points
            [_parabolic(z_grid, means, i, n0) for i in order[: max(1, starts)]]
        )
        init = (np.stack([space.to_natural(z) for z in z_grid]), means)
        grid_best = space.from_z(z_grid[order[0]])
        step0 = 0.25 / n0  # a quarter of the grid spacing
    else:
        starts_list = start if isinstance(start, (list, tuple)) else [start]
        z_starts = np.stack([space.to_z(s) for s in starts_list])
        step0 = 0.1
    opt = optimizer or default_optimizer(step0)
    reserve = int(select * simulations)
    budget_left = max(0, simulations - sims - reserve)
    per_start = budget_left // len(z_starts)
    candidates, path, rejected, stopped = [], [], 0, "max_steps"
    step_keys = jax.random.split(k_steps, len(z_starts))
    for s, z0 in enumerate(z_starts):
        z = np.asarray(z0, np.float64)
        state = opt.init(jnp.asarray(z))
        iterates, recent, spent = [z.copy()], [], 0
        stopped = "max_steps"
        for i in range(max_steps):
            if spent + cost > per_start:
                stopped = "budget"
                break
            k = jax.random.fold_in(step_keys[s], i)
            if estimator == "es":
                est = estimators.es_gradient(
                    objective,
                    space,
                    z,
                    k,
                    sigma=sigma,
                    num_pairs=num_pairs,
                    num_reps=num_reps,
                    chunk=chunk,
                    run_key=k_init if crn else None,
                    record=seen if crn else None,
                )
            else:
                est = estimators.pg_gradient(
                    pg_objective, space, z, k, num_reps=num_reps, chunk=chunk
                )
            value, value_se, grad, grad_se, used = est
            spent += used
            ok = estimators.finite(value, grad)
            snr = (
                float(np.sqrt(np.sum(grad**2) / max(np.sum(grad_se**2), 1e-300)))
                if ok
                else float("nan")
            )
            if ok:
                updates, state = opt.update(jnp.asarray(grad), state, jnp.asarray(z))
                z = space.clip(z + np.asarray(updates, np.float64))
                iterates.append(z.copy())
            else:
                rejected += 1
            path.append(Step(space.from_z(z), value, value_se, grad, grad_se, snr, ok))
            if verbose:
                print(
                    f"start {s} step {i:3d} loss {value:.4g} +- {value_se:.2g} "
                    f"snr {snr:.2f} -> {_fmt(space.from_z(z))}"
                )
            if ok:
                recent.append((grad, grad_se))
            if snr_stop is not None and len(recent) >= patience:
                g_win = np.mean([g for g, _ in recent[-patience:]], axis=0)
                se_win = np.sqrt(np.sum([e**2 for _, e in recent[-patience:]], 0))
                se_win /= patience
                if np.sum(g_win**2) <= snr_stop**2 * np.sum(se_win**2):
                    stopped = "snr"
                    break
        sims += spent
        tail = iterates[len(iterates) // 2 :] if average else iterates[-1:]
        candidates.append(space.clip(np.mean(tail, axis=0)))
    named = {f"average {s}": z for s, z in enumerate(candidates)}
    race = None
    if reserve:
        named["start"] = z_starts[0]
        if seen and (crn or start is None):
            pts = np.concatenate([p for p, _ in seen])
            vals = np.concatenate([v for _, v in seen])
            if np.isfinite(vals).any():
                named["best evaluated"] = space.clip(pts[int(np.nanargmin(vals))])
        named = _distinct(named)
        race_reps = reserve // len(named)
        if len(named) > 1 and race_reps >= 2:
            z_c = np.stack(list(named.values()))
            per = objective.losses(
                space.batch_from_z(z_c), k_pick, race_reps, chunk=chunk
            )
            sims += per.size
            means = per.mean(1)
            race = {
                n: (space.from_z(z), float(m))
                for (n, z), m in zip(named.items(), means, strict=True)
            }
            z_best = z_c[int(np.nanargmin(np.where(np.isfinite(means), means, np.inf)))]
    if race is None and len(candidates) > 1:  # pick among the starts
        z_c = np.stack(candidates)
        per = objective.losses(space.batch_from_z(z_c), k_pick, num_reps, chunk=chunk)
        sims += per.size
        z_best = z_c[int(np.nanargmin(per.mean(1)))]
    elif race is None:
        z_best = candidates[0]
    theta = space.from_z(z_best)
    result = TuneResult(
        theta=theta,
        start=space.from_z(z_starts[0]),
        path=path,
        simulations=int(sims),
        stopped=stopped,
        rejected=rejected,
        init=init,
        seconds=time.perf_counter() - t0,
        extra={"z": z_best, "space": space, "chunk": chunk, "race": race},
    )
    if evaluate:
        rows = {"tuned": theta, "start": result.start}
        if grid_best is not None:
            rows["grid"] = grid_best
        result.evaluation = evaluate_points(
            objective, space, rows, num_reps=int(evaluate), key=k_eval, chunk=chunk
        )
    return result


def _distinct(named: dict) -> dict:
    """Drop candidates equal (within 1e-9) to an earlier one."""
    out = {}
    for name, z in named.items():
        if all(np.max(np.abs(z - o)) > 1e-9 for o in out.values()):
            out[name] = np.asarray(z, np.float64)
    return out


def _parabolic(z_grid: np.ndarray, means: np.ndarray, best: int, n: int) -> np.ndarray:
    """Grid point ``best`` moved, along each axis, to the vertex of the parabola
    through it and its two neighbours (successive parabolic interpolation; Brent,
    *Algorithms for Minimization without Derivatives*, 1973, ch. 5), by at most half
    a grid spacing; unchanged where the parabola is not convex or a neighbour is
    missing. Costs no simulation."""
    z = z_grid[best].copy()
    h = 1.0 / n
    for axis in range(z_grid.shape[1]):
        f = []
        for sign in (-1, 1):
            target = z_grid[best].copy()
            target[axis] += sign * h
            hit = np.flatnonzero(np.all(np.abs(z_grid - target) < 1e-9, axis=1))
            f.append(means[hit[0]] if hit.size else np.nan)
        lo, hi, mid = f[0], f[1], means[best]
        curv = lo - 2.0 * mid + hi
        if np.isfinite(curv) and curv > 0:
            z[axis] += float(np.clip(0.5 * h * (lo - hi) / curv, -0.5 * h, 0.5 * h))
    return z


def _relaxed_copy(objective: Objective, space: Space, temperature: float):
    import copy

    from jbandits import registry

    pg = copy.copy(objective)
    static, _ = registry.split_kwargs(
        {**objective.fixed, "num_arms": objective.num_arms}, objective.policy
    )
    pg.source = relaxed.source(
        objective.policy, static, tuple(space.keys()), temperature
    )
    return pg


def evaluate_points(
    objective: Objective, space: Space, rows: dict, *, num_reps: int, key, chunk: int
) -> Evaluation:
    """Mean loss with 95% CIs of named points on common fresh replications, and the
    paired differences ``tuned - other``."""
    num_reps = _reps("evaluate", num_reps)
    names = list(rows)
    z = np.stack([space.to_z(rows[n]) for n in names])
    per = objective.losses(space.batch_from_z(z), key, num_reps, chunk=chunk)
    out = {n: (rows[n], *_ci(per[i])) for i, n in enumerate(names)}
    paired = {}
    if "tuned" in names:
        t = names.index("tuned")
        for i, n in enumerate(names):
            if n != "tuned":
                paired[f"tuned - {n}"] = _ci(per[t] - per[i])
    return Evaluation(out, paired, num_reps, per.size)


def tune_budgets(policy, bandit, instance, *, budgets, **kwargs) -> dict:
    """``theta`` as a function of the budget: :func:`tune` for each budget in turn.

    The first budget starts from the coarse grid, each next one from the previous
    optimum (warm start). The budget is traced, so every budget reuses one program
    (except for policies whose horizon is static, such as EUCBV).

    Returns:
      ``{budget: TuneResult}``.
    """
    out, start = {}, kwargs.pop("start", None)
    for b in budgets:
        res = tune(policy, bandit, instance, budget=int(b), start=start, **kwargs)
        out[int(b)] = res
        start = res.theta
    return out
