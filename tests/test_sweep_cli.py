"""``jbandits sweep CONFIG.toml`` (:mod:`jbandits.cli.main`) and the tables of
:class:`jbandits.SweepResult`: labels, CIs, the figure's curves, config checks, exit
codes, Ctrl-C and the compile cache.

One small real sweep (K = 4, two budgets, 4 replications, three programs) checks the
labels and the figure; the config errors are caught before anything compiles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import jax
import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")

from jbandits.analysis import metrics, plotting
from jbandits.analysis.store import Store  # noqa: E402
from jbandits.cli import main as cli  # noqa: E402
from jbandits.sim import SweepResult  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CONFIG = """\
name = "t"
seed = 0
reps = 4
budgets = [40, 80]
metric = { kind = "thresholding", threshold = 0.5 }

[instances]
means = [[0.1, 0.35, 0.6, 0.9]]

[[policies]]
name = "apt"
threshold = 0.5
variant = ["paper", "authors_code"]

[[policies]]
name = "lsa"
threshold = 0.5
alpha = [1, 4]
"""


@pytest.fixture(autouse=True)
def _no_compile_cache(monkeypatch):
    # no persistent compilation cache in tests (test_compile_cache_... checks it)
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")


def write(tmp_path, text: str, name: str = "sweep.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def change(old: str, new: str) -> str:
    assert old in CONFIG
    return CONFIG.replace(old, new, 1)


# items 3, 4 ---------------------------------------------------- labels and curves
def test_string_and_integer_axes_are_labels_columns_and_curves(tmp_path, monkeypatch):
    drawn = []
    draw = plotting.plot_panels
    monkeypatch.setattr(
        plotting, "plot_panels", lambda p, *a, **k: drawn.append(p) or draw(p, *a, **k)
    )
    cfg = cli.load(write(tmp_path, CONFIG))
    res, folder = cli.run_sweep(cfg, str(tmp_path / "out"), progress=False)

    points = {(c["policy"], c.get("variant"), c.get("alpha")) for c in res.cells}
    assert points == {
        ("apt", "paper", None),
        ("apt", "authors_code", None),
        ("lsa", None, 1),
        ("lsa", None, 4),
    }
    labels = [tuple(sorted(c.items())) for c in res.cells]
    assert len(set(labels)) == len(labels) == 8  # no two cells share their labels
    frame = res.to_dataframe()
    assert set(frame["variant"].dropna()) == {"paper", "authors_code"}
    csv = pd.read_csv(os.path.join(folder, "summary.csv"))
    assert set(csv["variant"].dropna()) == {"paper", "authors_code"}
    assert set(csv["alpha"].dropna()) == {1, 4}
    cells = pd.read_parquet(os.path.join(folder, "cells.parquet"))
    assert set(cells["variant"].dropna()) == {"paper", "authors_code"}

    ((panel,),) = drawn
    assert set(panel["curves"]) == {
        "apt threshold=0.5 variant=paper",
        "apt threshold=0.5 variant=authors_code",
        "lsa threshold=0.5 alpha=1",
        "lsa threshold=0.5 alpha=4",
    }
    for label, curve in panel["curves"].items():
        policy, *hps = label.split()
        (name, text) = hps[-1].split("=")
        rows = csv[(csv["policy"] == policy) & (csv[name].astype(str) == text)]
        if name == "alpha":
            rows = csv[(csv["policy"] == policy) & (csv[name] == float(text))]
        # each curve holds its own point's values, one per budget
        np.testing.assert_array_equal(curve["x"], [40, 80])
        np.testing.assert_array_equal(curve["mean"], rows["error"].to_numpy())
        np.testing.assert_array_equal(curve["lo"], rows["error_lo"].to_numpy())


# item 9 ------------------------------------------------------------- rate intervals
def test_summary_gives_rates_a_wilson_interval_and_regret_a_normal_one():
    reps = 200
    error = np.zeros((3, reps, 1), np.float32)
    error[1, 0] = 1.0  # a rate of 0.005
    error[2] = 1.0  # a rate of 1
    regret = np.random.default_rng(0).normal(5.0, 2.0, (3, reps, 1))
    res = SweepResult(
        cells=[{"policy": "p", "K": 4, "instance": 0, "budget": b} for b in (1, 2, 3)],
        values={
            "times": np.full((3, reps, 1), 10, np.int32),
            "metric.error": error,
            "regret": regret.astype(np.float32),
        },
    )
    table = res.summary()
    assert (table["error_lo"] >= 0).all() and (table["error_hi"] <= 1).all()
    assert table["error_lo"][0] == 0.0 and table["error_hi"][0] > 0.01  # not [0, 0]
    assert 0.0 < table["error_lo"][1] < 0.005 < table["error_hi"][1]
    assert table["error_hi"][2] == 1.0 and table["error_lo"][2] < 0.99
    for c in range(3):
        p, lo, hi = metrics.binomial_ci(error[c, :, 0])
        assert (table["error"][c], table["error_lo"][c], table["error_hi"][c]) == (
            pytest.approx(p),
            pytest.approx(lo),
            pytest.approx(hi),
        )
        mean, lo, hi = metrics.mean_ci(regret[c, :, 0].astype(np.float32))
        assert table["regret_lo"][c] == pytest.approx(lo)
        assert table["regret_hi"][c] == pytest.approx(hi)


# items 5, 14, 15 -------------------------------------------- config and CLI errors
BAD = {
    "misspelt top-level key": (
        change("reps = 4", "reps = 4\ncheckpoint = 5"),
        ["'checkpoint'", "did you mean 'checkpoints'"],
    ),
    "misspelt bandit": (
        change("seed = 0", 'seed = 0\nbandits = "gaussian"'),
        ["'bandits'", "did you mean 'bandit'"],
    ),
    "misspelt seed": (change("seed = 0", "sead = 7"), ["'sead'", "'seed'"]),
    "misspelt table key": (
        change("means = [[0.1, 0.35, 0.6, 0.9]]", 'K = [4]\ngenerater = "linear"'),
        ["'generater'", "instances", "'generator'"],
    ),
    "fractional reps": (change("reps = 4", "reps = 20.7"), ["reps", "20.7"]),
    "text reps": (change("reps = 4", 'reps = "twenty"'), ["reps", "'twenty'"]),
    "misspelt hyper-parameter": (
        change('name = "apt"\n', 'name = "apt"\nepsilom = 0.1\n'),
        ["'epsilom'", "apt", "did you mean 'epsilon'"],
    ),
    "scalar budgets": (
        change("budgets = [40, 80]", "budgets = 300"),
        ["budgets", "list", "300"],
    ),
    "metric as text": (
        change('{ kind = "thresholding", threshold = 0.5 }', '"thresholding"'),
        ["metric must be a table", "'thresholding'"],
    ),
    "metric key of another kind": (
        change("thresholding", "identification"),
        ["metric.threshold", "'identification'"],
    ),
    "seed that jax would wrap": (
        change("seed = 0", "seed = 4294967296"),
        ["seed", "4294967296"],
    ),
    "means outside [0, 1]": (
        change("0.9]]", "1.5]]"),
        ["instances (means[0])", "[0, 1]"],
    ),
    "TOML syntax error": (change("reps = 4", "reps = [4"), ["not valid TOML"]),
    "name outside --out": (
        change('name = "t"', 'name = "../../escaped"'),
        ["name must be one folder name", "'../../escaped'"],
    ),
    "absolute name": (change('name = "t"', 'name = "/tmp/x"'), ["'/tmp/x'"]),
    "dot name": (change('name = "t"', 'name = ".."'), ["'..'"]),
    # more of the same classes
    "misspelt metric kind": (
        change('kind = "thresholding"', 'kind = "tresholding"'),
        ["metric.kind", "did you mean 'thresholding'"],
    ),
    "bandit in capitals": (
        change("seed = 0", 'seed = 0\nbandit = "Gaussian"'),
        ["bandit", "did you mean 'gaussian'"],
    ),
    "fractional K": (
        change("means = [[0.1, 0.35, 0.6, 0.9]]", "K = [4.0]"),
        ["instances.K[0]", "4.0"],
    ),
    "K and means": (
        change("means = [[0.1, 0.35, 0.6, 0.9]]", "K = [4]\nmeans = [[0.1, 0.9]]"),
        ["either K", "or means"],
    ),
    "std on a Bernoulli bandit": (
        change("[instances]", "[instances]\nstd = 2.0"),
        ["instances.std", "gaussian"],
    ),
    "empty budgets": (change("budgets = [40, 80]", "budgets = []"), ["budgets"]),
    "bool reps": (change("reps = 4", "reps = true"), ["reps", "True"]),
    "misspelt policy": (
        change('name = "apt"', 'name = "aptt"'),
        ["policies[0].name", "did you mean 'apt'"],
    ),
    "empty grid axis": (change("alpha = [1, 4]", "alpha = []"), ["alpha", "[]"]),
    "num_arms in a policy": (
        change('name = "lsa"', 'name = "lsa"\nnum_arms = 4'),
        ["num_arms", "set by the sweep"],
    ),
    "negative metric epsilon": (
        change("threshold = 0.5 }", "threshold = 0.5, epsilon = -1 }"),
        ["metric", "epsilon", "-1"],
    ),
}


def one_error_line(capsys, rc) -> str:
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jbandits sweep: error: "), err
    return lines[0]


@pytest.mark.parametrize("case", list(BAD))
def test_bad_config_is_one_line_with_exit_2_before_anything_runs(
    tmp_path, capsys, case
):
    text, expected = BAD[case]
    (tmp_path / "a").mkdir()
    out = tmp_path / "a" / "out"  # "../../escaped" would be tmp_path / "escaped"
    rc = cli.main(["sweep", write(tmp_path, text), "--out", str(out)])
    line = one_error_line(capsys, rc)
    for fragment in expected:
        assert fragment in line, (fragment, line)
    assert not out.exists()  # nothing written, in --out or beside it
    assert sorted(os.listdir(tmp_path)) == ["a", "sweep.toml"]
    assert os.listdir(tmp_path / "a") == []


def test_missing_config_and_out_naming_a_file(tmp_path, capsys):
    rc = cli.main(["sweep", str(tmp_path / "nope.toml"), "--out", str(tmp_path)])
    assert "nope.toml" in one_error_line(capsys, rc)
    rc = cli.main(["sweep", str(tmp_path), "--out", str(tmp_path)])
    assert "is a folder" in one_error_line(capsys, rc)
    config = write(tmp_path, CONFIG)
    rc = cli.main(["sweep", config, "--out", config])
    assert "--out" in one_error_line(capsys, rc)
    rc = cli.main(["sweep", config, "--out", os.path.join(config, "below")])
    assert "--out" in one_error_line(capsys, rc)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "t").write_text("")
    rc = cli.main(["sweep", config, "--out", str(tmp_path / "out")])
    assert "is a file" in one_error_line(capsys, rc)


def test_store_of_other_work_names_out(tmp_path, capsys):
    Store(str(tmp_path / "out" / "t"), fingerprint="other work")
    rc = cli.main(["sweep", write(tmp_path, CONFIG), "--out", str(tmp_path / "out")])
    line = one_error_line(capsys, rc)
    assert "--out" in line and "other work" in line
    assert os.listdir(tmp_path / "out" / "t") == ["manifest.json"]


# item 17 ------------------------------------------------------------ compile cache
def test_compile_cache_is_on_by_default(tmp_path, monkeypatch):
    updates = {}
    monkeypatch.setattr(jax.config, "update", lambda k, v: updates.__setitem__(k, v))
    monkeypatch.setattr(cli, "run_sweep", lambda *a, **k: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("JBANDITS_COMPILE_CACHE")
    args = ["sweep", write(tmp_path, CONFIG), "--out", str(tmp_path / "out")]
    assert cli.main(args) == 0
    assert updates == {
        "jax_compilation_cache_dir": str(tmp_path / "xdg" / "jbandits" / "jax"),
        "jax_persistent_cache_min_compile_time_secs": 0,
        "jax_persistent_cache_min_entry_size_bytes": -1,
    }
    updates.clear()
    assert cli.main([*args, "--no-compile-cache"]) == 0
    monkeypatch.setenv("JBANDITS_COMPILE_CACHE", "0")
    assert cli.main(args) == 0
    assert updates == {}


# item 10 ------------------------------------------------------------------ Ctrl-C
def test_ctrl_c_while_compiling_exits_130_with_one_line_and_a_clean_store(tmp_path):
    config = write(tmp_path, change("budgets = [40, 80]", "budgets = [100000]"))
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": ROOT, "JBANDITS_COMPILE_CACHE": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "jbandits.cli.main", "sweep", config, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    manifest = out / "t" / "manifest.json"
    deadline = time.monotonic() + 60
    while not manifest.exists() and proc.poll() is None:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    # the store is open and the first program is being traced and compiled (before
    # the fix, 3 of 7 such interrupts ended in a segfault, the others in a traceback)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert lines[-1].startswith("jbandits sweep: interrupted"), err
    assert "(run the same command again to resume)" in lines[-1]
    assert json.loads(manifest.read_text())["status"] == "running"
    left = [f for _, _, files in os.walk(out) for f in files if ".tmp" in f]
    assert left == []
