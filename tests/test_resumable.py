"""runner.resumable: every batched call inside the block resumes from its own store
(what ``python -m experiments run`` wraps each experiment in)."""

import json

import jax
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import jbandits
from jbandits.analysis import metrics
from jbandits.analysis.store import Store, StoreDamaged
from jbandits.sim import runner

K, BUDGET, REPS, CHUNK = 6, 120, 256, 64


def _two_calls(report_a=None, report_b=None, epsilon=0.05):
    """Two calls that differ only in the factory (same numbers, same keys)."""
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    common = dict(
        budget=BUDGET,
        num_reps=REPS,
        batch_size=CHUNK,
        metric=metrics.thresholding(0.5),
        progress=False,
    )
    key = jax.random.key(3)
    a = jbandits.simulate(
        jbandits.make("apt", num_arms=K, threshold=0.5, epsilon=epsilon),
        bandit, params, key, report=report_a, **common,
    )  # fmt: skip
    b = jbandits.simulate(
        jbandits.make("uniform", num_arms=K, threshold=0.5),
        bandit, params, key, report=report_b, **common,
    )  # fmt: skip
    return a.metrics["error"], b.metrics["error"]


def _stores(root):
    return sorted(p for p in root.iterdir() if p.is_dir())


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_each_call_gets_its_own_store_and_a_rerun_reads_every_chunk(tmp_path):
    plain = _two_calls()
    with runner.resumable(str(tmp_path)):
        first = _two_calls()
    stores = _stores(tmp_path)
    assert [p.name[:5] for p in stores] == ["0000-", "0001-"]
    for p in stores:
        assert json.loads((p / "manifest.json").read_text())["status"] == "complete"
    ra, rb = runner.Report(), runner.Report()
    with runner.resumable(str(tmp_path)):
        again = _two_calls(ra, rb)
    chunks = REPS // CHUNK
    assert (ra.chunks, ra.chunks_skipped) == (0, chunks)
    assert (rb.chunks, rb.chunks_skipped) == (0, chunks)
    for x, y, z in zip(plain, first, again, strict=True):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_array_equal(x, z)
    assert _stores(tmp_path) == stores  # no new stores for the same work


