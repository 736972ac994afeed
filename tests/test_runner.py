"""The one runner layer: compile cache, buckets, chunks, store/resume, processes."""

import json
import os
import signal
import socket
import subprocess
import sys
import time

import jax
import numpy as np
import pytest
from compile_log import count_compiles, count_traces

import jbandits
from jbandits.analysis import metrics
from jbandits.sim import runner

HERE = os.path.dirname(__file__)
WORKER = os.path.join(HERE, "scripts", "runner_worker.py")
sys.path.insert(0, os.path.join(HERE, "scripts"))


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_make_and_simulate_in_a_loop_compiles_once_and_memory_stays_flat():
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 6))
    metric = metrics.thresholding(0.5)

    def once(eps):
        policy = jbandits.make("apt", num_arms=6, threshold=0.5, epsilon=eps)
        return jbandits.simulate(
            policy,
            bandit,
            params,
            jax.random.key(0),
            budget=60,
            num_reps=32,
            metric=metric,
            progress=False,
        )

    once(0.0)  # warm-up: compile and allocator
    with count_compiles() as compiles:
        for eps in np.linspace(0.01, 0.2, 5):
            once(float(eps))
        rss0 = _rss_mb()
        errors = [
            once(float(eps)).metrics["error"].mean()
            for eps in np.linspace(0.01, 0.2, 35)
        ]
        rss1 = _rss_mb()
    assert compiles.count == 0
    assert len(set(np.round(errors, 6))) > 1  # epsilon really changed the runs
    assert rss1 - rss0 < 40, f"RSS grew {rss1 - rss0:.0f} MB over 35 calls"
    assert len(runner._CACHE) <= runner.CACHE_SIZE


@pytest.mark.parametrize(
    "kw",
    [
        dict(budget=30, num_reps=6),  # one chunk
        dict(budget=30, num_reps=32, batch_size=8),  # four chunks of the user's size
    ],
    ids=["one-chunk", "batch-size"],
)
def test_size_probe_and_run_share_one_trace(kw):
    """A run traces the runner's program once, in one chunk or in several.

    The chunk-size probe traces at the chunk's shape and sharding when memory does
    not bind, so the call reuses that trace (tracing is most of a second experiment
    run once executables come from the persistent cache). Fails if the probe traces a
    one-lane shape, or the whole work where it is chunked (2 traces).
    """
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 7))
    policy = jbandits.make("apt", num_arms=7, threshold=0.5, epsilon=0.05)
    runner.clear_cache()
    with count_traces() as traces:
        jbandits.simulate(
            policy, bandit, params, jax.random.key(0), progress=False, **kw
        )
    assert len(traces) == 1


