"""Lalitha et al. (UAI 2023) Figures 5 and 6: MovieLens fixed-budget BAI.

``shvar-fig5`` / ``shvar-fig6``: the MovieLens bandit of §5.2 (a completed ratings
matrix; each run draws new movies near a fresh synthetic instance), K = 64 / 128,
error vs budget n. Algorithms, runner call and claims: :mod:`experiments._shvar_setup`.
"""

from __future__ import annotations

import functools
import os

import jax
import numpy as np

from experiments import _core
from experiments import _shvar_setup as S
from jbandits.envs import movielens
from jbandits.policies.blocks import schedules

# ------------------------------------------------------------------ Figures 5 and 6
# used only when neither a path (cfg.extra["data"]) nor $JBANDITS_DATA is given: the
# data folder of the workspace beside the repository (never committed into it)
LOCAL_DATA = os.path.normpath(
    os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data", "movielens")
)


def _data_path(cfg: _core.Config):
    path = cfg.extra.get("data")
    if path is None and os.environ.get(movielens.ENV_VAR) is None:
        return LOCAL_DATA if os.path.isdir(LOCAL_DATA) else None
    return path


def run_movielens(cfg: _core.Config, fig: int) -> _core.Outcome:
    k = cfg.extra.get("num_arms") or {5: 64, 6: 128}[fig]
    try:
        data = movielens.load_completed(_data_path(cfg))
    except FileNotFoundError as exc:
        print(f"shvar-fig{fig}: MovieLens data not available, skipping.\n{exc}")
        raise SystemExit(0) from None
    budgets = np.asarray(
        cfg.extra.get("budgets", S.QUICK_BUDGETS if cfg.quick else S.BUDGETS)
    )
    budgets = budgets[budgets >= k * schedules.num_halving_stages(k)]
    reps = cfg.num_reps(S.FULL_REPS, S.QUICK_REPS)
    bandit, params = movielens.instances(data, k, reps, seed=cfg.seed)
    P = len(budgets)
    params = params._replace(
        **{
            f: np.broadcast_to(np.asarray(x), (P, *np.shape(x)))
            for f, x in params._asdict().items()
            if f != "matrix"
        }
    )
    means, stds, mask = (
        np.asarray(x) for x in (params.means, params.stds, params.arm_mask)
    )
    which = cfg.extra.get("algorithms", S.ORDER)
    algos = S.algorithms(k, budgets, [k] * P, means, stds, mask, which)
    key, horizon = jax.random.key(cfg.seed), int(budgets.max())
    err = S.run_all(algos, bandit, params, key, budgets, horizon, shared=("matrix",))
    notes = [
        f"Data: {data.name} ({data.num_users} users x {data.num_movies} movies, "
        f"{data.num_ratings} ratings) from {data.path}; the paper used MovieLens-1M.",
        f"Rank-{data.rank} ALS completion (lambda={data.reg}, {data.iterations} iterations); "
        f"completed ratings not clipped (the paper does not mention clipping), mapped to "
        "(r - 1)/4 before matching (the targets live on [0, 1]); "
        f"train RMSE {data.rmse:.3f}.",
        "New movies per run: nearest (mean, variance) to a fresh synthetic (mu~, sigma~^2) "
        "of §5.1, distinct movies (see REPORT); reward = completed rating of a uniformly "
        "random user.",
        f"Budget grid {list(map(int, budgets))} is ours (not in the text).",
    ]
    title = f"MovieLens ({data.name}), K={k}, {reps} runs"
    claims = S.claims_budget_curve(err, budgets, fig)
    return S.outcome(err, budgets, "n", title, claims, notes)


SOURCE = (
    "Lalitha, Kalantari, Ma, Deoras, Kveton, Fixed-Budget Best-Arm Identification "
    "with Heterogeneous Reward Variances, UAI 2023, Section 5"
)
for _fig, _k in ((5, 64), (6, 128)):
    _core.register(
        _core.Experiment(
            f"shvar-fig{_fig}",
            f"Lalitha et al. 2023, Fig. {_fig}: MovieLens, K={_k}, error vs n",
            SOURCE,
            functools.partial(run_movielens, fig=_fig),
            highlight=("SHVar", "SHAdaVar"),
        )
    )
