"""Timing helpers shared by the benchmark scripts."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import statistics
import time

import jax

import jbandits


def load() -> str:
    """The machine's 1, 5 and 15 minute load averages, for the printed header."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def simulate_call(policy, bandit, params, budget, reps, seed=1, **kwargs):
    """One :func:`jbandits.simulate` call, not yet made (no progress bar;
    ``kwargs`` go to ``simulate``): the timed unit of the benchmarks."""
    return functools.partial(
        jbandits.simulate,
        policy,
        bandit,
        params,
        jax.random.key(seed),
        budget=budget,
        num_reps=reps,
        progress=False,
        **kwargs,
    )


@contextlib.contextmanager
def collector_paused():
    """Collect garbage first, then keep Python's cyclic collector off (as ``timeit``
    does) while the block runs; on again afterwards if it was on.

    A full collection late in a benchmark run took up to 0.74 s (21-23 of them per
    ``benchmarks.throughput`` run, 6-7 s in all: it frees the programs compiled for
    the kernel counts), against timed calls of ~10 ms: one inside a timed call made
    that call's row 20-40 % slower in whichever tree it hit
    (``benchmarks/notes_throughput_ab.md``)."""
    was_on = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def median_time(fn, repeats: int = 3, *, warm: bool = False) -> float:
    """Median wall time of ``repeats`` calls of ``fn()`` (after one untimed call if
    ``warm``: compilation and caches), the garbage collector paused
    (:func:`collector_paused`)."""
    if warm:
        fn()
    times = []
    with collector_paused():
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
    return statistics.median(times)


def median_times_interleaved(fns: dict, repeats: int = 5) -> dict:
    """Median wall time of each of ``fns`` (name -> callable), over ``repeats``
    rounds that call every function once, in an order reversed every other round.

    For ratios between runs of a few tens of milliseconds: on a machine whose speed
    drifts, consecutive blocks of one function and then the other measure the drift
    as much as the difference. The garbage collector is paused throughout
    (:func:`collector_paused`).
    """
    names = list(fns)
    times = {name: [] for name in names}
    with collector_paused():
        for r in range(repeats):
            for name in names if r % 2 == 0 else reversed(names):
                t0 = time.perf_counter()
                fns[name]()
                times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}
