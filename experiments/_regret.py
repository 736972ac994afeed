"""Runs of the cumulative-regret experiments of Mukherjee et al. (EUCBV, arXiv
1711.03591 v1, Sec. 5), shared by ``eucbv-expt1..4`` (:mod:`experiments.eucbv`): one
instance with regret curves (Expt 1, 2, 4), or a sweep over K with padded instances
(Expt 3), with EUCBV's active set read at every checkpoint; reports and claim rules:
:mod:`experiments._regret_report`.

Metric: cumulative pseudo-regret ``sum_t Delta_{A_t}`` (primary); the realised regret
``mu* t - sum_t X_t`` is saved next to it in results.npz. Every algorithm uses the same
replication keys, hence the same reward stack per arm (common random numbers):
comparisons at one T are paired over replications.
"""

from __future__ import annotations

import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

import jbandits
from experiments import _core
from jbandits.envs import problems

FULL_REPS = 100
QUICK_REPS = 10
QUICK_HORIZON = {1: 3000, 2: 5000, 4: 5000}
QUICK_ARMS_EXPT3 = (20, 30)
# Expt 3 horizon buckets: one compilation per bucket for horizon-free algorithms
# (scan length = the bucket's largest T; steps past an instance's T are no-ops)
EXPT3_BUCKETS = ((20, 30, 40, 50, 60), (70, 80), (90, 100))
EXPT3_K_MAX = 100
RUN_T = "T"  # a "horizon" argument that stands for the run's T
EUCBV = ("EUCBV", "EUCBV (pulls)")  # the literal Algorithm 1 first


def select(algos: list, cfg: _core.Config) -> list:
    """The algorithms of a run.

    ``cfg.extra["algorithms"]``: optional list of labels (tests, debugging). A quick
    run keeps the paper's algorithms (presets) and EUCBV's "pulls" reading, dropping
    the library-default duplicates, to bound compilation time.
    """
    wanted = cfg.extra.get("algorithms")
    if wanted is None:
        if cfg.quick:
            return [a for a in algos if a.paper or a.label == "EUCBV (pulls)"]
        return algos
    unknown = set(wanted) - {a.label for a in algos}
    if unknown:
        raise ValueError(f"unknown algorithm labels {sorted(unknown)}")
    return [a for a in algos if a.label in wanted]


def needs_static_horizon(algo: _core.Algo) -> bool:
    """EUCBV and UCB-Improved fix their schedule's length from T (static)."""
    return algo.name in ("eucbv", "ucb_improved")


def make_policy(algo: _core.Algo, num_arms: int, horizon) -> jbandits.Policy:
    """The policy of ``algo``; ``horizon=RUN_T`` arguments become ``horizon``."""
    fixed, timed = split_run_t(algo)
    return jbandits.make(
        algo.name, num_arms=num_arms, **fixed, **dict.fromkeys(timed, horizon)
    )


def split_run_t(algo: _core.Algo) -> tuple[dict, list]:
    """``algo``'s arguments but those set to :data:`RUN_T`, and the names of those."""
    kw = arguments(algo)
    return {k: v for k, v in kw.items() if v != RUN_T}, [
        k for k, v in kw.items() if v == RUN_T
    ]


def arguments(algo: _core.Algo) -> dict:
    return {**algo.static, **algo.hp}


def elimination(res, best_arm: int) -> dict:
    """EUCBV's diagnostic from its active set (``res.diagnostics["active"] [..., K]``,
    bandit numbering): whether the optimal arm survives, and the number of arms left."""
    active = np.asarray(res.diagnostics["active"], bool)
    return {
        "optimal_active": active[..., best_arm],
        "num_active": active.sum(-1, dtype=np.int32),
    }


# ------------------------------------------------------------------ curve experiments
def run_curves(number: int, algos: list, cfg: _core.Config) -> tuple[dict, dict]:
    """Expt 1, 2, 4: every algorithm on one instance; regret at C checkpoints."""
    problem = problems.eucbv_experiment(number)
    horizon = int(cfg.extra.get("horizon", QUICK_HORIZON[number]))
    if not cfg.quick and "horizon" not in cfg.extra:
        horizon = problem.horizon
    checkpoints = int(cfg.extra.get("checkpoints", 20 if cfg.quick else 60))
    reps = cfg.num_reps(FULL_REPS, QUICK_REPS)
    k = problem.means.size
    bandit, params = problem.bandit()
    key = jax.random.key(cfg.seed * 1000 + number)
    results = {}
    for algo in select(algos, cfg):
        policy = make_policy(algo, k, horizon)
        t0, c0 = time.perf_counter(), time.process_time()
        res = jbandits.simulate(
            policy,
            bandit,
            params,
            key,
            budget=horizon,
            num_reps=reps,
            num_checkpoints=checkpoints,
            permute=False,
            diagnostics=algo.name == "eucbv",
        )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        results[algo.label] = _summarise(algo, res, problem, wall, cpu)
        print(
            f"  {algo.label:24s} regret {res.regret[:, -1].mean():10.1f} "
            f"({wall:.1f} s wall, {cpu:.1f} s CPU)",
            file=sys.stderr,
        )
    info = {"K": k, "T": horizon, "reps": reps, "problem": problem}
    return results, info