def test_budget_sweep_in_chunks_of_one_budget_traces_once():
    """Chunks cut to one budget each (``_budget_homogeneous``): one trace too."""
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 7))
    runner.clear_cache()
    report = runner.Report()
    with count_traces() as traces:
        jbandits.sweep(
            "successive_rejects", bandit, params, jax.random.key(0),
            grid={"budget": [20, 40, 80]}, num_reps=256, horizon=80,
            progress=False, report=report, metric=metrics.identification(),
        )  # fmt: skip
    assert report.chunks > 1
    assert len(traces) == 1


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_program_cache_is_bounded():
    old = runner.programs.CACHE_SIZE
    runner.programs.CACHE_SIZE = 2
    try:
        bandit, params = jbandits.envs.bernoulli([0.2, 0.5, 0.8])
        for c in (1, 2, 3):
            jbandits.simulate(
                jbandits.make("ucb1", num_arms=3),
                bandit,
                params,
                jax.random.key(0),
                budget=12,
                num_reps=2,
                num_checkpoints=c,
                progress=False,
            )
        assert len(runner._CACHE) == 2
    finally:
        runner.programs.CACHE_SIZE = old


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_sweep_grid_compiles_one_program_per_policy_and_bucket():
    runner.clear_cache()  # count from a cold cache, whatever ran before
    rng = np.random.default_rng(0)
    ks = (2, 3, 5, 9)  # K buckets 4, 4, 8, 16
    budgets = (20, 50, 100)
    instances = [jbandits.envs.bernoulli(rng.uniform(0.1, 0.9, k))[1] for k in ks]
    policies = [
        ("apt", {"threshold": 0.5, "epsilon": [0.0, 0.05, 0.1]}),
        ("lsa", {"threshold": 0.5, "alpha": [1.0, 1.35]}),
    ]
    with count_compiles() as compiles:
        res = jbandits.sweep_grid(
            policies,
            jbandits.envs.BERNOULLI,
            instances,
            jax.random.key(1),
            budgets=budgets,
            num_reps=8,
            metric=metrics.thresholding(0.5),
            progress=False,
        )
    buckets = {jbandits.sim.k_bucket(k) for k in ks}
    assert compiles.count == len(buckets) * len(policies) == 3 * 2
    assert len(res.cells) == (3 + 2) * len(ks) * len(budgets)
    # every cell ran its own budget, and matches a direct simulate of that cell
    for c, cell in enumerate(res.cells):
        assert (res.values["num_pulls"][c] == cell["budget"]).all()
    c = next(
        i
        for i, cell in enumerate(res.cells)
        if cell["policy"] == "apt"
        and cell["K"] == 5
        and cell["budget"] == 50
        and cell["epsilon"] == 0.05
    )
    bandit = jbandits.envs.BERNOULLI
    inst = jbandits.envs.pad_arms(instances[2], 8)
    # instance 2 of the sweep uses key fold_in(key, 2)
    key2 = jax.random.fold_in(jax.random.key(1), 2)
    alone = jbandits.simulate(
        jbandits.apt(8, threshold=0.5, epsilon=np.float32(0.05)),
        bandit,
        inst,
        key2,
        budget=50,
        num_reps=8,
        horizon=64,
        metric=metrics.thresholding(0.5),
        progress=False,
    )
    np.testing.assert_array_equal(res.values["metric.error"][c], alone.metrics["error"])
    np.testing.assert_array_equal(res.values["regret"][c], alone.regret)
    table = res.summary()
    assert {"policy", "K", "budget", "error", "error_lo", "error_hi"} <= set(table)
    assert len(res.to_dataframe()) == len(res.cells) * 8
    assert 0.0 <= res.report.noop_fraction < 1.0  # reported (tiny chunks mix budgets)


def test_budget_sweep_stops_each_budget_at_its_own_budget():
    """Cells ordered by budget: a chunk of small budgets stops early (no-op fraction)."""
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 8))
    grid = {"budget": np.repeat([100, 1000, 10_000], 4)}
    report = runner.Report()
    jbandits.sweep(
        "successive_rejects",
        bandit,
        params,
        jax.random.key(0),
        grid=grid,
        num_reps=16,
        horizon=10_000,
        batch_size=64,
        progress=False,
        report=report,
        metric=metrics.identification(),
    )
    useful = 16 * 4 * (100 + 1000 + 10_000)
    assert report.pulls <= useful
    assert report.noop_fraction < 0.1, report.noop_fraction
    # simulating every budget to the largest would run 3 x 10_000 steps per lane
    assert report.lane_steps_executed < 0.5 * 16 * 12 * 10_000


@pytest.mark.parametrize("bad", [0, -3, 2.5, "8"])
def test_bad_batch_size_is_rejected(bad):
    bandit, params = jbandits.envs.bernoulli([0.2, 0.8])
    with pytest.raises(ValueError, match="batch_size"):
        jbandits.simulate(
            jbandits.make("ucb1", num_arms=2),
            bandit,
            params,
            jax.random.key(0),
            budget=10,
            num_reps=4,
            batch_size=bad,
            progress=False,
        )


def test_chunk_size_follows_the_memory_budget_and_results_do_not_depend_on_it():
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 10))
    policy = jbandits.make("apt", num_arms=10, threshold=0.5, epsilon=0.05)
    kw = dict(budget=50, num_reps=300, metric=metrics.thresholding(0.5), progress=False)
    small, large = runner.Report(), runner.Report()
    a = jbandits.simulate(
        policy,
        bandit,
        params,
        jax.random.key(3),
        memory_budget=2**16,
        report=small,
        **kw,
    )
    b = jbandits.simulate(policy, bandit, params, jax.random.key(3), report=large, **kw)
    assert small.chunk_size < large.chunk_size
    assert small.chunk_size & (small.chunk_size - 1) == 0  # a power of two
    assert large.chunk_size == 300  # everything fits: one chunk
    for x, y in zip(
        jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True
    ):
        np.testing.assert_array_equal(x, y)


