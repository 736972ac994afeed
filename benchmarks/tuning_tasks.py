"""Broad tuning benchmark (issue 40): 14 tasks over the three settings.

    python -m benchmarks.tuning_tasks                  # full size (hours on 2 cores)
    python -m benchmarks.tuning_tasks --reduced        # minutes: smaller T, R, grids
    python -m benchmarks.tuning_tasks --only "optkg,ucb-e" --seeds 3

Tasks: regret, thresholding and identification; 7 with two parameters; prior-strength
parameters (Thompson's ``prior_var``, OptKG's ``(prior_a, prior_b)``, Bayes-UCB's
``noise_var``), oracle constants (UCB-E's and UGapE's ``a``, GapE's ``a``, UCBE's
``a``) and Bayes objectives whose loss is averaged over a prior of instances.

Per task and *budget* (the share of a standard grid of 20 points per parameter x
``R`` replications: by default 1/2 for one parameter and 1/4 for two, the issue's
acceptance budgets, and half of that), three *methods* spend the same simulations:

* ``tune``: :func:`jbandits.tune.tune` with its defaults;
* ``grid``: an even grid of ``n`` points per parameter on common random numbers,
  ``n ** d x R`` <= the budget;
* ``tpe``: optuna's TPE (optional dependency, ``pip install jbandits[tuning]``),
  ``budget / R`` trials of ``R`` common replications.

The reference is a *fine grid* (41 points, or 15 x 15) given ``--fine`` times the
tuner's simulations; its arg-min and every method's pick are evaluated on the same
``--eval`` fresh replications, and ratio = method's loss / the reference's. The
table gives per task, method and budget the median, 90th percentile and max ratio,
the share of seeds with ratio <= 1.02 and, for ``tune``, its wins against TPE.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import numpy as np

from jbandits import envs, metrics
from jbandits.tune import Box, LogSpace, Objective, Report, Search, Space, tune

THR, IDENT = metrics.thresholding(0.5), metrics.identification()
REGRET10 = np.r_[0.5, np.full(9, 0.45)]
THRESH10 = np.linspace(0.35, 0.65, 10)
IDENT8 = np.r_[0.6, 0.55, np.full(6, 0.45)]


def _bern_prior(k: int, lo: float, hi: float) -> Callable:
    return lambda key: envs.bernoulli(
        jax.random.uniform(key, (k,), minval=lo, maxval=hi)
    )[1]


def _gauss_prior(k: int) -> Callable:
    return lambda key: envs.gaussian(jax.random.normal(key, (k,)), np.ones(k))[1]


@dataclass
class Task:
    name: str
    setting: str  # "regret" | "thresholding" | "identification"
    policy: str
    instance: object  # means ([K] Bernoulli) or a prior key -> params
    budget: int
    space: dict
    loss: str
    fixed: dict = field(default_factory=dict)
    metric: object = None
    gaussian: bool = False  # a Gaussian family (for the prior's bandit)

    def objective(self, budget_scale: float = 1.0) -> Objective:
        budget = max(20, int(self.budget * budget_scale))
        fixed = {k: (budget if k == "horizon" else v) for k, v in self.fixed.items()}
        if callable(self.instance):
            bandit = envs.GAUSSIAN if self.gaussian else envs.BERNOULLI
            params = self.instance
        else:
            bandit, params = envs.bernoulli(self.instance)
        return Objective(
            self.policy,
            bandit,
            params,
            budget=budget,
            loss=self.loss,
            metric=self.metric,
            fixed=fixed,
        )


def tasks() -> list[Task]:
    thr = {"threshold": 0.5}
    return [
        # regret
        Task("UCB1 alpha", "regret", "ucb1", REGRET10, 1000,
             {"alpha": LogSpace(0.01, 10.0)}, "regret"),
        Task("KL-UCB c", "regret", "klucb", REGRET10, 1000,
             {"c": Box(0.0, 3.0)}, "regret"),
        Task("Thompson prior_var (prior)", "regret", "thompson", _gauss_prior(8),
             500, {"prior_var": LogSpace(0.01, 100.0)}, "regret",
             {"posterior": "gauss"}, gaussian=True),
        Task("UCB-V (c, zeta) (prior)", "regret", "ucbv",
             _bern_prior(10, 0.3, 0.7), 1000,
             {"c": Box(0.0, 2.0), "zeta": Box(0.2, 2.5)}, "regret"),
        Task("EUCBV (rho, psi)", "regret", "eucbv", REGRET10, 1000,
             {"rho": Box(0.05, 2.0), "psi": LogSpace(1e-3, 1000.0)}, "regret",
             {"horizon": 1000}),
        Task("OC-UCB (alpha, psi)", "regret", "ocucb", REGRET10, 1000,
             {"alpha": LogSpace(0.1, 10.0), "psi": LogSpace(1.01, 10.0)}, "regret",
             {"horizon": 1000}),
        Task("Bayes-UCB (c, noise_var) (prior)", "regret", "bayes_ucb",
             _gauss_prior(8), 500,
             {"c": Box(0.0, 5.0), "noise_var": LogSpace(0.05, 20.0)}, "regret",
             {"posterior": "gauss", "horizon": 500}, gaussian=True),
        # thresholding
        Task("LSA alpha (prior)", "thresholding", "lsa", _bern_prior(10, 0.3, 0.7),
             600, {"alpha": LogSpace(0.02, 20.0)}, "misclassified", thr, THR),
        Task("UCBE-thr a (oracle)", "thresholding", "ucbe", THRESH10, 600,
             {"a": LogSpace(0.1, 1000.0)}, "misclassified", thr, THR),
        Task("OptKG (prior_a, prior_b)", "thresholding", "optkg", THRESH10, 600,
             {"prior_a": LogSpace(0.1, 20.0), "prior_b": LogSpace(0.1, 20.0)},
             "misclassified", thr, THR),
        # identification
        Task("UCB-E a (oracle)", "identification", "ucb_e", IDENT8, 600,
             {"a": LogSpace(0.1, 1000.0)}, "error", {}, IDENT),
        Task("UGapE-b (a, epsilon) (oracle)", "identification", "ugapeb", IDENT8,
             600, {"a": LogSpace(0.01, 100.0), "epsilon": Box(0.0, 0.2)},
             "error", {"m": 1}, metrics.top_m(1)),
        Task("GapE (a, b)", "identification", "gape", IDENT8, 600,
             {"a": LogSpace(0.1, 1000.0), "b": LogSpace(0.1, 10.0)}, "error", {},
             IDENT),
        Task("UCB-E a (prior)", "identification", "ucb_e",
             _bern_prior(8, 0.2, 0.8), 600, {"a": LogSpace(0.1, 1000.0)}, "error",
             {}, IDENT),
    ]  # fmt: skip


def _grid_pick(obj, space, points, reps, key, chunk):
    z = space.grid(points)
    per = obj.losses(space.batch_from_z(z), key, reps, chunk=chunk)
    mean = per.mean(1)
    return space.from_z(z[int(np.nanargmin(np.where(np.isfinite(mean), mean, np.inf)))])


def _tpe_pick(obj, space, trials, reps, seed, chunk):
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    key = jax.random.key(10_000 + seed)

    def f(trial):
        theta = {
            n: trial.suggest_float(n, p.lo, p.hi, log=isinstance(p, LogSpace))
            for n, p in zip(space.keys(), space.params, strict=True)
        }
        per = obj.losses(
            {k: np.array([v]) for k, v in theta.items()}, key, reps, chunk=chunk
        )
        return float(per.mean())

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(f, n_trials=max(2, trials))
    return study.best_params


@dataclass
class Size:
    reps: int = 100
    eval_reps: int = 4000
    fine: float = 10.0  # the fine grid's simulations / the tuner's
    budget_scale: float = 1.0  # multiplies every task's horizon T


def run_task(task, size, seeds, fractions, have_optuna):
    """``{(method, fraction): [ratios]}`` and ``{fraction: tune wins vs TPE}``."""
    obj = task.objective(size.budget_scale)
    space = Space(task.space)
    d, reps = space.dim, size.reps
    standard = 20**d * reps
    share = 0.5 if d == 1 else 0.25
    chunk = 2 * d * reps
    sims_top = int(standard * share * max(fractions))
    z_f = space.grid(41 if d == 1 else 15)
    reps_f = max(2, int(size.fine * sims_top) // len(z_f))
    per_f = obj.losses(space.batch_from_z(z_f), jax.random.key(99), reps_f, chunk=chunk)
    theta_f = space.from_z(z_f[int(np.nanargmin(per_f.mean(1)))])
    key_eval = jax.random.key(7)
    out, wins = {}, {}
    for frac in fractions:
        sims = int(standard * share * frac)
        n_grid = max(2, int((sims // reps) ** (1.0 / d) + 1e-9))
        for seed in seeds:
            picks = {
                "tune": tune(
                    obj,
                    task.space,
                    search=Search(simulations=sims, num_reps=reps),
                    report=Report(confidence=0),
                    key=seed,
                ).theta,
                "grid": _grid_pick(
                    obj, space, n_grid, reps, jax.random.key(20_000 + seed), chunk
                ),
            }
            if have_optuna:
                picks["tpe"] = _tpe_pick(obj, space, sims // reps, reps, seed, chunk)
            names = list(picks)
            z = np.stack([space.to_z(t) for t in [theta_f, *picks.values()]])
            ev = obj.losses(
                space.batch_from_z(z), key_eval, size.eval_reps, chunk=chunk
            ).mean(1)
            for i, n in enumerate(names):
                out.setdefault((n, frac), []).append(float(ev[i + 1] / ev[0]))
            if have_optuna:
                w = ev[1 + names.index("tune")] <= ev[1 + names.index("tpe")]
                wins[frac] = wins.get(frac, 0) + int(w)
    return out, wins, theta_f, reps_f


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reduced", action="store_true", help="T x 0.3, R = 30, ...")
    ap.add_argument("--seeds", type=int, default=None)
    ap.add_argument("--fractions", default="1,0.5", help="budget = frac x 1/2 or 1/4")
    ap.add_argument("--only", default=None, help="comma-separated name substrings")
    args = ap.parse_args(argv)
    size = (
        Size(reps=30, eval_reps=1000, fine=3.0, budget_scale=0.3)
        if args.reduced
        else Size()
    )
    seeds = range(args.seeds or (2 if args.reduced else 10))
    fractions = [float(f) for f in args.fractions.split(",")]
    try:
        import optuna  # noqa: F401

        have_optuna = True
    except ImportError:
        have_optuna = False
        print("optuna not installed: no TPE column (pip install jbandits[tuning])")
    print(
        f"jax {jax.__version__} on {jax.devices()[0].platform}; {size}; "
        f"{len(seeds)} seeds; budgets {fractions} x (1/2 or 1/4 of 20^d x R)"
    )
    print(
        f"{'task':34s} {'d':>1s} {'method':6s} {'budget':>6s} {'med':>6s} "
        f"{'p90':>6s} {'max':>6s} {'<=1.02':>7s} {'vs TPE':>7s} {'s':>5s}"
    )
    for task in tasks():
        if args.only and not any(
            p.strip().lower() in task.name.lower() for p in args.only.split(",")
        ):
            continue
        t0 = time.perf_counter()
        out, wins, theta_f, reps_f = run_task(task, size, seeds, fractions, have_optuna)
        secs = time.perf_counter() - t0
        d = len(task.space)
        for (method, frac), r in out.items():
            r = np.asarray(r)
            vs = f"{wins[frac]}/{len(r)}" if method == "tune" and wins else "-"
            print(
                f"{task.name:34s} {d:1d} {method:6s} {frac * (0.5 if d == 1 else 0.25):6.3f}"
                f" {np.median(r):6.3f} {np.quantile(r, 0.9):6.3f} {r.max():6.3f}"
                f" {int((r <= 1.02).sum()):3d}/{len(r):<3d} {vs:>7s} {secs:5.0f}",
                flush=True,
            )
        ref = ", ".join(f"{k}={v:.3g}" for k, v in theta_f.items())
        print(f"  [{task.setting}; fine grid x {reps_f} reps -> {ref}]", flush=True)


if __name__ == "__main__":
    main()
