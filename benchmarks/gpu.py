"""Pulls/s against arm-lanes on whatever device JAX has (written for GPUs).

``python -m benchmarks.gpu [--max-arm-lanes 1e7] [--steps 2000]`` runs APT (K=100),
Sequential Halving (K=100) and UCB1 (K=100) through :func:`jbandits.simulate` with
replications = arm-lanes / K, for arm-lanes 1e3 .. 1e7, and prints per row: pulls/s,
ns per lane-step, the achieved memory bandwidth (bytes of policy state read and
written per lane-step, from ``jax.eval_shape``, times lane-steps per second) and the
number of kernels (fusions + custom calls) in the optimised HLO of the program.
Median of 3 warm calls; compile time printed once per policy. On a GPU the curve
should rise with arm-lanes until memory bandwidth, not launch overhead, bounds it.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time

import jax
import numpy as np

import jbandits
from jbandits import metrics, runner


def _policies(num_arms: int, steps: int):
    return {
        "apt": (
            jbandits.make("apt", num_arms=num_arms, threshold=0.5, epsilon=0.05),
            metrics.thresholding(0.5),
        ),
        "sequential_halving": (
            jbandits.make("sequential_halving", num_arms=num_arms, budget=steps),
            metrics.identification(),
        ),
        "ucb1": (jbandits.make("ucb1", num_arms=num_arms), None),
    }


def _state_bytes(policy, num_arms: int) -> int:
    state = jax.eval_shape(
        policy.init, jax.random.key(0), jax.ShapeDtypeStruct((num_arms,), bool)
    )
    return sum(x.size * x.dtype.itemsize for x in jax.tree_util.tree_leaves(state))


def _kernels(fn, args) -> int:
    text = fn.lower(*args).compile().as_text()
    return len(re.findall(r"^\s*\S+ = \S+ fusion\(|custom-call\(", text, re.M))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gpu")
    parser.add_argument("--arms", type=int, default=100, help="K")
    parser.add_argument("--steps", type=int, default=2000, help="budget T per run")
    parser.add_argument(
        "--max-arm-lanes", type=float, default=1e7, help="largest replications x K"
    )
    parser.add_argument(
        "--min-arm-lanes", type=float, default=1e3, help="smallest replications x K"
    )
    args = parser.parse_args(argv)
    dev = jax.devices()[0]
    print(
        f"device: {len(jax.devices())} x {dev.device_kind} ({dev.platform}); "
        f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, args.arms))
    sizes = np.geomspace(
        args.min_arm_lanes,
        args.max_arm_lanes,
        int(np.log10(args.max_arm_lanes / args.min_arm_lanes)) + 1,
    )
    print(
        f"{'policy':20s} {'arm-lanes':>10s} {'reps':>8s} {'Mpulls/s':>9s} "
        f"{'ns/lane-step':>12s} {'GB/s':>7s} {'kernels':>7s}"
    )
    for name, (policy, metric) in _policies(args.arms, args.steps).items():
        state_bytes = _state_bytes(policy, args.arms)
        for arm_lanes in sizes:
            reps = max(1, int(arm_lanes) // args.arms)

            def call(policy=policy, metric=metric, reps=reps):
                return jbandits.simulate(
                    policy,
                    bandit,
                    params,
                    jax.random.key(0),
                    budget=args.steps,
                    num_reps=reps,
                    metric=metric,
                    progress=False,
                    batch_size=reps,
                )

            t0 = time.perf_counter()
            call()
            compile_s = time.perf_counter() - t0
            times = []
            for _ in range(3):
                t0 = time.perf_counter()
                call()
                times.append(time.perf_counter() - t0)
            t = statistics.median(times)
            lane_steps = reps * args.steps / t
            kernels = "-"
            if arm_lanes == sizes[0]:
                fn = next(reversed(runner._CACHE.values()))
                kernels = "?"
                try:
                    probe = _probe_args(policy, bandit, params, args.steps)
                    kernels = str(_kernels(fn, probe))
                except Exception:  # noqa: BLE001 - informational only
                    pass
                print(f"  ({name}: first call {compile_s:.1f} s incl. compile)")
            print(
                f"{name:20s} {int(arm_lanes):>10d} {reps:>8d} "
                f"{lane_steps / 1e6:>9.2f} {1e9 / lane_steps:>12.2f} "
                f"{2 * state_bytes * lane_steps / 1e9:>7.1f} {kernels:>7s}"
            )


def _probe_args(policy, bandit, params, steps):
    """Arguments of one lane-chunk of the runner's program (for HLO inspection)."""
    source, numeric = runner.source_of(policy)
    hp = {k: np.asarray([v]) for k, v in numeric.items()}
    p = jax.tree_util.tree_map(lambda x: np.asarray(x)[None], params)
    kdata = runner.key_data(jax.random.key(0))[None]
    one = np.ones(1, np.int32)
    return hp, p, kdata, 0 * one, steps * one, steps * one


if __name__ == "__main__":
    main()