def test_store_resume_reads_finished_chunks(tmp_path):
    from runner_worker import work

    first = work(str(tmp_path / "s"))
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    report = runner.Report()
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 10))
    again = jbandits.simulate(
        jbandits.make("apt", num_arms=10, threshold=0.5, epsilon=0.05),
        bandit,
        params,
        jax.random.key(0),
        budget=400,
        num_reps=4096,
        batch_size=64,
        num_checkpoints=4,
        metric=metrics.thresholding(0.5),
        store=str(tmp_path / "s"),
        progress=False,
        report=report,
    )
    assert report.chunks == 0 and report.chunks_skipped == 4096 // 64
    np.testing.assert_array_equal(first.metrics["error"], again.metrics["error"])
    with pytest.raises(ValueError, match="different work"):
        jbandits.simulate(
            jbandits.make("apt", num_arms=10, threshold=0.5, epsilon=0.1),
            bandit,
            params,
            jax.random.key(0),
            budget=400,
            num_reps=4096,
            store=str(tmp_path / "s"),
            progress=False,
        )


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_sigkill_then_resume_is_bit_identical(tmp_path):
    store = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, WORKER, str(store)], env=_env())
    deadline = time.monotonic() + 240
    parts = store / "g0"
    while time.monotonic() < deadline:
        done = len(list(parts.glob("part-*.parquet"))) if parts.exists() else 0
        if done >= 3 or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    finished = sorted(parts.glob("part-*.parquet"))
    assert 3 <= len(finished) < 64, "the worker was not killed mid-run"
    assert json.loads((store / "manifest.json").read_text())["status"] == "running"
    mtimes = {p.name: p.stat().st_mtime_ns for p in finished}
    subprocess.run([sys.executable, WORKER, str(store)], env=_env(), check=True)
    assert all((parts / n).stat().st_mtime_ns == t for n, t in mtimes.items())
    resumed = np.load(store / "result-0.npy")
    from runner_worker import work

    fresh = work(None).metrics["error"]
    np.testing.assert_array_equal(resumed, fresh)


def _env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(HERE), env.get("PYTHONPATH", "")]
    )
    env["JAX_PLATFORMS"] = "cpu"
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_two_processes_with_jax_distributed_match_one_process(tmp_path):
    store = tmp_path / "dist"
    port = str(_free_port())
    procs = [
        subprocess.Popen(
            [sys.executable, WORKER, str(store), str(i), "2", port], env=_env()
        )
        for i in range(2)
    ]
    for p in procs:
        assert p.wait(timeout=300) == 0
    a, b = (np.load(store / f"result-{i}.npy") for i in range(2))
    # without a store each process would return only its share: refused
    assert all((tmp_path / f"dist-refused-{i}").exists() for i in range(2))
    # only process 0 wrote the manifest; both used its chunk layout
    manifest = json.loads((store / "manifest.json").read_text())
    assert manifest["status"] == "complete" and manifest["chunk_sizes"]
    from runner_worker import work

    single = work(None).metrics["error"]
    np.testing.assert_array_equal(a, single)
    np.testing.assert_array_equal(b, single)


