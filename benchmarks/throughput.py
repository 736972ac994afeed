"""Throughput: pulls/second of jbandits vs a per-step NumPy loop and a numba loop.

Instance: seed 000 Expt-1 (K = 100, tau = 0.5, Gaussian arms, T = 10^4), R = 500
replications by default. All three implementations run APT (eps = 0.05) on the same
machine in this one process; the ratios printed are measured in this run. The NumPy
loop is timed on a subset of replications (its rate does not depend on R). Other
registered policies (AugUCB; UCB1, Thompson sampling, Bayes-UCB, KL-UCB) are reported
as jbandits pulls/second next to APT / UCB1.

    python -m benchmarks.throughput [--reps 500] [--budget 10000] [--numpy-reps 4]

On CPU the script exposes every core as a JAX host device (XLA_FLAGS
``--xla_force_host_platform_device_count``, set before JAX starts unless XLA_FLAGS is
already set), so :func:`jbandits.simulate` shards the replications over the cores; numba
is measured both single-threaded and with ``prange`` over replications on all cores.
"""

from __future__ import annotations

import argparse
import os
import time

if "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from jbandits import problems  # noqa: E402


def instance():
    p = (
        problems.augucb_experiment(1)
        if hasattr(problems, "augucb_experiment")
        else None
    )
    if p is not None:
        return p.means, p.stds
    rng = np.random.default_rng(0)
    means = np.r_[
        0.2 + 0.05 * np.arange(4),
        0.45,
        0.55,
        0.65 + 0.05 * np.arange(4),
        np.full(90, 0.4),
    ]
    var = np.r_[np.full(5, 0.5), np.full(5, 0.6), rng.uniform(0.38, 0.42, 90)]
    return means, np.sqrt(var)


def apt_numpy(means, stds, budget, tau, eps, seed):
    rng = np.random.default_rng(seed)
    k = means.size
    n = np.zeros(k)
    s = np.zeros(k)
    for t in range(budget):
        if t < k:
            i = t
        else:
            mu = s / n
            i = int(np.argmin(np.sqrt(n) * (np.abs(mu - tau) + eps)))
        s[i] += means[i] + stds[i] * rng.standard_normal()
        n[i] += 1
    return s / n >= tau


def make_numba(parallel: bool = False):
    import numba

    loop = numba.prange if parallel else range

    @numba.njit(cache=False, parallel=parallel)
    def apt_numba(means, stds, budget, tau, eps, reps, seed):
        np.random.seed(seed)
        k = means.size
        out = np.zeros((reps, k), np.bool_)
        for r in loop(reps):
            n = np.zeros(k)
            s = np.zeros(k)
            for t in range(budget):
                if t < k:
                    i = t
                else:
                    best = np.inf
                    i = 0
                    for j in range(k):
                        v = np.sqrt(n[j]) * (abs(s[j] / n[j] - tau) + eps)
                        if v < best:
                            best = v
                            i = j
                s[i] += means[i] + stds[i] * np.random.standard_normal()
                n[i] += 1
            for j in range(k):
                out[r, j] = s[j] / n[j] >= tau
        return out

    return apt_numba


def time_jbandits(policy, bandit, params, budget, reps, metric=None):
    kw = dict(budget=budget, num_reps=reps, metric=metric)
    t0 = time.perf_counter()
    jbandits.simulate(policy, bandit, params, jax.random.key(0), **kw)
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    jbandits.simulate(policy, bandit, params, jax.random.key(1), **kw)
    run_s = time.perf_counter() - t0
    return budget * reps / run_s, compile_s


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--budget", type=int, default=10_000)
    ap.add_argument("--numpy-reps", type=int, default=4)
    ap.add_argument("--skip-others", action="store_true")
    args = ap.parse_args(argv)
    means, stds = instance()
    k, tau, eps = means.size, 0.5, 0.05
    bandit, params = jbandits.envs.gaussian(means, stds)
    print(
        f"devices: {len(jax.devices())} x {jax.devices()[0].platform}  K={k}  "
        f"T={args.budget}  R={args.reps}"
    )

    apt = jbandits.apt(k, threshold=tau, epsilon=eps)
    jb, comp = time_jbandits(apt, bandit, params, args.budget, args.reps)
    print(f"jbandits APT      : {jb:14,.0f} pulls/s   (compile+first run {comp:.1f} s)")

    t0 = time.perf_counter()
    for r in range(args.numpy_reps):
        apt_numpy(means, stds, args.budget, tau, eps, r)
    npy = args.budget * args.numpy_reps / (time.perf_counter() - t0)
    print(
        f"NumPy loop APT    : {npy:14,.0f} pulls/s   ({args.numpy_reps} replications)"
    )

    rates = {}
    for parallel in (False, True):
        label = "numba prange APT  " if parallel else "numba loop APT    "
        try:
            apt_numba = make_numba(parallel)
            apt_numba(means, stds, args.budget, tau, eps, 2, 0)  # compile
            t0 = time.perf_counter()
            apt_numba(means, stds, args.budget, tau, eps, args.reps, 1)
            rates[parallel] = args.budget * args.reps / (time.perf_counter() - t0)
            print(
                f"{label}: {rates[parallel]:14,.0f} pulls/s   ({args.reps} replications)"
            )
        except ImportError:
            rates[parallel] = float("nan")
            print(f"{label}: numba not installed (pip install -e .[bench])")
    print(f"ratio jbandits / NumPy loop          : {jb / npy:8.1f}x")
    print(f"ratio jbandits / numba single thread : {jb / rates[False]:8.2f}x")
    print(f"ratio jbandits / numba prange        : {jb / rates[True]:8.2f}x")

    if args.skip_others:
        return
    others = {
        "augucb": dict(threshold=tau, budget=args.budget),
        "ucb1": {},
        "thompson": dict(posterior="gauss"),
        "thompson[beta]": dict(posterior="beta"),
        "bayes_ucb": dict(posterior="gauss"),
        "bayes_ucb[beta]": dict(posterior="beta"),
        "klucb": dict(kl="gauss"),
        "klucb[bernoulli]": dict(kl="bernoulli"),
    }
    base = {"apt": jb}
    for label, kw in others.items():
        name = label.split("[")[0]
        if name not in jbandits.names():
            continue
        try:
            pol = jbandits.make(name, num_arms=k, **kw)
        except TypeError as err:  # signature drift: report instead of guessing
            print(f"{label:17s} : skipped ({err})")
            continue
        rate, comp = time_jbandits(pol, bandit, params, args.budget, args.reps)
        base[label] = rate
        ref = "apt" if name == "augucb" else "ucb1"
        rel = f"{rate / base[ref]:.2f}x {ref}" if ref in base else ""
        print(
            f"jbandits {label:16s}: {rate:12,.0f} pulls/s  {rel}  (compile {comp:.1f} s)"
        )


if __name__ == "__main__":
    main()