@pytest.mark.slow  # 7-9 s on a 2-core machine: CI runs it in the slow step
def test_a_lost_chunk_is_recomputed_alone_and_stored_chunks_are_what_is_read(
    tmp_path, monkeypatch
):
    with runner.resumable(str(tmp_path)):
        first, _ = _two_calls()
    apt_store = _stores(tmp_path)[0]
    (apt_store / "g0" / "part-00002.parquet").unlink()  # as if killed before it
    # the stored chunks are what is read: count the reads
    reads = []
    read = Store.read
    monkeypatch.setattr(
        Store, "read", lambda self, *a: reads.append(a[:2]) or read(self, *a)
    )
    report = runner.Report()
    with runner.resumable(str(tmp_path)):
        again, _ = _two_calls(report)
    assert (report.chunks, report.chunks_skipped) == (1, REPS // CHUNK - 1)
    assert sorted(c for g, c in reads[: REPS // CHUNK - 1]) == [0, 1, 3]
    np.testing.assert_array_equal(first, again)  # chunk 2 recomputed bit-identical
    # a stored chunk that was changed is refused, naming its file (it was read back
    # as it was before parts carried digests)
    part0 = apt_store / "g0" / "part-00000.parquet"
    table = pq.read_table(part0)
    values = table.column("metric.error").combine_chunks().flatten()
    flipped = pa.FixedSizeListArray.from_arrays(
        pa.array(1 - values.to_numpy(zero_copy_only=False)), 1
    )
    index = table.column_names.index("metric.error")
    pq.write_table(table.set_column(index, "metric.error", flipped), part0)
    with runner.resumable(str(tmp_path)), pytest.raises(StoreDamaged, match=str(part0)):
        _two_calls()


def test_changed_work_gets_a_new_store(tmp_path):
    with runner.resumable(str(tmp_path)):
        _two_calls()
    report = runner.Report()
    with runner.resumable(str(tmp_path)):
        _two_calls(report, epsilon=0.1)
    assert report.chunks == REPS // CHUNK and report.chunks_skipped == 0
    assert len(_stores(tmp_path)) == 3  # apt(0.1) is new; uniform's is reused


def test_outside_the_block_nothing_is_stored(tmp_path):
    root = tmp_path / "r"
    with runner.resumable(str(root)):
        pass
    assert not root.exists()  # a block without batched work leaves nothing
    _two_calls()
    assert not root.exists()


def test_return_state_calls_are_not_stored(tmp_path):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    with runner.resumable(str(tmp_path)):
        res = jbandits.simulate(
            jbandits.make("apt", num_arms=K, threshold=0.5),
            bandit, params, jax.random.key(0), budget=BUDGET, num_reps=8,
            return_state=True, progress=False,
        )  # fmt: skip
    assert res.state is not None and _stores(tmp_path) == []


def test_hand_built_policies_are_never_stored(tmp_path):
    # two hand-built APTs differ only in a number their closures hold: no key can
    # tell them apart (the old byte-code digest of the runner's wrapper could not),
    # so store= refuses them and resumable() runs them without a store
    from jbandits.analysis.store import digest

    apt = jbandits.core.registry.raw_factory("apt")  # the factory itself: no spec

    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    common = dict(budget=BUDGET, num_reps=8, progress=False)
    key = jax.random.key(0)
    with pytest.raises(ValueError, match="store= needs a registered policy"):
        jbandits.simulate(
            apt(K, threshold=0.5), bandit, params, key, store=str(tmp_path / "s"),
            **common,
        )  # fmt: skip
    with (
        runner.resumable(str(tmp_path)),
        pytest.warns(UserWarning, match="not stored") as caught,
    ):
        jbandits.simulate(apt(K, threshold=0.5), bandit, params, key, **common)
    assert _stores(tmp_path) == []
    assert caught[0].filename == __file__  # the caller's line, not the runner's
    with pytest.raises(TypeError, match="cannot fingerprint"):
        digest({"f": lambda x: x + 1})


def test_experiments_cli_resumes_an_interrupted_run_and_cleans_up(
    tmp_path, monkeypatch
):
    """``python -m experiments run``: a run interrupted after its first batched call
    resumes from OUT/.resume/NAME (the call is read, not recomputed) and the folder
    is removed once the results are written; --no-resume keeps nothing."""
    import experiments.__main__ as cli
    from experiments import _core

    reports, state = [], {"fail": True}

    def exp(cfg):
        report = runner.Report()
        reports.append(report)
        error, _ = _two_calls(report)
        if state["fail"]:
            raise KeyboardInterrupt  # as if stopped after the batched work
        x = np.arange(2.0)
        curve = {"x": x, "mean": x, "lo": x, "hi": x}
        return _core.Outcome(
            panels=[{"title": "t", "curves": {"A": curve}}],
            table=[{"algorithm": "A", "error": float(np.mean(error))}],
            claims=[],
            arrays={"error": np.asarray(error)},
        )

    fake = {"fake-resume": _core.Experiment("fake-resume", "Fake", "test", exp)}
    monkeypatch.setattr(_core, "EXPERIMENTS", fake)
    monkeypatch.setattr(cli, "_load_all", lambda: None)
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")
    monkeypatch.delenv("JBANDITS_PROGRESS", raising=False)  # --quiet sets it
    args = ["run", "fake-resume", "--out", str(tmp_path), "--quiet"]
    assert cli.main(args) == 130  # Ctrl-C: one line, exit status 130
    partial = tmp_path / ".resume" / "fake-resume"
    assert len(_stores(partial)) == 2
    state["fail"] = False
    assert cli.main(args) == 0
    assert (reports[1].chunks, reports[1].chunks_skipped) == (0, REPS // CHUNK)
    assert not partial.exists()
    saved = np.load(tmp_path / "fake-resume" / "results.npz")["error"]
    np.testing.assert_array_equal(saved, _two_calls()[0])
    assert cli.main([*args, "--no-resume"]) == 0
    assert (reports[2].chunks, reports[2].chunks_skipped) == (REPS // CHUNK, 0)
    assert not (tmp_path / ".resume").exists()
