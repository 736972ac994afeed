"""Throughput: jbandits pulls/second against NumPy and numba peers, in one process.

Every jbandits rate is the median of 7 warm runs in this process (the peers': 3; the
Beta / Gaussian rows: ``--beta-repeats``, interleaved); the load average is printed
before and after. Rows:

* APT (Locatelli et al., ICML 2016; eps = 0.05), seed 000 Expt-1 instance (K = 100
  Gaussian arms, tau = 0.5), T = 10^4, R = 500, against

  - a **lock-step vectorised NumPy** APT: all R replications advance together on
    ``[R, K]`` arrays (one ``argmin`` over the arm axis per step), what a strong
    NumPy user writes;
  - numba, one thread and ``prange`` over replications (all cores);
  - both of these also keeping APT's index per arm and recomputing only the pulled
    arm's entry ("cached index"), as the library does (see the floor below);
  - the per-step NumPy loop (one replication at a time).

* UCB1 (Auer et al., Machine Learning 2002), K = 20 Bernoulli arms, random tie
  breaking (uniform among the maximisers), against a lock-step NumPy UCB1. The
  library draws one 32-bit integer per selection and takes the tied arm of that
  rank (:func:`jbandits.policies.blocks.arms.argmax_masked`); the NumPy peer draws ``u ~ U[0, 1)^K``
  and takes ``argmax(where(tied, u, -1))``, its faster form (the rank rule written
  in NumPy, a ``cumsum`` over the arms, measured 0.9x as fast).

* CPU ns per pull per core (``cores * wall / pulls``) of APT at K = 10, 100, 1000
  beside a floor estimate ``4 ns + c * K`` with ``c = 0.5 .. 1 ns`` per arm and core:
  a step must read each arm's count and sum once to form the index and reduce it to
  its minimum (two float32 loads, a sqrt/divide/abs chain and a compare per arm: at
  8-wide AVX2 about 0.5 ns per arm at 3 GHz when the divide and sqrt pipelines are
  the bound, 1 ns when the arrays stream from L2), plus a fixed ~4 ns for the
  reward (a threefry2x32 hash of 20 rounds and the normal's inverse error function,
  vectorised over lanes), the gather/scatter of the pulled arm's statistics and the
  loop. It is an estimate from instruction counts, not a measurement. APT's index
  is local (arm i's index reads arm i's statistics only), so the library keeps it
  per arm and recomputes the pulled arm's entry (``index_policy(local=True)``): a
  step then reads each arm's index once for the arg-min (one float load and a
  compare per arm) and can run below this floor at large K. The NumPy and numba
  peers recompute the whole index every step, as the papers' pseudo-code does.
  Beside the estimate each row prints a measured reference from the same run: the
  numba ``prange`` APT with the cached index at the same K and R (a compiled loop
  over replications with numba's own normal generator), the fastest peer here.

* Thompson sampling and Bayes-UCB with Beta and Gaussian posteriors (K = 20 and 100
  Bernoulli arms, ``--beta-arms``; T and R from ``--beta-budget`` /
  ``--beta-reps``, smaller than the APT rows because Bayes-UCB's Beta quantile is
  still slow), with the Beta / Gaussian ratio. These runs last tens of
  milliseconds, so the two forms are timed alternately (``--beta-repeats`` runs of
  each, default 7, order reversed every other round) and each rate is that median.

For each jbandits policy it also prints the compile time (first call minus the warm
median) and the number of kernels one engine step runs in the optimised HLO
(:mod:`benchmarks.hlo`: fusions, un-fused copies and other thunks of the inner
scan's body; nested loops counted once per trip), for the program compiled for one
lane and ("at R lanes") for the one the timed run executes.

    python -m benchmarks.throughput [--reps 500] [--budget 10000] [--quick]

On CPU the script exposes every core as a JAX host device (XLA_FLAGS
``--xla_force_host_platform_device_count``, set before JAX starts unless XLA_FLAGS is
already set), so :func:`jbandits.simulate` shards the replications over the cores.
"""

from __future__ import annotations

import argparse
import os
import time

if __name__ == "__main__" and "XLA_FLAGS" not in os.environ:
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={os.cpu_count()}"

import jax  # noqa: E402
import numpy as np  # noqa: E402

import jbandits  # noqa: E402
from benchmarks import hlo  # noqa: E402
from benchmarks._timing import (  # noqa: E402
    load,
    median_time,
    median_times_interleaved,
    simulate_call,
)
from jbandits.envs import problems  # noqa: E402

TAU, EPS = 0.5, 0.05