@pytest.mark.slow
@pytest.mark.seconds(510)  # its call on 2 idle cores, 2026-12-06
def test_acceptance_sweep_compiles_buckets_times_policies():
    """10 K values (2..1000) x 6 budgets (1e2..1e5) x 8 values x 3 policies."""
    runner.clear_cache()  # count from a cold cache, whatever ran before
    rng = np.random.default_rng(0)
    ks = (2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)
    budgets = (100, 398, 1585, 6310, 25119, 100_000)
    instances = [jbandits.envs.bernoulli(rng.uniform(0.1, 0.9, k))[1] for k in ks]
    grid8 = list(np.linspace(0.0, 0.14, 8))
    policies = [
        ("apt", {"threshold": 0.5, "epsilon": grid8}),
        ("lsa", {"threshold": 0.5, "alpha": list(np.linspace(0.5, 4.0, 8))}),
        ("ucbe", {"threshold": 0.5, "a": list(np.geomspace(0.5, 64, 8))}),
    ]
    with count_compiles() as compiles:
        res = jbandits.sweep_grid(
            policies,
            jbandits.envs.BERNOULLI,
            instances,
            jax.random.key(0),
            budgets=budgets,
            num_reps=2,
            metric=metrics.thresholding(0.5),
            progress=False,
        )
    buckets = {jbandits.sim.k_bucket(k) for k in ks}
    assert compiles.count == len(buckets) * len(policies)
    valid = sum(b >= k for k in ks for b in budgets)
    assert len(res.cells) == valid * 8 * len(policies)
    print(
        f"buckets {len(buckets)}, compiles {compiles.count}, no-op fraction "
        f"{res.report.noop_fraction:.3f}"
    )


def test_store_non_writer_uses_process_zeros_chunk_layout_and_never_writes(tmp_path):
    from jbandits.analysis.store import Store

    path = tmp_path / "s"
    writer = Store(path, fingerprint={"w": 1}, writer=True)
    reader = Store(path, fingerprint={"w": 1}, writer=False)
    before = (path / "manifest.json").read_bytes()
    with pytest.raises(TimeoutError, match="no chunk size"):
        reader.chunk_size("g0", 128, timeout=0.3)
    assert writer.chunk_size("g0", 64) == 64
    assert reader.chunk_size("g0", 128) == 64  # process 0's record wins
    after = (path / "manifest.json").read_bytes()
    reader.finish()
    assert (path / "manifest.json").read_bytes() == after != before
    with pytest.raises(ValueError, match="different work"):
        Store(path, fingerprint={"w": 2}, writer=False)


def test_lane_steps_count_each_device_to_its_slowest_lane():
    """Devices run their blocks of lanes independently: a block runs, between two
    checkpoints, as many segments as its slowest lane needed."""
    used = np.array([[1, 2], [3, 1], [5, 5], [4, 6]])  # [lanes, C] segments
    assert runner._lane_steps(used, 32, 1) == (5 + 6) * 32 * 4
    assert runner._lane_steps(used, 32, 2) == ((3 + 2) + (5 + 6)) * 32 * 2


def test_one_chunk_has_an_even_number_of_lanes_per_device():
    # XLA:CPU ran [lanes]-shaped kernels far slower at odd sizes: from 16 lanes per
    # device a one-chunk run is padded to an even number per device
    def chunk(total, devices):
        return runner.choose_chunk(
            100, total, memory_budget=2**40, batch_size=None, multiple=devices
        )

    assert chunk(502, 2) == 504 and chunk(500, 2) == 500
    assert chunk(501, 1) == 502 and chunk(15, 1) == 15 and chunk(31, 2) == 32
    assert chunk(33, 2) == 36  # 17 lanes per device -> 18
    assert chunk(700, 2) == 700 and chunk(703, 2) == 704


def test_assigning_a_moved_setting_raises_naming_its_module():
    # runner was one module; its settings now live in runner.programs / .results
    saved = (runner.programs.CACHE_SIZE, runner.results.EXACT_FLOAT32_COUNT)
    with pytest.raises(AttributeError, match=r"set jbandits.sim.runner.programs.CACH"):
        runner.CACHE_SIZE = 3
    with pytest.raises(AttributeError, match=r"set jbandits.sim.runner.results.EXAC"):
        runner.EXACT_FLOAT32_COUNT = 3
    assert saved == (runner.CACHE_SIZE, runner.EXACT_FLOAT32_COUNT)  # nothing changed
    assert saved == (runner.programs.CACHE_SIZE, runner.results.EXACT_FLOAT32_COUNT)
    runner.MIN_CHUNK = runner.MIN_CHUNK  # any other name is assigned as usual
