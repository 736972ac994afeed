"""``jbandits sweep CONFIG.toml`` (:mod:`jbandits.cli`) and the tables of
:class:`jbandits.SweepResult`: labels, CIs, the figure's curves, config checks, exit
codes, Ctrl-C and the compile cache.

One small real sweep (K = 4, two budgets, 4 replications, three programs) checks the
labels and the figure; the config errors are caught before anything compiles."""

from __future__ import annotations

import os

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")

from jbandits import metrics  # noqa: E402
from jbandits.sweeps import SweepResult  # noqa: E402

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
