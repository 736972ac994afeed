"""What the policy-contract check costs a run (issue 54: "<= 2 % of a step").

The runner counts, per lane, pulls of an arm outside ``0..K-1``, pulls of a masked
arm and checkpoint outputs outside their setting's range
(:func:`jbandits.sim.replication.violations`, :func:`~jbandits.sim.replication.output_outside`)
and raises after the run (:func:`jbandits.sim.contract.policy_contract`). This script
times ``jbandits.simulate`` with the check (A) against the same program with both
counters replaced by a zero constant (B), **in one process, interleaved** (A B A B
..., each pair back to back on the same warm executables), so that the run-to-run
drift of a shared machine, which is far larger than 2 % between processes, falls on
both alike. Printed per setting: the median time of each, the median of the pairs'
ratios A / B with its interquartile range, their geometric mean with a 95 % CI (from
the pairs' log-ratios), and the machine load.

    python -m benchmarks.contract_cost [--pairs 15]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import jax
import jax.numpy as jnp

import jbandits
from benchmarks import _timing
from jbandits.analysis import stats
from jbandits.sim import replication, runner

# (label, policy, kwargs, K, budget, reps, checkpoints)
SETTINGS = [
    ("ucb1 K=10 T=1e4 R=256", "ucb1", {}, 10, 10_000, 256, 1),
    ("apt K=10 T=1e4 R=256", "apt", {"threshold": 0.5}, 10, 10_000, 256, 1),
    ("ucb1 K=10 T=1e3 R=2048 C=100", "ucb1", {}, 10, 1_000, 2048, 100),
    ("apt K=100 T=1e3 R=512 C=50", "apt", {"threshold": 0.5}, 100, 1_000, 512, 50),
]

_TRACED = {"unchecked": 0}


def _zero_violations(state, counts, t, pulls, mask, outside):
    _TRACED["unchecked"] += 1
    return jnp.zeros(len(replication.VIOLATIONS), jnp.int32)


def _zero_outside(policy, raw, out, mask):
    _TRACED["unchecked"] += 1
    return jnp.zeros((), jnp.int32)


def _programs(call) -> dict:
    """Compile ``call``'s programs (two warm calls) and return the runner's cache."""
    runner.clear_cache()
    for _ in range(2):
        jax.block_until_ready(call().regret)
    return dict(runner.program_cache())


def _timed(call, cache: dict) -> float:
    runner.clear_cache()
    runner.program_cache().update(cache)
    t0 = time.perf_counter()
    jax.block_until_ready(call().regret)
    return time.perf_counter() - t0


def measure(setting, pairs: int) -> dict:
    label, name, kwargs, k, budget, reps, checkpoints = setting
    means = jnp.linspace(0.2, 0.8, k)
    bandit, params = jbandits.envs.bernoulli(means)
    policy = jbandits.make(name, num_arms=k, **kwargs)
    call = _timing.simulate_call(
        policy, bandit, params, budget, reps, num_checkpoints=checkpoints
    )
    checked = _programs(call)
    saved = replication.violations, replication.output_outside
    replication.violations, replication.output_outside = _zero_violations, _zero_outside
    try:
        before = _TRACED["unchecked"]
        unchecked = _programs(call)
        if _TRACED["unchecked"] == before:
            raise RuntimeError("the unchecked program did not trace the zero counters")
    finally:
        replication.violations, replication.output_outside = saved
    a, b = [], []
    with _timing.collector_paused():
        for i in range(pairs):
            order = [(a, checked), (b, unchecked)]
            for times, cache in order if i % 2 == 0 else order[::-1]:
                times.append(_timed(call, cache))
    ratios = sorted(x / y for x, y in zip(a, b, strict=True))
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    log_ci = stats.paired([math.log(r) for r in ratios])
    return {
        "geo": tuple(math.exp(x) for x in (log_ci.mean, log_ci.lo, log_ci.hi)),
        "label": label,
        "checked_s": statistics.median(a),
        "unchecked_s": statistics.median(b),
        "ratio": statistics.median(ratios),
        "iqr": (q1, q3),
        "pulls_per_s": budget * reps / statistics.median(a),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=15)
    args = parser.parse_args(argv)
    print(
        f"# jax {jax.__version__}, {jax.devices()[0].platform}, load {_timing.load()}"
    )
    print(
        "| setting | with check (s) | without (s) | ratio A/B (median) | IQR | "
        "geometric mean [95 % CI] | pulls/s |"
    )
    print("|---|---|---|---|---|---|---|")
    for setting in SETTINGS:
        r = measure(setting, args.pairs)
        print(
            f"| {r['label']} | {r['checked_s']:.4f} | {r['unchecked_s']:.4f} | "
            f"{r['ratio']:.4f} | {r['iqr'][0]:.4f}-{r['iqr'][1]:.4f} | "
            f"{r['geo'][0]:.4f} [{r['geo'][1]:.4f}, {r['geo'][2]:.4f}] | "
            f"{r['pulls_per_s'] / 1e6:.1f} M |",
            flush=True,
        )
    print(f"# load after: {_timing.load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
