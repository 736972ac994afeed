"""Issue 54 (hardening round 3), items 6, 7 (manifest format, Gaussian ``std``), 11
and 13: a results store proves its parts; damage names the file and the way forward;
the CLIs check their inputs before they allocate."""

import json
import os
import shutil

import jax
import numpy as np
import pyarrow.parquet as pq
import pytest

import jbandits
from jbandits.analysis import metrics, store
from jbandits.analysis.store import Store, StoreDamaged
from jbandits.sim import runner

K, BUDGET, REPS, CHUNK = 4, 40, 256, 64  # 4 chunks of 64 replications


def _run(path, report=None):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    res = jbandits.simulate(
        jbandits.make("apt", num_arms=K, threshold=0.5, epsilon=0.05),
        bandit,
        params,
        jax.random.key(3),
        budget=BUDGET,
        num_reps=REPS,
        batch_size=CHUNK,
        metric=metrics.thresholding(0.5),
        progress=False,
        store=path,
        report=report,
    )
    return np.asarray(res.pulls)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """A finished store of 4 chunks and the run's pulls (run once per module)."""
    path = tmp_path_factory.mktemp("store") / "s"
    pulls = _run(path)
    return path, pulls


@pytest.fixture
def copy(written, tmp_path):
    path, pulls = written
    dst = tmp_path / "s"
    shutil.copytree(path, dst)
    return dst, pulls


def _part(path, chunk):
    return path / "g0" / f"part-{chunk:05d}.parquet"


# item 6 ------------------------------------------------------- swapped parts
def test_swapped_parts_are_refused_naming_the_file_and_the_way_forward(copy):
    path, pulls = copy
    a, b = _part(path, 0), _part(path, 1)
    data_a, data_b = a.read_bytes(), b.read_bytes()
    a.write_bytes(data_b)
    b.write_bytes(data_a)
    with pytest.raises(StoreDamaged) as err:
        _run(path)
    text = str(err.value)
    assert str(a) in text and f"delete {a} and rerun" in text, text
    # the way forward works: deleting the damaged parts recomputes exactly them
    for p in (a, b):
        p.unlink()
    report = runner.Report()
    np.testing.assert_array_equal(_run(path, report), pulls)
    assert (report.chunks, report.chunks_skipped) == (2, 2)


def test_swapped_parts_without_digests_are_refused_by_their_identity(copy):
    """A part carries its chunk: a swap is found even where no digest is recorded
    (another process's share under jax.distributed)."""
    path, _ = copy
    manifest = json.loads((path / "manifest.json").read_text())
    manifest.pop("parts")
    manifest["status"] = "running"
    (path / "manifest.json").write_text(json.dumps(manifest))
    a, b = _part(path, 0), _part(path, 1)
    data_a = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(data_a)
    with pytest.raises(StoreDamaged, match="holds chunk 1 of group g0.*not chunk 0"):
        _run(path)


# item 11 ---------------------------------------------------- damaged parts
@pytest.mark.parametrize("damage", ["flip", "truncate", "empty", "garbage"])
def test_damaged_part_names_the_file_and_a_rerun_after_deleting_it_recomputes_it(
    copy, damage
):
    path, pulls = copy
    part = _part(path, 2)
    data = bytearray(part.read_bytes())
    if damage == "flip":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "empty":
        data = b""
    else:
        data = b"not a parquet file at all"
    part.write_bytes(bytes(data))
    for _ in range(2):  # every rerun says the same thing, and what to do
        with pytest.raises(StoreDamaged) as err:
            _run(path)
        assert f"store part {part} " in str(err.value)
        assert f"delete {part} and rerun to recompute its chunk" in str(err.value)
        assert "cannot write" not in str(err.value)
    part.unlink()
    report = runner.Report()
    np.testing.assert_array_equal(_run(path, report), pulls)
    assert (report.chunks, report.chunks_skipped) == (1, 3)


