"""Sweeps at scale: layer overhead, budget-sweep no-op fraction, 1e8 replications.

``python -m benchmarks.sweeps`` prints, measured in one run (median of 3 warm calls,
machine load printed):

* ``overhead``: a sweep of 8 APT epsilons x R replications through
  :func:`jbandits.sweep_grid` (store, labels, chunking) against one
  :func:`jbandits.simulate` of the same number of lanes: pulls/s and their ratio
  (target >= 0.9).
* ``budgets``: a Successive Rejects budget sweep (1e2..1e4) — the fraction of lane-steps
  that pulled nothing, against simulating every budget to the largest one.
* ``--big``: ``num_reps=1e8`` APT (K=10, T=100) with no ``batch_size``: wall time and
  peak RSS.

Every CPU core is exposed as a JAX device (set before JAX starts).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time

if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from benchmarks._timing import load, median_time  # noqa: E402
from jbandits.analysis import metrics  # noqa: E402
from jbandits.sim import runner


def overhead(num_arms: int, budget: int, reps: int) -> None:
    rng = np.random.default_rng(0)
    means = rng.uniform(0.1, 0.9, num_arms)
    bandit, params = jbandits.envs.bernoulli(means)
    metric = metrics.thresholding(0.5)
    eps = list(np.linspace(0.0, 0.14, 8))
    lanes = 8 * reps

    def sweep():
        jbandits.sweep_grid(
            [("apt", {"threshold": 0.5, "epsilon": eps})],
            bandit,
            [params],
            jax.random.key(0),
            budgets=[budget],
            num_reps=reps,
            metric=metric,
            progress=False,
        )

    def single():
        jbandits.simulate(
            jbandits.make("apt", num_arms=num_arms, threshold=0.5, epsilon=0.05),
            bandit,
            params,
            jax.random.key(0),
            budget=budget,
            num_reps=lanes,
            metric=metric,
            progress=False,
        )

    t_sweep = median_time(sweep, warm=True)
    t_single = median_time(single, warm=True)
    pulls = lanes * budget
    print(
        f"overhead  APT K={num_arms} T={budget}: sweep_grid 8 eps x {reps} reps "
        f"{pulls / t_sweep / 1e6:.2f} M pulls/s, simulate {lanes} reps "
        f"{pulls / t_single / 1e6:.2f} M pulls/s -> ratio {t_single / t_sweep:.2f} "
        f"(load {load()})"
    )


def budgets() -> None:
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 10))
    levels = np.array([100, 300, 1000, 3000, 10_000])
    grid = {"budget": np.repeat(levels, 8)}
    report = runner.Report()
    jbandits.sweep(
        "successive_rejects",
        bandit,
        params,
        jax.random.key(0),
        grid=grid,
        num_reps=64,
        horizon=int(levels.max()),
        progress=False,
        report=report,
        metric=metrics.identification(),
    )
    to_largest = 1 - levels.mean() / levels.max()
    print(
        f"budgets   SR budgets {levels.tolist()}: no-op lane-steps "
        f"{100 * report.noop_fraction:.1f}% (simulating each budget to the largest: "
        f"{100 * to_largest:.1f}%), chunk {report.chunk_size} lanes"
    )


def big(num_reps: int, store: str | None = None) -> None:
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 10))
    policy = jbandits.make("apt", num_arms=10, threshold=0.5, epsilon=0.05)
    report = runner.Report()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory():
        res = jbandits.simulate(
            policy,
            bandit,
            params,
            jax.random.key(0),
            budget=100,
            num_reps=num_reps,
            metric=metrics.thresholding(0.5),
            report=report,
            store=store,
        )
    wall = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(
        f"big       APT K=10 T=100 num_reps={num_reps:.0e}: {wall:.0f} s, "
        f"{num_reps * 100 / wall / 1e6:.1f} M pulls/s, chunk {report.chunk_size} lanes "
        f"x {report.chunks} chunks ({report.chunks_skipped} read back), peak RSS {peak:.2f} GiB, P(error) "
        f"{res.metrics['error'].mean():.4f} (load {load()})"
    )


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sweeps")
    parser.add_argument("--arms", type=int, default=100, help="K for the overhead run")
    parser.add_argument("--budget", type=int, default=10_000, help="T (overhead run)")
    parser.add_argument("--reps", type=int, default=64, help="reps per epsilon")
    parser.add_argument("--big", type=float, default=0, help="run num_reps=BIG too")
    parser.add_argument(
        "--store",
        default=None,
        help="results store of the --big run (kept, so an interrupted run resumes; "
        "default: a temporary folder)",
    )
    parser.add_argument(
        "--only-big", action="store_true", help="skip the overhead and budgets runs"
    )
    args = parser.parse_args(argv)
    print(
        f"devices: {len(jax.devices())} x {jax.devices()[0].platform}", file=sys.stderr
    )
    if not args.only_big:
        overhead(args.arms, args.budget, args.reps)
        budgets()
    if args.big:
        big(int(args.big), args.store)


if __name__ == "__main__":
    main()