# ------------------------------------------------------------------------- instances
def apt_instance(num_arms: int = 100):
    """Seed 000 Expt-1 for K = 100; otherwise K Gaussian arms around tau."""
    if num_arms == 100:
        p = problems.augucb_experiment(1)
        return np.asarray(p.means, np.float64), np.asarray(p.stds, np.float64)
    rng = np.random.default_rng(num_arms)
    return rng.uniform(0.2, 0.8, num_arms), np.full(num_arms, 0.5)


# ----------------------------------------------------------------------------- peers
def apt_index(n, s):
    """APT's index ``sqrt(n) * (|s / n - tau| + eps)`` (NumPy, any shape)."""
    return np.sqrt(n) * (np.abs(s / n - TAU) + EPS)


def apt_numpy_loop(means, stds, budget, seed):
    """One replication, one step at a time."""
    rng = np.random.default_rng(seed)
    k = means.size
    n = np.zeros(k)
    s = np.zeros(k)
    for t in range(budget):
        i = t if t < k else int(np.argmin(apt_index(n, s)))
        s[i] += means[i] + stds[i] * rng.standard_normal()
        n[i] += 1
    return s / n >= TAU


def apt_lockstep(means, stds, budget, reps, seed, cached=False):
    """All replications in lock-step on ``[R, K]`` arrays (first-index ties).

    ``cached``: keep the index ``[R, K]`` and recompute only the pulled arms'
    entries (the library's form of APT's local index) instead of the whole index
    every step; the same draws and arms either way.
    """
    rng = np.random.default_rng(seed)
    k = means.size
    rows = np.arange(reps)
    n = np.zeros((reps, k))
    s = np.zeros((reps, k))
    idx = np.zeros((reps, k))
    for t in range(budget):
        if t < k:
            i = np.full(reps, t)
        else:
            i = np.argmin(idx if cached else apt_index(n, s), axis=1)
        s[rows, i] += means[i] + stds[i] * rng.standard_normal(reps)
        n[rows, i] += 1
        if cached:
            idx[rows, i] = apt_index(n[rows, i], s[rows, i])
    return s / n >= TAU


def ucb1_lockstep(means, budget, reps, seed):
    """Lock-step UCB1 on Bernoulli arms; ties uniform via ``argmax(where(tied, u))``
    with ``u ~ U[0, 1)^K`` (the library's draw differs; the law is the same)."""
    rng = np.random.default_rng(seed)
    k = means.size
    rows = np.arange(reps)
    n = np.zeros((reps, k))
    s = np.zeros((reps, k))
    for t in range(budget):
        if t < k:
            i = np.full(reps, t)
        else:
            idx = s / n + np.sqrt(2.0 * np.log(t) / n)
            tied = idx == idx.max(axis=1, keepdims=True)
            i = np.argmax(np.where(tied, rng.random((reps, k)), -1.0), axis=1)
        s[rows, i] += rng.random(reps) < means[i]
        n[rows, i] += 1
    return s.sum(axis=1)


def make_numba(parallel: bool):
    """numba APT, ``prange`` over replications if ``parallel``: ``(recomputing,
    cached)``, the latter keeping the index per arm (see :func:`apt_lockstep`)."""
    import numba

    loop = numba.prange if parallel else range

    def build(cached: bool):  # numba freezes ``cached``: no branch is left per step
        @numba.njit(cache=False, parallel=parallel)
        def apt_numba(means, stds, budget, tau, eps, reps, seed):
            np.random.seed(seed)
            k = means.size
            out = np.zeros((reps, k), np.bool_)
            for r in loop(reps):
                n = np.zeros(k)
                s = np.zeros(k)
                idx = np.zeros(k)
                for t in range(budget):
                    if t < k:
                        i = t
                    else:
                        best = np.inf
                        i = 0
                        for j in range(k):
                            if cached:
                                v = idx[j]
                            else:
                                v = np.sqrt(n[j]) * (abs(s[j] / n[j] - tau) + eps)
                            if v < best:
                                best = v
                                i = j
                    s[i] += means[i] + stds[i] * np.random.standard_normal()
                    n[i] += 1
                    if cached:
                        idx[i] = np.sqrt(n[i]) * (abs(s[i] / n[i] - tau) + eps)
                for j in range(k):
                    out[r, j] = s[j] / n[j] >= tau
            return out

        return apt_numba

    return build(False), build(True)


# -------------------------------------------------------------------------- jbandits
COUNT_KERNELS = True  # --no-kernels: skip the kernel counts (most of a run's time)


def step_kernels(policy, bandit, params, budget, lanes=None) -> str:
    """Kernels per engine step of the runner's program for ``policy``, compiled for
    one lane and (``lanes``) for the lanes a timed run uses."""
    if not COUNT_KERNELS:
        return "-"
    try:
        steps = hlo.engine_step_kernels(policy, bandit, params, budget)
        out = hlo.summary(steps[0])
        if len(steps) > 1:
            out = f"{out}; guarded {hlo.summary(steps[-1])}"
        if lanes:
            many = hlo.engine_step_kernels(policy, bandit, params, budget, lanes)
            out = f"{out}; at {lanes} lanes {hlo.total(many[0])}"
        return out
    except Exception as err:  # noqa: BLE001 - informational only
        return f"? ({type(err).__name__})"