@pytest.mark.parametrize(
    "text, match",
    [
        ("{not json", "not JSON"),
        ("", "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        ('{"format": 99, "status": "complete"}', "format 99.*reads formats 1, 2"),
        ('{"format": "2", "status": "running"}', "format '2'"),
        ('{"format": 2, "status": "done"}', "status 'done'"),
        ('{"format": 2, "status": "running", "chunk_sizes": {"g0": 0}}', "chunk_s"),
        ('{"format": 2, "status": "running", "parts": [1]}', "parts"),
    ],
)
def test_a_bad_manifest_is_one_error_naming_it_and_the_way_forward(copy, text, match):
    path, pulls = copy
    (path / "manifest.json").write_text(text)
    with pytest.raises(StoreDamaged, match=match) as err:
        _run(path)
    assert str(path / "manifest.json") in str(err.value)
    assert f"delete the folder {path} and rerun" in str(err.value)
    shutil.rmtree(path)  # the way forward
    np.testing.assert_array_equal(_run(path), pulls)


def test_a_finished_store_is_read_back_without_writing_anything(written, monkeypatch):
    """As on a read-only mount: a finished store is read, nothing is written (the
    sweep_grid read-back wrote cells.parquet.tmp, and finish() the manifest)."""
    path, pulls = written

    def refuse(*args, **kwargs):
        raise OSError(30, "Read-only file system")

    monkeypatch.setattr(store, "write_atomic", refuse)
    before = {p: p.stat().st_mtime_ns for p in path.rglob("*")}
    report = runner.Report()
    np.testing.assert_array_equal(_run(path, report), pulls)
    assert report.chunks == 0 and report.chunks_skipped == REPS // CHUNK
    assert {p: p.stat().st_mtime_ns for p in path.rglob("*")} == before


def test_a_finished_sweep_grid_store_is_read_back_without_writing(
    tmp_path, monkeypatch
):
    bandit = jbandits.envs.BERNOULLI
    inst = [jbandits.envs.bernoulli(np.linspace(0.2, 0.8, 3))[1]]
    args = (
        [("apt", {"threshold": 0.5, "epsilon": [0.0, 0.1]})],
        bandit,
        inst,
        jax.random.key(0),
    )
    kw = dict(budgets=[30], num_reps=4, progress=False, store=str(tmp_path / "g"))
    first = jbandits.sweep_grid(*args, **kw)
    monkeypatch.setattr(
        store, "write_atomic", lambda *a: (_ for _ in ()).throw(OSError(30, "ro"))
    )
    again = jbandits.sweep_grid(*args, **kw)
    np.testing.assert_array_equal(first.values["num_pulls"], again.values["num_pulls"])
    assert not [p for p in (tmp_path / "g").rglob("*") if ".tmp" in p.name]


def test_a_store_written_before_digests_still_resumes_and_is_then_checked(copy):
    """Format 1 (before this change): no identity in the parts, no digests in the
    manifest. It resumes; the parts read are recorded, so a later swap is found."""
    path, pulls = copy
    manifest = json.loads((path / "manifest.json").read_text())
    manifest.pop("parts")
    manifest.update(format=1, status="running")
    (path / "manifest.json").write_text(json.dumps(manifest))
    for chunk in range(REPS // CHUNK):
        table = pq.read_table(_part(path, chunk))
        meta = {b"shapes": table.schema.metadata[b"shapes"]}  # what format 1 wrote
        pq.write_table(table.replace_schema_metadata(meta), _part(path, chunk))
    _part(path, 3).unlink()  # interrupted before its last chunk
    report = runner.Report()
    np.testing.assert_array_equal(_run(path, report), pulls)
    assert (report.chunks, report.chunks_skipped) == (1, 3)
    parts = json.loads((path / "manifest.json").read_text())["parts"]["g0"]
    assert sorted(parts) == ["00000", "00001", "00002", "00003"]
    a, b = _part(path, 0), _part(path, 1)
    data_a = a.read_bytes()
    a.write_bytes(b.read_bytes())
    b.write_bytes(data_a)
    with pytest.raises(StoreDamaged, match="not the part the manifest recorded"):
        _run(path)


@pytest.mark.parametrize(
    "where, error, match",
    [
        ("file", ValueError, "is a file, not a folder"),
        ("", ValueError, "must name a folder, got ''"),
        (3, TypeError, "must be a folder path"),
    ],
)
def test_store_argument_that_is_not_a_folder(tmp_path, where, error, match):
    if where == "file":
        where = tmp_path / "a-file"
        where.write_text("x")
    with pytest.raises(error, match=match):
        _run(where)
    with pytest.raises(error, match=match):
        Store(where)


def test_two_writers_keep_each_others_records(tmp_path):
    a = Store(tmp_path / "s", fingerprint={"w": 1})
    b = Store(tmp_path / "s", fingerprint={"w": 1})
    part = {"x": np.arange(4)}
    a.write("g0", 0, part, (0, 4))
    b.write("g0", 1, part, (4, 8))
    assert set(a.manifest()["parts"]["g0"]) == {"00000", "00001"}
    np.testing.assert_array_equal(a.read("g0", 1, (4, 8))["x"], part["x"])
    with pytest.raises(StoreDamaged, match="not the part the manifest recorded"):
        shutil.copy(a._part("g0", 1), a._part("g0", 0))
        a.read("g0", 0, (0, 4))
    assert not [p for p in (tmp_path / "s").rglob("*") if ".tmp" in p.name]


# item 13 and 7: the command lines ---------------------------------------------
SWEEP = """\
name = "t"
seed = 0
reps = 4
budgets = [40]
metric = { kind = "thresholding", threshold = 0.5 }

[instances]
means = [[0.1, 0.35, 0.6, 0.9]]

[[policies]]
name = "apt"
threshold = 0.5
"""


@pytest.fixture
def no_compile_cache(monkeypatch):
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")


def _sweep(tmp_path, text, capsys):
    from jbandits.cli import main as sweep_cli

    config = tmp_path / "sweep.toml"
    config.write_text(text)
    rc = sweep_cli.main(["sweep", str(config), "--out", str(tmp_path / "out")])
    return rc, capsys.readouterr().err


def test_sweep_reports_a_damaged_part_by_name_not_as_a_write_error(
    tmp_path, capsys, no_compile_cache
):
    assert _sweep(tmp_path, SWEEP, capsys)[0] == 0
    part = tmp_path / "out" / "t" / "g0" / "part-00000.parquet"
    part.write_bytes(part.read_bytes()[:100])  # truncated
    rc, err = _sweep(tmp_path, SWEEP, capsys)
    lines = [line for line in err.splitlines() if line.strip()]
    assert rc == 2 and len(lines) == 1, err
    assert f"delete {part} and rerun" in err and "cannot write" not in err, err
    part.unlink()
    assert _sweep(tmp_path, SWEEP, capsys)[0] == 0  # the way forward


def test_sweep_refuses_a_gaussian_config_without_std(
    tmp_path, capsys, no_compile_cache
):
    text = SWEEP.replace("seed = 0", 'seed = 0\nbandit = "gaussian"')
    rc, err = _sweep(tmp_path, text, capsys)
    assert rc == 2 and "instances.std is required" in err, err
    assert not (tmp_path / "out" / "t").exists()
    with_std = text.replace("[instances]", "[instances]\nstd = 0.5")
    assert _sweep(tmp_path, with_std, capsys)[0] == 0


def test_sweep_ctrl_c_before_the_run_exits_130_with_one_line(tmp_path):
    """SIGINT while the config is being read (a FIFO nobody writes: the process
    blocks in open(), past its imports, before the run's own handler)."""
    import signal
    import subprocess
    import sys
    import time

    fifo = tmp_path / "sweep.toml"
    os.mkfifo(fifo)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root, "JBANDITS_COMPILE_CACHE": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jbandits.cli.main", "sweep", str(fifo)],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    deadline = time.monotonic() + 120
    while _wchan(proc.pid) != "wait_for_partner":  # blocked opening the FIFO
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert [line for line in err.splitlines() if line.strip()] == [
        "jbandits: interrupted"
    ]


def _wchan(pid: int) -> str:
    with open(f"/proc/{pid}/wchan") as f:
        return f.read()


@pytest.fixture
def experiment(monkeypatch, no_compile_cache):
    """``python -m experiments`` with one fake experiment running ``body(cfg)``."""
    import experiments.__main__ as exp_cli
    from experiments import _core

    def register(body):
        def run(cfg):
            body(cfg)
            x = np.arange(2.0)
            curve = {"x": x, "mean": x, "lo": x, "hi": x}
            return _core.Outcome(panels=[{"title": "t", "curves": {"A": curve}}])

        fake = {"fake": _core.Experiment("fake", "Fake", "test", run)}
        monkeypatch.setattr(_core, "EXPERIMENTS", fake)
        monkeypatch.setattr(exp_cli, "_load_all", lambda: None)
        return exp_cli.main

    return register


def test_experiments_refuse_reps_that_cannot_fit_with_the_estimate(
    tmp_path, capsys, experiment, monkeypatch
):
    def body(cfg):
        _run_reps(cfg.reps)

    from jbandits.sim.runner import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 30)  # any machine
    main = experiment(body)
    rc = main(["run", "fake", "--reps", "2000000000", "--out", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 1, err
    assert "need about" in err and "GiB of host memory" in err, err
    assert "2,000,000,000 lanes" in err and "more than the 1 GiB" in err, err
    assert "Traceback" not in err
    assert "MovieLens" not in err  # not a data problem


def _run_reps(reps):
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
    jbandits.simulate(
        jbandits.make("apt", num_arms=K, threshold=0.5),
        bandit,
        params,
        jax.random.key(0),
        budget=BUDGET,
        num_reps=reps,
        progress=False,
    )


def test_the_memory_estimate_is_checked_before_the_first_chunk(monkeypatch):
    from jbandits.sim.runner import memory

    monkeypatch.setattr(memory, "available_bytes", lambda: 10_000)
    report = runner.Report()
    with pytest.raises(memory.HostMemoryError, match="more than the 9.77 KiB"):
        bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, K))
        jbandits.simulate(
            jbandits.make("apt", num_arms=K, threshold=0.5), bandit, params,
            jax.random.key(0), budget=BUDGET, num_reps=REPS, progress=False,
            report=report,
        )  # fmt: skip
    assert report.chunks == 0


def test_experiments_data_that_is_not_ratings_is_one_line(tmp_path, capsys, experiment):
    from jbandits.envs import movielens

    def body(cfg):
        movielens.load_ratings(cfg.extra["data"])

    bad = tmp_path / "hostname"
    bad.write_text("vm\n")
    main = experiment(body)
    rc = main(["run", "fake", "--data", str(bad), "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 1 and "Traceback" not in err, err
    assert f"bad input data (--data {bad}): {bad}:1: expected user" in err, err


def test_resumable_refuses_a_path_that_is_not_a_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # '' was the current folder: stores landed there
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    for path, match in ((a_file, "is a file, not a folder"), ("", "got ''")):
        with pytest.raises(ValueError, match=match), runner.resumable(path):
            pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]
