import atexit
import os
import shutil
import sys
import tempfile
import time

import pytest

# Trace equivalence compares JAX against plain Python bit for bit. XLA's CPU backend
# contracts a*b + c into fused multiply-adds on FMA hardware, which Python never does,
# so Welford's M2 could differ in the last ulp and flip a later arg-max (seen with
# SHAdaVar). Tests therefore compile without FMA; this must precede JAX's backend start.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX"
).strip()
# The suite is dominated by compiling many small programs that run for milliseconds;
# LLVM's optimisation level 0 cuts ~20% of its CPU time (tests/test_engine.py: 57.6 ->
# 46.8 s) and changes no result (no fast-math at any level; FMA is ruled out above).
# tests/test_default_build.py removes both flags for its child process.
os.environ["XLA_FLAGS"] += " --xla_backend_optimization_level=0"

sys.path.insert(0, os.path.dirname(__file__))


def _shared_compile_cache() -> None:
    """One persistent compilation cache per test run, shared by the xdist workers.

    Many tests compile the same program (the same policy, shapes and options) in
    different files and workers; with a cache in a directory made for the run the
    second compile is a read (tests/test_contract.py + test_trace.py on 2 cores:
    4:04 -> 3:38). The process that starts the run makes the directory (the xdist
    workers inherit it through the environment) and removes it at exit, so no result
    depends on an earlier run. ``JBANDITS_TEST_COMPILE_CACHE=0`` turns it off.
    """
    if os.environ.get("JBANDITS_TEST_COMPILE_CACHE", "1") == "0":
        return
    import jax

    path = os.environ.get("JBANDITS_TEST_COMPILE_CACHE_DIR")
    if path is None:
        path = tempfile.mkdtemp(prefix="jbandits-test-cache-")
        os.environ["JBANDITS_TEST_COMPILE_CACHE_DIR"] = path
        atexit.register(shutil.rmtree, path, ignore_errors=True)
    jax.config.update("jax_compilation_cache_dir", path)
    # programs that compile in under 0.2 s are not worth a write and a read
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.2)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


_shared_compile_cache()


@pytest.fixture(autouse=True, scope="module")
def _release_programs():
    """Drop the compiled programs of a test file when it ends (the runner's program
    cache and JAX's own caches).

    A test worker otherwise keeps every program it compiled: 6.5 GB resident after 28
    minutes of the slow set, where an XLA CPU compile then segfaulted (2026-12-07,
    CI and here). Programs shared by files come back from the persistent compile cache
    above where it is on.
    """
    yield
    import gc

    import jax

    from jbandits.sim import runner

    runner.clear_cache()
    jax.clear_caches()
    gc.collect()


def _slow_ids() -> set[str]:
    """The node ids of tests/slow_ids.txt (a ``#`` starts a comment)."""
    path = os.path.join(os.path.dirname(__file__), "slow_ids.txt")
    with open(path) as f:
        ids = (line.partition("#")[0].strip() for line in f)
        return {nid for nid in ids if nid}


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items):
    """Mark the tests listed in tests/slow_ids.txt ``slow``; a listed id whose file
    was collected but which names no test is an error (a renamed test must not
    silently return to the default suite, nor a stale line stay)."""
    listed = _slow_ids()
    seen, files = set(), set()
    for item in items:
        nid = item.nodeid
        files.add(nid.split("::")[0])
        if nid in listed:
            item.add_marker(pytest.mark.slow)
            seen.add(nid)
    stale = [n for n in listed if n not in seen and n.split("::")[0] in files]
    if stale:
        raise pytest.UsageError(
            "tests/slow_ids.txt names tests that do not exist: " + ", ".join(stale)
        )
    # the tests that state their seconds (pytest.mark.seconds) start first, longest
    # first, so that under the CI budget below they start early, not at its end
    items.sort(key=lambda item: -_seconds(item))


def _seconds(item) -> float:
    """The seconds a test's ``@pytest.mark.seconds(s)`` states (its call on 2 idle
    cores), else 0."""
    mark = item.get_closest_marker("seconds")
    return float(mark.args[0]) if mark else 0.0


# The CI time budget. .ci/run sets JBANDITS_CI_DEADLINE (seconds since the epoch) for
# its optional steps (the slow and fused sets): a test that would start after it is
# skipped with a reason that says so, and the run ends with a count of them, so a slow
# CI machine gives a shorter run that says what it left out rather than no result at
# all. A test that starts runs to its end and its failures count as always. A test
# that states its seconds (pytest.mark.seconds, the few of over a minute) also does
# not start when, at the CI machine's worst measured pace (_SLOW_MACHINE times the
# idle seconds), it would end more than _GRACE seconds after the deadline.
_BUDGET_REASON = "not started: past the CI time budget (JBANDITS_CI_DEADLINE)"
_SLOW_MACHINE = 2.5  # CI took 2.4 x an idle 2-core machine's time (2026-12-02)
_GRACE = 15 * 60


def _deadline() -> float | None:
    value = os.environ.get("JBANDITS_CI_DEADLINE")
    return float(value) if value else None


def pytest_runtest_setup(item):
    deadline = _deadline()
    if deadline is None:
        return
    now = time.time()
    if now > deadline or now + _SLOW_MACHINE * _seconds(item) > deadline + _GRACE:
        pytest.skip(_BUDGET_REASON)


_over_budget: list[str] = []


def pytest_runtest_logreport(report):
    if (
        report.when == "setup"
        and report.skipped
        and _BUDGET_REASON in str(report.longrepr)
    ):
        _over_budget.append(report.nodeid)


def pytest_terminal_summary(terminalreporter):
    if _over_budget:
        terminalreporter.write_line(
            f"{len(_over_budget)} tests not run: past the CI time budget "
            f"(first: {_over_budget[0]})"
        )
