"""Lanes that refill from a queue (issue 63, item 1): useful pulls per lane-step.

UGapEc (Gabillon et al., NIPS 2012; m = 1, eps = 0, delta = 0.1) on Bernoulli (0.9,
0.7, 0.5, 0.3, 0.1), ``--lanes`` replications (one each of a stack of instances) with
a cap of ``--cap`` pulls, as ``benchmarks/fixed_confidence.py --part stopping``:
(a) every lane stops early, (c) one lane on a copy whose two best arms are equal
(it never stops: it runs to the cap). Each case runs through :func:`jbandits.simulate`
twice: the plain chunks (``refill=False``, a chunk runs until its last lane is done) and lanes
that refill (:mod:`jbandits.sim.runner.refill`, the default for stopping policies).
Prints the wall time of the second (warm) call, the lane-steps run, the useful pulls
(the sum of the stopping times) and their ratio (and the ratio of the first call,
which compiles: its tail compiles a narrower program only once the CPU time that
width saves, so far in the program's tails and expected in this one, reaches about a
compilation), and checks that both give the same results
in every field.

    python -m benchmarks.fc_refill [--lanes 400] [--cap 20000] [--batch N]
        [--compile-weight W]

The acceptance of issue 63: useful pulls / lane-steps >= 0.8 in (c) (0.16 before).
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

if __name__ == "__main__" and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from jbandits.sim.runner import refill as refill_lanes  # noqa: E402
from jbandits.sim.runner.results import CappedRunsWarning  # noqa: E402

EASY = (0.9, 0.7, 0.5, 0.3, 0.1)
TIED = (0.9, 0.9, 0.5, 0.3, 0.1)


def run_case(means, cap: int, refill: bool, batch: int | None):
    """Two calls of :func:`jbandits.simulate` on the stack ``means``, one replication
    each: the first compiles (its report is returned too), the second is timed."""
    pol = jbandits.make("ugapec", num_arms=5, m=1, epsilon=0.0, delta=0.1)
    bandit, params = jbandits.envs.bernoulli(means)
    call = dict(
        budget=cap, num_reps=1, metric=None, permute=False, refill=refill,
        batch_size=batch, progress=False,
    )  # fmt: skip
    cold = jbandits.sim.runner.Report()
    key = jax.random.key(0)
    with warnings.catch_warnings():  # the tied lane is capped, on purpose
        warnings.simplefilter("ignore", CappedRunsWarning)
        jbandits.simulate(pol, bandit, params, key, report=cold, **call)
        report = jbandits.sim.runner.Report()
        t0 = time.perf_counter()
        out = jbandits.simulate(pol, bandit, params, key, report=report, **call)
    return time.perf_counter() - t0, report, out, cold


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.fc_refill")
    ap.add_argument("--lanes", type=int, default=400)
    ap.add_argument("--cap", type=int, default=20_000)
    ap.add_argument("--batch", type=int, default=None, help="lanes per program")
    ap.add_argument(
        "--compile-weight", type=float, default=None,
        help="refill.COMPILE_WEIGHT (0: move to a narrower program at once)",
    )  # fmt: skip
    args = ap.parse_args(argv)
    if args.compile_weight is not None:
        refill_lanes.COMPILE_WEIGHT = args.compile_weight
    n = args.lanes
    cases = {
        "(a) all lanes stop early": np.stack([EASY] * n),
        "(c) as (a), one lane tied": np.stack([EASY] * (n - 1) + [TIED]),
    }
    print(f"{n} lanes, cap {args.cap}, {len(jax.local_devices())} devices, "
          f"load {os.getloadavg()[0]:.1f}, COMPILE_WEIGHT {refill_lanes.COMPILE_WEIGHT}")  # fmt: skip
    for label, means in cases.items():
        got = {}
        for refill in (False, True):
            wall, rep, out, cold = run_case(means, args.cap, refill, args.batch)
            got[refill] = out
            print(
                f"  {label:28s} refill={refill!s:5s} {wall:7.2f} s  lane-steps "
                f"{rep.lane_steps_executed:10d}  useful {rep.pulls:9d}  useful / "
                f"lane-steps {rep.pulls / rep.lane_steps_executed:.3f}  "
                f"{rep.extra.get('refill', '')}  (first call, compiling: "
                f"{cold.pulls / cold.lane_steps_executed:.3f} in {cold.seconds:.1f} s "
                f"{cold.extra.get('refill', '')})"
            )
        same = all(
            np.array_equal(a, b)
            for a, b in zip(
                jax.tree_util.tree_leaves(got[False]),
                jax.tree_util.tree_leaves(got[True]),
                strict=True,
            )
        )
        print(f"  {label:28s} same results in every field: {same}")


if __name__ == "__main__":
    main()