def first_call_seconds(call) -> float:
    """Wall time of ``call()`` (its first: compilation included)."""
    t0 = time.perf_counter()
    call()
    return time.perf_counter() - t0


def time_jbandits(policy, bandit, params, budget, reps, repeats=7):
    """(pulls/s median of ``repeats``, compile seconds, kernels per step).

    7 timed calls (0.05-0.5 s each): with 3, the APT K=1000 row's median moved by
    +-8 % from one run to the next in either tree (``notes_throughput_ab.md``)."""
    first = first_call_seconds(simulate_call(policy, bandit, params, budget, reps, 0))
    t = median_time(simulate_call(policy, bandit, params, budget, reps), repeats)
    return (
        budget * reps / t,
        max(first - t, 0.0),
        step_kernels(policy, bandit, params, budget, reps),
    )


def row(label, rate, extra=""):
    print(f"  {label:34s} {rate:14,.0f} pulls/s  {extra}")


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks.throughput")
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--budget", type=int, default=10_000)
    ap.add_argument("--numpy-reps", type=int, default=2)
    ap.add_argument("--quick", action="store_true", help="T=2000, R=200")
    ap.add_argument("--skip-numba", action="store_true")
    ap.add_argument("--beta-budget", type=int, default=2000, help="T of Beta rows")
    ap.add_argument("--beta-reps", type=int, default=100, help="R of Beta rows")
    ap.add_argument(
        "--beta-repeats",
        type=int,
        default=7,
        help="timed runs of each form in the Beta rows (interleaved)",
    )
    ap.add_argument(
        "--beta-arms", default="20,100", help="K of Beta rows (comma-separated)"
    )
    ap.add_argument(
        "--no-kernels",
        action="store_true",
        help="no kernel counts per step (their compilations are ~60 %% of the run)",
    )
    args = ap.parse_args(argv)
    global COUNT_KERNELS
    COUNT_KERNELS = not args.no_kernels
    if args.quick:
        args.budget, args.reps = 2000, 200
    budget, reps = args.budget, args.reps
    cores = len(jax.devices())
    print(
        f"devices: {cores} x {jax.devices()[0].platform}  T={budget}  R={reps}  "
        f"jbandits median of 7, peers of 3  load {load()}"
    )

    # ---------------------------------------------------------------- APT, K = 100
    means, stds = apt_instance(100)
    bandit, params = jbandits.envs.gaussian(means, stds)
    apt = jbandits.apt(100, threshold=TAU, epsilon=EPS)
    jb, comp, kern = time_jbandits(apt, bandit, params, budget, reps)
    print(f"APT K=100 (compile {comp:.1f} s; step: {kern})")
    row("jbandits", jb)
    lock = (
        budget * reps / median_time(lambda: apt_lockstep(means, stds, budget, reps, 0))
    )
    row("lock-step NumPy [R, K]", lock, f"jbandits {jb / lock:6.2f}x")
    cached = (
        budget
        * reps
        / median_time(lambda: apt_lockstep(means, stds, budget, reps, 0, cached=True))
    )
    row("lock-step NumPy, cached index", cached, f"jbandits {jb / cached:6.2f}x")
    loop = (
        budget
        * args.numpy_reps
        / median_time(
            lambda: [
                apt_numpy_loop(means, stds, budget, r) for r in range(args.numpy_reps)
            ]
        )
    )
    row("per-step NumPy loop", loop, f"jbandits {jb / loop:6.1f}x")
    cached_prange = None  # numba prange with the cached index, for the ns rows
    if not args.skip_numba:
        for parallel in (False, True):
            label = f"numba {'prange' if parallel else '1 thread'}"
            try:
                fns = make_numba(parallel)
            except ImportError:
                print(f"  {label}: numba not installed (pip install -e .[bench])")
                continue
            for fn, suffix in zip(fns, ("", ", cached index"), strict=True):
                fn(means, stds, 200, TAU, EPS, 2, 0)  # compile
                rate = (
                    budget
                    * reps
                    / median_time(
                        lambda fn=fn: fn(means, stds, budget, TAU, EPS, reps, 1)
                    )
                )
                row(label + suffix, rate, f"jbandits {jb / rate:6.2f}x")
                if parallel and suffix:
                    cached_prange, cached_rate = fn, rate

    # ------------------------------------------------------ UCB1, K = 20, random ties
    k20 = np.linspace(0.1, 0.9, 20)
    bern, bparams = jbandits.envs.bernoulli(k20)
    ucb = jbandits.make("ucb1", num_arms=20, tie_break="random")
    jb_ucb, comp, kern = time_jbandits(ucb, bern, bparams, budget, reps)
    print(f"UCB1 K=20 Bernoulli, random ties (compile {comp:.1f} s; step: {kern})")
    row("jbandits", jb_ucb)
    lock = budget * reps / median_time(lambda: ucb1_lockstep(k20, budget, reps, 0))
    row("lock-step NumPy [R, K]", lock, f"jbandits {jb_ucb / lock:6.2f}x")

    # ------------------------------------------------------ ns per pull vs the floor
    print("APT ns per pull per core vs the floor 4 ns + (0.5 .. 1) ns * K")
    # K = 10 also at 4R and 16R, K = 100 at 4R: a step's fixed costs (kernel
    # dispatch, the loop's own iteration) are shared by fewer arm-lanes at small K,
    # so few lanes per device measure the dispatch rather than the per-pull work the
    # floor models (a sweep at scale runs thousands of lanes per device)
    for k, r in (
        (10, reps),
        (10, 4 * reps),
        (10, 16 * reps),
        (100, reps),
        (100, 4 * reps),
        (1000, max(reps // 5, 2)),
    ):
        m, s = apt_instance(k)
        b, p = jbandits.envs.gaussian(m, s)
        if (k, r) == (100, reps):
            rate = jb
        else:  # the other rows are timed here (K=1000 at R/5, for time)
            rate, comp, kern = time_jbandits(
                jbandits.apt(k, threshold=TAU, epsilon=EPS), b, p, budget, r
            )
            print(f"  (K={k}, R={r}: compile {comp:.1f} s; step: {kern})")
        ns = cores * 1e9 / rate
        lo, hi = 4 + 0.5 * k, 4 + 1.0 * k
        measured = ""
        if cached_prange is not None:
            if (k, r) == (100, reps):
                peer = cached_rate
            else:
                peer = (
                    budget
                    * r
                    / median_time(
                        lambda m=m, s=s, r=r: cached_prange(
                            m, s, budget, TAU, EPS, r, 1
                        )
                    )
                )
            peer_ns = cores * 1e9 / peer
            measured = f"; numba prange cached {peer_ns:7.1f} ns ({ns / peer_ns:4.2f}x)"
        print(
            f"  K={k:5d} R={r:5d}: {ns:8.1f} ns/pull  floor {lo:6.1f} .. {hi:6.1f} ns"
            f"  ratio {ns / hi:5.2f} .. {ns / lo:5.2f}x{measured}"
        )

    # ------------------------------------------------------- Beta vs Gaussian forms
    bb, br = args.beta_budget, args.beta_reps
    for bk in (int(k) for k in args.beta_arms.split(",")):
        print(
            f"Thompson / Bayes-UCB, K={bk} Bernoulli, T={bb} R={br}: Beta vs Gaussian "
            "posterior"
        )
        kb, kp = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, bk))
        for name in ("thompson", "bayes_ucb"):
            pols = {
                post: jbandits.make(name, num_arms=bk, posterior=post)
                for post in ("gauss", "beta")
            }
            calls = {p: simulate_call(pol, kb, kp, bb, br) for p, pol in pols.items()}
            firsts = {post: first_call_seconds(call) for post, call in calls.items()}
            # the two forms alternate (short runs on a machine whose speed drifts)
            times = median_times_interleaved(calls, args.beta_repeats)
            rates = {post: bb * br / t for post, t in times.items()}
            for post, pol in pols.items():
                kern = step_kernels(pol, kb, kp, bb, br)
                comp = max(firsts[post] - times[post], 0.0)
                row(
                    f"{name}[{post}]",
                    rates[post],
                    f"compile {comp:.1f} s; step: {kern}",
                )
            print(
                f"  {name}: beta / gauss = {rates['beta'] / rates['gauss']:.3f} "
                f"(median of {args.beta_repeats}, interleaved)"
            )

    # ----------------------------------------------------------------- other policies
    for label, kw in {
        "augucb K=100": dict(threshold=TAU, budget=budget),
        "ucb1 K=100 (first ties)": dict(tie_break="first"),
        "klucb K=100": dict(kl="gauss"),
        "sequential_halving K=100": dict(budget=budget),
    }.items():
        name = label.split()[0]
        pol = jbandits.make(name, num_arms=100, **kw)
        rate, comp, kern = time_jbandits(pol, bandit, params, budget, reps)
        row(label, rate, f"compile {comp:.1f} s; step: {kern}")
    print(f"load {load()}")


if __name__ == "__main__":
    main()
