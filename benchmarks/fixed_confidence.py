"""Fixed-confidence best-arm identification: throughput, the w* step cost and the
cost of lanes that stop at different times.

Three parts (``--part``, default all):

* ``throughput``: pulls/s of Track-and-Stop (D-Tracking), T3C and TTTS (Garivier and
  Kaufmann, COLT 2016; Shang et al., AISTATS 2020; Russo, OR 2020) at K = 5 (T =
  ``--budget``, R = ``--reps``) and K = 100 (T / 5, R / 4) Bernoulli arms beside UCB1
  on the same instance, through :func:`jbandits.simulate` (median of ``--repeats``
  warm calls for UCB1, half as many for the others). The policies run
  with ``delta = 1e-12`` on an instance of close means, so that no lane stops
  inside the budget (the stopped fraction is printed: it must be 0, otherwise the
  row measures fewer pulls than it counts).
* ``wstar``: the per-call cost of the optimal-weights oracle
  (:func:`jbandits.policies.blocks.tstar.optimal_weights`, the step's dominant cost in
  Track-and-Stop and best challenger), jitted and ``vmap``-ed over R lanes: ns per
  call per lane, so that it reads beside a policy's ns per pull.
* ``stopping``: what a batch costs when its lanes stop at very different times.
  UGapEc (Gabillon et al., NIPS 2012; m = 1, eps = 0, delta = 0.1) on Bernoulli
  (0.9, 0.7, 0.5, 0.3, 0.1) with a budget cap ``--stop-budget``: (a) every lane on
  that instance (all stop early), (b) every lane on a copy whose two best arms are
  equal (no lane can stop: the same steps without stopping), (c) the lanes of (a)
  but one on the tied copy (one lane never stops). Prints the wall time of each, the
  mean and largest stopping time and the fraction of lane-steps that were useful
  (sum of stopping times over lanes x the steps the batch ran).
* ``lazy``: the sample complexity of lazy Track-and-Stop (D-Tracking, ``lazy=True``,
  ``laziness`` 2, 1.25 and 1.1) against the exact rule on GK16's mu1 and mu2 (delta = 0.1,
  the practical threshold, as ``experiments/gk16.py``), ``--lazy-runs`` replications
  each, paired (the same keys: the same reward streams). Resumable: every batch of
  ``--lazy-batch`` replications is appended to ``--lazy-file`` (JSON) and skipped when
  run again; prints the means and the paired difference with its 95 % CI.

    python -m benchmarks.fixed_confidence [--part throughput|wstar|stopping]
        [--budget 10000] [--reps 200] [--repeats 7] [--rows TTTS@100,...]

Not run on the shared development cores (the lead runs it when they are idle);
``benchmarks/notes_fixed_confidence.md`` holds the numbers and the reading.
"""

from __future__ import annotations

import argparse
import os
import time

if __name__ == "__main__" and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from benchmarks._timing import load, median_time, simulate_call  # noqa: E402
from jbandits.analysis import stats  # noqa: E402

TINY_DELTA = 1e-12  # no lane stops inside the budget (checked per row); the top-two
# policies check their default confidence 1 - delta < 1 (1e-30 would round it to 1)


def close_means(num_arms: int) -> np.ndarray:
    """Bernoulli means 0.5 .. 0.45 (close: the GLR grows slowly)."""
    return np.linspace(0.5, 0.45, num_arms)


def policies(num_arms: int) -> dict:
    """label -> policy of the throughput rows (UCB1 first, the reference)."""
    common = {"num_arms": num_arms, "delta": TINY_DELTA, "family": "bernoulli"}
    return {
        "UCB1": jbandits.make("ucb1", num_arms=num_arms),
        "Track-and-Stop (D)": jbandits.make("track_and_stop", tracking="d", **common),
        "Track-and-Stop (D) lazy": jbandits.make(
            "track_and_stop", tracking="d", lazy=True, **common
        ),
        "T3C": jbandits.make("t3c", **common),
        "TTTS": jbandits.make("ttts", **common),
    }