def _summarise(algo: _core.Algo, res, problem, wall: float, cpu: float) -> dict:
    times = np.asarray(res.times[0])
    mu_star = float(np.max(problem.means))
    out = {
        "algo": algo,
        "times": times,
        "regret": np.asarray(res.regret),  # [R, C] pseudo-regret
        "realised": mu_star * times[None, :] - np.asarray(res.reward),  # [R, C]
        "best_pulls": np.asarray(res.pulls)[:, problem.best_arm],  # [R]
        "wall": wall,
        "cpu": cpu,
    }
    if algo.name == "eucbv":
        out |= elimination(res, problem.best_arm)  # [R, C] each
    return out


# ------------------------------------------------------------------ Experiment 3 (sweep K)
def run_padded(
    algo: _core.Algo, bandit, params, keys, budgets, horizon: int, reps: int
):
    """``algo`` on a stack of padded instances ``params [N, K_max]`` (one program).

    Instance ``n`` runs ``budgets[n]`` pulls (its T, also the policy's traced
    horizon) with replication keys ``fold_in(keys[n], r)``; results ``[N, R, ...]``.
    """
    timed = split_run_t(algo)[1]
    k_max = params.arm_mask.shape[-1]
    budgets = np.asarray(budgets)
    return jbandits.simulate(
        make_policy(algo, k_max, int(budgets[0])), bandit, params, keys,
        budget=budgets, num_reps=reps, horizon=horizon, metric=None, permute=False,
        diagnostics=algo.name == "eucbv", numbers=dict.fromkeys(timed, budgets),
    )  # fmt: skip


def run_expt3(algos: list, cfg: _core.Config) -> tuple[dict, dict]:
    """Regret at T = 1e5 + K^3 for K = 20..100 (quick: smaller K and T/10).

    Horizon-free algorithms (and those taking a traced T: MOSS, OCUCB) are padded to
    K_max = 100 arms and run with per-instance budgets in one compilation per horizon
    bucket (:data:`EXPT3_BUCKETS`). EUCBV and UCB-Improved need T statically (it fixes
    their schedule length), so they compile once per K on the unpadded instance. Every
    K uses the replication keys ``split(fold_in(key, K), R)`` for every algorithm
    (padding appends arms, so the reward stacks of the real arms are unchanged).
    """
    arms_list = tuple(cfg.extra.get("arms", QUICK_ARMS_EXPT3 if cfg.quick else ()))
    arms_list = arms_list or problems.EUCBV_EXPT3_ARMS
    scale = float(cfg.extra.get("horizon_scale", 0.1 if cfg.quick else 1.0))
    reps = cfg.num_reps(FULL_REPS, QUICK_REPS)
    probs = {k: problems.eucbv_experiment(3, k) for k in arms_list}
    horizons = {k: max(int(round(p.horizon * scale)), 4 * k) for k, p in probs.items()}
    key = jax.random.key(cfg.seed * 1000 + 3)
    buckets = [tuple(k for k in b if k in probs) for b in EXPT3_BUCKETS]
    buckets = [b for b in buckets if b]
    covered = {k for b in buckets for k in b}
    buckets += [(k,) for k in arms_list if k not in covered]
    k_max = max(EXPT3_K_MAX, max(arms_list))
    results = {}
    for algo in select(algos, cfg):
        t0, c0 = time.perf_counter(), time.process_time()
        final = {}
        if needs_static_horizon(algo):
            for k, p in probs.items():
                bandit, params = p.bandit()
                res = jbandits.simulate(
                    make_policy(algo, k, horizons[k]),
                    bandit,
                    params,
                    jax.random.fold_in(key, k),
                    budget=horizons[k],
                    num_reps=reps,
                    permute=False,
                    diagnostics=algo.name == "eucbv",
                )
                final[k] = _final(res, p)
        else:
            for bucket in buckets:
                insts = [
                    jbandits.envs.pad_arms(probs[k].bandit()[1], k_max) for k in bucket
                ]
                bandit = probs[bucket[0]].bandit()[0]
                params = jbandits.envs.stack_instances(insts)
                res = run_padded(
                    algo,
                    bandit,
                    params,
                    jnp.stack([jax.random.fold_in(key, k) for k in bucket]),
                    [horizons[k] for k in bucket],
                    max(horizons[k] for k in bucket),
                    reps,
                )
                for i, k in enumerate(bucket):
                    final[k] = _final(
                        jax.tree_util.tree_map(lambda x, i=i: x[i], res), probs[k]
                    )
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        results[algo.label] = {"algo": algo, "final": final, "wall": wall, "cpu": cpu}
        summary = ", ".join(
            f"K={k}: {v['regret'].mean():.0f}" for k, v in final.items()
        )
        print(f"  {algo.label:24s} {summary} ({wall:.1f} s)", file=sys.stderr)
    info = {"arms": arms_list, "T": horizons, "reps": reps, "scale": scale}
    return results, info


def _final(res, problem) -> dict:
    """Final-time values of one K (arrays over replications)."""
    times = np.asarray(res.times)[..., -1]
    mu_star = float(np.max(problem.means))
    out = {
        "regret": np.asarray(res.regret)[:, -1],
        "realised": mu_star * times - np.asarray(res.reward)[:, -1],
        "best_pulls": np.asarray(res.pulls)[:, problem.best_arm],
    }
    if res.diagnostics:
        out |= {k: v[:, -1] for k, v in elimination(res, problem.best_arm).items()}
    return out
