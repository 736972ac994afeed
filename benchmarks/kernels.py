"""Where a step's time goes: wall time per kernel of a policy's engine step, measured.

    python -m benchmarks.kernels apt --arms 10 [--reps 500] [--budget 10000]
    python -m benchmarks.kernels bayes_ucb --arms 20 --bernoulli --kw posterior=beta

Runs one warm :func:`jbandits.simulate` under :func:`jax.profiler.trace` and sums the
profiler's events per kernel: on CPU, XLA's thunk runtime records one event per
executed kernel while a trace is active; on a GPU the trace holds the device's kernel
launches. Prints, per
kernel, its calls, total and mean wall time, its share of the kernels' total and the
operation it came from (the ``op_name`` JAX recorded, e.g. ``closed_call/reduce_max``,
looked up in the optimised HLO). The tracing adds about a microsecond per kernel
(the run's wall time with it is printed beside the kernels' sum), so small kernels
read high; compare kernels within one run, and runs with the same lane count.

A kernel that runs once per step has about ``budget`` calls per device; kernels of
data-dependent loops (Bayes-UCB's Beta search, the stage ends of Sequential Halving)
show how often those loops run.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import inspect
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from benchmarks import hlo  # noqa: E402


def _parse_kw(items) -> dict:
    out = {}
    for item in items:
        name, _, value = item.partition("=")
        try:
            out[name] = json.loads(value)
        except json.JSONDecodeError:
            out[name] = value
    return out


def kernel_times(trace_dir: str) -> tuple[collections.Counter, collections.Counter]:
    """``(calls, total µs)`` per event name of the trace's complete events."""
    files = list(Path(trace_dir).rglob("*.trace.json.gz"))
    if not files:
        raise FileNotFoundError(f"no perfetto trace under {trace_dir}")
    with gzip.open(files[0]) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    calls, total = collections.Counter(), collections.Counter()
    for e in events:
        if e.get("ph") == "X" and "dur" in e:
            calls[e["name"]] += 1
            total[e["name"]] += e["dur"]
    return calls, total


def op_names(hlo_text: str) -> dict[str, str]:
    """Kernel (instruction) name -> the last two parts of its JAX ``op_name``."""
    out = {}
    for line in hlo_text.splitlines():
        m = re.match(r"\s*(?:ROOT )?%(\S+) = .*op_name=\"([^\"]*)\"", line)
        if m:
            out[m.group(1)] = "/".join(m.group(2).split("/")[-2:])
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.kernels")
    ap.add_argument("name", help="a registered policy (jbandits.names())")
    ap.add_argument("--arms", type=int, default=10, help="K")
    ap.add_argument("--reps", type=int, default=500, help="R (lanes, all devices)")
    ap.add_argument("--budget", type=int, default=10_000, help="T")
    ap.add_argument("--bernoulli", action="store_true", help="Bernoulli arms")
    ap.add_argument("--kw", nargs="*", default=[], help="policy arguments k=v")
    ap.add_argument("--top", type=int, default=25, help="kernels to print")
    args = ap.parse_args(argv)
    k, t, r = args.arms, args.budget, args.reps
    rng = np.random.default_rng(k)
    means = rng.uniform(0.2, 0.8, k)
    if args.bernoulli:
        bandit, params = jbandits.envs.bernoulli(means)
    else:
        bandit, params = jbandits.envs.gaussian(means, np.full(k, 0.5))
    kw = _parse_kw(args.kw)
    accepted = inspect.signature(
        jbandits.core.registry.raw_factory(args.name)
    ).parameters
    for name, value in (("budget", t), ("threshold", 0.5)):
        if name in accepted:
            kw.setdefault(name, value)
    policy = jbandits.make(args.name, num_arms=k, **kw)

    def call(seed):
        return jbandits.simulate(
            policy, bandit, params, jax.random.key(seed), budget=t, num_reps=r,
            progress=False,
        )  # fmt: skip

    call(0)  # compile
    trace_dir = tempfile.mkdtemp(prefix="jbandits-kernels-")
    try:
        with jax.profiler.trace(trace_dir, create_perfetto_trace=True):
            t0 = time.perf_counter()
            call(1)
            wall = time.perf_counter() - t0
        calls, total = kernel_times(trace_dir)
    finally:
        shutil.rmtree(trace_dir, ignore_errors=True)
    ndev = len(jax.devices())
    names = op_names(hlo.engine_program_text(policy, bandit, params, t, r))
    kernels = {n: v for n, v in total.items() if n in names}
    busy = sum(kernels.values())
    print(
        f"{args.name} K={k} T={t} R={r} on {ndev} x {jax.devices()[0].platform}: "
        f"wall {wall:.3f} s traced ({ndev * wall * 1e9 / (t * r):.1f} ns/pull/core); "
        f"kernels {busy / 1e6:.3f} s over {len(kernels)} kinds"
    )
    print(
        f"  {'calls':>8s} {'total ms':>9s} {'mean µs':>8s} {'share':>6s}  kernel / op"
    )
    for name, us in sorted(kernels.items(), key=lambda kv: -kv[1])[: args.top]:
        print(
            f"  {calls[name]:8d} {us / 1e3:9.1f} {us / calls[name]:8.2f} "
            f"{us / busy:6.1%}  {name}  {names[name]}"
        )


if __name__ == "__main__":
    main()