def sizes(budget: int, reps: int) -> tuple:
    """``(K, T, R)`` of the throughput rows: K = 100 at a fifth of the budget and a
    quarter of the replications (a w* solve there costs ~10x the K = 5 one)."""
    return ((5, budget, reps), (100, max(budget // 5, 200), max(reps // 4, 16)))


#: rows run at a smaller budget than their K's (label, K) -> T. TTTS at K = 100 ran at T =
#: 200 until its fallback's quadrature ran only at the steps that need it
#: (benchmarks/notes_fixed_confidence.md); none now
ROW_BUDGET: dict = {}


def wanted(rows: str | None, label: str, k: int) -> bool:
    """Whether ``--rows`` (comma-separated ``LABEL@K``, e.g. ``TTTS@100``; None: all)
    selects the row; UCB1, every row's reference, always runs."""
    return rows is None or label == "UCB1" or f"{label}@{k}" in rows.split(",")


def throughput(budget: int, reps: int, repeats: int, rows: str | None = None) -> None:
    cores = len(jax.devices())
    for k, t_k, r_k in sizes(budget, reps):
        if rows is not None and f"@{k}" not in rows:
            continue
        bandit, params = jbandits.envs.bernoulli(close_means(k))
        print(f"K={k} Bernoulli means 0.5..0.45, T={t_k}, R={r_k}")
        base = None
        for label, pol in policies(k).items():
            if not wanted(rows, label, k):
                continue
            t_row = ROW_BUDGET.get((label, k), t_k)
            call = simulate_call(pol, bandit, params, t_row, r_k)
            t0 = time.perf_counter()
            res = call()
            first = time.perf_counter() - t0
            t = median_time(call, repeats if label == "UCB1" else max(repeats // 2, 3))
            rate = t_row * r_k / t
            base = rate if base is None else base
            stopped = float(np.mean(res.stopped))
            at = f" (T={t_row})" if t_row != t_k else ""
            print(
                f"  {label:22s} {rate:14,.0f} pulls/s  {cores * 1e9 / rate:9.1f} "
                f"ns/pull/core  x{rate / base:7.3f} of UCB1  compile "
                f"{max(first - t, 0):5.1f} s  stopped {stopped:.3f}{at}"
            )


def wstar(reps: int, repeats: int, arms=(5, 100)) -> None:
    from jbandits.policies.blocks import tstar

    cores = len(jax.devices())
    for k in arms:
        rng = np.random.default_rng(0)
        means = jnp.asarray(rng.uniform(0.1, 0.9, (reps, k)), jnp.float32)
        mask = jnp.ones((reps, k), bool)
        fn = jax.jit(jax.vmap(lambda m, a: tstar.optimal_weights("bernoulli", m, a)[1]))
        fn(means, mask).block_until_ready()
        t = median_time(lambda: fn(means, mask).block_until_ready(), repeats)
        # one jitted call runs on one device: ns per call per lane on that core
        print(
            f"  w*(mu) K={k:4d}, {reps} lanes: {t * 1e9 / reps:9.1f} ns per call per "
            f"lane (one device of {cores})"
        )


def _stopping_run(pol, bandit, params, budget, reps):
    call = simulate_call(pol, bandit, params, budget, reps, permute=False)
    res = call()  # compile
    t = median_time(call, 3)
    pulls = np.asarray(res.num_pulls, float).reshape(-1)
    return t, pulls


def stopping(budget: int, reps: int) -> None:
    easy = np.array([0.9, 0.7, 0.5, 0.3, 0.1])
    tied = np.array([0.9, 0.9, 0.5, 0.3, 0.1])
    pol = jbandits.make("ugapec", num_arms=5, m=1, epsilon=0.0, delta=0.1)
    runs = {
        "(a) all lanes stop early": np.stack([easy] * reps),
        "(b) no lane can stop (tied best)": np.stack([tied] * reps),
        "(c) as (a), one lane tied": np.stack([easy] * (reps - 1) + [tied]),
    }
    base = None
    for label, means in runs.items():
        bandit, params = jbandits.envs.bernoulli(means)
        # one replication per instance (a stack of `reps` instances)
        t, pulls = _stopping_run(pol, bandit, params, budget, 1)
        useful = pulls.sum() / (reps * budget)
        base = t if label.startswith("(b)") else base
        print(
            f"  {label:34s} {t * 1e3:9.1f} ms  mean stop {pulls.mean():9.1f}  max "
            f"{pulls.max():7.0f}  sum/(R x budget) {useful:.3f}"
        )
    print(f"  (budget cap {budget}, {reps} lanes; (b) took {base * 1e3:.1f} ms)")
    experiment_path(reps)


def experiment_path(reps: int, cap: int = 200_000) -> None:
    """Chernoff-Racing on GK16's mu2 (stopping times up to ~50x the median): one
    simulate call at the cap against experiments._fc.run (one runner call whose
    lanes refill from a queue; it replaced the rounds of growing caps)."""
    import jax

    from experiments import _core, _fc

    means = np.array([0.3, 0.21, 0.2, 0.19, 0.18])
    algo = _core.Algo("CR", "chernoff_racing", {"family": "bernoulli"}, {"delta": 0.1})
    bandit, params = jbandits.envs.bernoulli(np.broadcast_to(means, (reps, 5)))
    pol = jbandits.make("chernoff_racing", num_arms=5, family="bernoulli", delta=0.1)
    one = simulate_call(pol, bandit, params, cap, 1, metric=None)
    key = jax.random.key(1)
    fc = lambda: _fc.run(algo, "bernoulli", means, key, reps, cap)  # noqa: E731
    one(), fc()  # compile
    t_one, t_fc = median_time(one, 3), median_time(fc, 3)
    stops = np.asarray(one().num_pulls, float).reshape(-1)
    print(
        f"  Chernoff-Racing, GK16 mu2, {reps} replications, cap {cap}: one call "
        f"{t_one:6.2f} s, experiments._fc.run {t_fc:6.2f} s ({t_one / t_fc:4.1f}x); median stop "
        f"{np.median(stops):.0f}, max {stops.max():.0f}"
    )


LAZY_VARIANTS = {
    "exact": {},
    "lazy2": {"lazy": True},
    "lazy1.25": {"lazy": True, "laziness": 1.25},
    "lazy1.1": {"lazy": True, "laziness": 1.1},
}
LAZY_CAP = 200_000


def _lazy_batch(inst: str, variant: str, seed: int, reps: int) -> list:
    from experiments import gk16

    means = dict(gk16.INSTANCES)[inst]
    k = gk16.K_MAX  # mu1 padded to 5 arms: one program per variant
    mask = np.arange(k) < len(means)
    padded = np.where(mask, np.resize(means, k), 0.0)
    bandit, params = jbandits.envs.bernoulli(padded, arm_mask=mask)
    pol = jbandits.make(
        "track_and_stop", num_arms=k, family="bernoulli", delta=0.1, tracking="d",
        threshold="practical", **LAZY_VARIANTS[variant],
    )  # fmt: skip
    res = simulate_call(pol, bandit, params, LAZY_CAP, reps, seed=seed, metric=None)()
    stops = np.asarray(res.num_pulls, float).reshape(-1)
    wrong = np.asarray(res.output).reshape(-1) != int(np.argmax(means))
    return [stops.tolist(), wrong.tolist(), bool(np.all(res.stopped))]


def lazy(runs: int, batch: int, path: str) -> None:
    """Sample complexity of lazy against exact Track-and-Stop (module docstring)."""
    import json

    done = {}
    if os.path.exists(path):
        with open(path) as f:
            done = json.load(f)
    for b in range(runs // batch):
        for inst in ("mu1", "mu2"):
            for variant in LAZY_VARIANTS:
                key = f"{inst}/{variant}/{b}"
                if key in done:
                    continue
                t0 = time.perf_counter()
                done[key] = _lazy_batch(inst, variant, 1000 + b, batch)
                with open(path + ".tmp", "w") as f:
                    json.dump(done, f)
                os.replace(path + ".tmp", path)
                print(f"  {key}: {time.perf_counter() - t0:.1f} s  load {load()}")
    for inst in ("mu1", "mu2"):
        _lazy_summary(done, inst)


def _lazy_summary(done: dict, inst: str) -> None:
    batches = sorted({int(k.split("/")[2]) for k in done if k.startswith(inst + "/")})
    full = [b for b in batches if all(f"{inst}/{v}/{b}" in done for v in LAZY_VARIANTS)]
    if not full:
        return
    stops = {
        v: np.concatenate([done[f"{inst}/{v}/{b}"][0] for b in full])
        for v in LAZY_VARIANTS
    }
    base = stops["exact"]
    for v, x in stops.items():
        errors = sum(sum(done[f"{inst}/{v}/{b}"][1]) for b in full)
        se = stats.standard_error(x)
        line = f"  {inst} {v:9s} n={len(x)} mean {x.mean():8.1f} (SE {se:.1f}) errors {errors}"
        if v != "exact":
            d = stats.paired(x, base)
            rel, lo, hi = np.array([d.mean, d.lo, d.hi]) / base.mean()
            line += f"  paired diff {d.mean:+.1f} [{d.lo:+.1f}, {d.hi:+.1f}] = {rel:+.2%} [{lo:+.2%}, {hi:+.2%}]"
        print(line)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fixed_confidence")
    ap.add_argument(
        "--part", choices=("all", "throughput", "wstar", "stopping", "lazy")
    )
    ap.add_argument("--budget", type=int, default=10_000)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--stop-budget", type=int, default=20_000)
    ap.add_argument("--rows", help="throughput rows only, e.g. TTTS@100 (with UCB1)")
    ap.add_argument("--lazy-runs", type=int, default=3000)
    ap.add_argument("--lazy-batch", type=int, default=500)
    ap.add_argument(
        "--lazy-file", default="benchmarks/fc_runs/lazy_track_and_stop.json"
    )
    args = ap.parse_args(argv)
    part = args.part or "all"
    print(f"devices: {len(jax.devices())} x {jax.devices()[0].platform}  load {load()}")
    if part in ("all", "throughput"):
        throughput(args.budget, args.reps, args.repeats, args.rows)
    if part in ("all", "wstar"):
        print("optimal weights w*(mu) (tstar.optimal_weights, jit + vmap)")
        wstar(args.reps, args.repeats)
    if part == "lazy":
        print("lazy Track-and-Stop (D) against the exact rule, GK16 mu1 / mu2")
        lazy(args.lazy_runs, args.lazy_batch, args.lazy_file)
    if part in ("all", "stopping"):
        print("lanes stopping at different times (UGapEc, delta = 0.1)")
        stopping(args.stop_budget, args.reps)
    print(f"load after: {load()}")


if __name__ == "__main__":
    main()
