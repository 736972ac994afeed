"""Peak RSS against the horizon: memory must be O(R * K), independent of T.

Each measurement runs in a fresh child process (``resource.getrusage(RUSAGE_SELF)``
``ru_maxrss`` at its end), so the peaks do not mix: APT (K = 100 Gaussian arms, seed
000 Expt-1) with R replications for each horizon T, with XLA's default flags and with
each extra ``XLA_FLAGS`` variant given by ``--variant`` (e.g. the YNN fusion switch
``--xla_cpu_experimental_ynn_fusion_type=``). Prints peak RSS, wall time and the
growth of the peak from the smallest T.

    python -m benchmarks.memory [--reps 1000] [--horizons 1e4 1e5 1e6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

from benchmarks._timing import load

CHILD = r"""
import json, os, resource, sys, time
import jax, numpy as np
import jbandits
from jbandits.envs import problems
T, R = int(sys.argv[1]), int(sys.argv[2])
p = problems.augucb_experiment(1)
bandit, params = jbandits.envs.gaussian(np.asarray(p.means), np.asarray(p.stds))
pol = jbandits.apt(100, threshold=0.5, epsilon=0.05)
t0 = time.perf_counter()
jbandits.simulate(pol, bandit, params, jax.random.key(0), budget=T, num_reps=R,
                  progress=False)
wall = time.perf_counter() - t0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"rss": rss, "wall": wall}))
"""


def measure(horizon: int, reps: int, flags: str) -> dict:
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        f"--xla_force_host_platform_device_count={os.cpu_count()} {flags}".strip()
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(horizon), str(reps)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--horizons", type=float, nargs="+", default=[1e4, 1e5, 1e6])
    ap.add_argument(
        "--variant",
        action="append",
        default=[],
        help="extra XLA_FLAGS to compare with the default (repeatable)",
    )
    args = ap.parse_args(argv)
    print(f"APT K=100 R={args.reps}; load {load()}")
    for flags in ["", *args.variant]:
        base = None
        for h in args.horizons:
            r = measure(int(h), args.reps, flags)
            base = r["rss"] if base is None else base
            print(
                f"  flags [{flags or 'default'}] T={int(h):>8d}: peak RSS "
                f"{r['rss'] / 2**20:7.0f} MiB ({r['rss'] / base - 1:+6.1%})  "
                f"wall {r['wall']:6.1f} s  {int(h) * args.reps / r['wall']:12,.0f} pulls/s",
                flush=True,
            )


if __name__ == "__main__":
    main()
