"""Smoke test of the S000 (AugUCB) experiments: tiny runs through ``_core.execute``."""

import json
import os

import jax
import numpy as np
import pytest

from experiments import (
    _core,
    augucb_ablation,  # noqa: F401  (registers augucb-ablation)
)
from experiments import _tbp as S
from experiments import augucb as ex

NAMES = [f"augucb-expt{n}" for n in range(1, 7)] + ["augucb-ablation"]
VERDICTS = {"reproduced", "partly", "not reproduced", "undecided", "not testable"}
REPS = 8


def _claim_rows(table_md: str) -> list[list[str]]:
    section = table_md.split("## Claims", 1)[1].split("## Final values", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in r.strip("|").split(" | ")] for r in rows[1:]]


# all in the slow set (expt1: 40-47 s on a 2-core machine); the default suite runs
# _core.execute through the regret and identification experiments' smoke tests
@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_quick_experiment_writes_files_and_verdicts(name, tmp_path):
    out = _core.execute(_core.Config(name=name, quick=True, reps=REPS, out=tmp_path))
    for f in ("results.npz", "meta.json", "figure.png", "table.md"):
        assert os.path.getsize(os.path.join(out, f)) > 0, f
    with open(os.path.join(out, "meta.json")) as fh:
        assert json.load(fh)["config"]["reps"] == REPS
    with open(os.path.join(out, "table.md")) as fh:
        rows = _claim_rows(fh.read())
    assert rows, "no claims"
    for row in rows:
        assert row[2] in VERDICTS, row
    arrays = np.load(os.path.join(out, "results.npz"))
    errors = [k for k in arrays.files if k.endswith("/error")]
    assert errors
    for k in errors:
        assert arrays[k].shape == (REPS, S.NUM_CHECKPOINTS), k


def test_common_random_numbers():
    """Expt 6 reuses Expt 5's instance and keys: AugUCB's runs are identical."""
    algo = [S.algo("AugUCB", "augucb")]
    runs = {}
    for n in (5, 6):
        p = ex.problems.augucb_experiment(n, "paper")
        runs[n] = S.run_algorithms(p, algo, S.experiment_key(0, n), REPS)["AugUCB"]
    np.testing.assert_array_equal(runs[5][0], runs[6][0])
    np.testing.assert_array_equal(runs[5][1], REPS * [S.BUDGET])
    k1, k5 = S.experiment_key(0, 1), S.experiment_key(0, 5)
    assert not np.array_equal(jax.random.key_data(k1), jax.random.key_data(k5))


def test_expt6_algorithms_and_parameters():
    p = ex.problems.augucb_experiment(6, "paper")
    _, listed = ex.problems.augucb_listed_values(6)
    algos = {a.label: a for a in ex.algorithms(6, "paper", p, listed)}
    assert set(algos) == {"UCBEV(0.25)", "UCBEV(1)", "UCBEV(256)", "AugUCB"}
    a1 = algos["UCBEV(1)"].hp["a"]
    # a_i = 4^i (T - 2K) / H: the ratios are exact powers of 4
    np.testing.assert_allclose(algos["UCBEV(0.25)"].hp["a"] / a1, 0.25, rtol=1e-12)
    np.testing.assert_allclose(algos["UCBEV(256)"].hp["a"] / a1, 256.0, rtol=1e-12)
    five = {a.label for a in ex.algorithms(5, "authors_code", p, listed)}
    assert five == {"AugUCB", "APT", "UCBE", "UCBEV", "CSAR", "UA"}


def _curves(final: dict, half: dict, reps: int = 200) -> dict:
    """Synthetic 0/1 error curves: error rate ``half[k]`` up to T/2, then ``final[k]``."""
    rng = np.random.default_rng(0)
    u = rng.uniform(size=(reps, 1))  # common uniforms: paired, monotone in the rate
    c = S.NUM_CHECKPOINTS
    rate = np.array([[half[k]] * (c // 2) + [final[k]] * (c - c // 2) for k in final])
    return {k: (u < rate[i][None, :]) for i, k in enumerate(final)}


def test_claim_rules_on_synthetic_curves():
    names = ("AugUCB", "APT", "UCBE", "UCBEV", "CSAR", "UA")
    final = dict(zip(names, (0.1, 0.4, 0.4, 0.05, 0.5, 0.6), strict=True))
    half = dict(zip(names, (0.9, 0.95, 0.95, 0.6, 0.5, 1.0), strict=True))
    err = _curves(final, half)
    pulls = {k: np.full(200, 10_000) for k in names}
    assert ex.claim_csar(err, pulls, "m").verdict == "reproduced"
    assert ex.claim_lowest(err, "UCBEV", "t", "m").verdict == "reproduced"
    assert ex.claim_lowest(err, "UA", "t", "m").verdict == "not reproduced"
    assert ex.claim_beats(err, "AugUCB", ex.NON_VARIANCE, "t", "m").verdict == (
        "reproduced"
    )
    assert ex.claim_beats(err, "UA", ex.NON_VARIANCE[:3], "t", "m").verdict == (
        "not reproduced"
    )
    assert ex.claim_not_worse(err, "UCBEV", "AugUCB", "t", "m").verdict == "reproduced"
    assert ex.claim_not_worse(err, "AugUCB", "UCBEV", "t", "m").verdict == (
        "not reproduced"
    )
    # |0.1 - 0.05| = 5 points: the CI of the difference straddles the +-5 band edge
    assert ex.claim_comparable(err, "AugUCB", "UCBEV", "t", "m").verdict == (
        "undecided"
    )
    assert ex.claim_comparable(err, "APT", "UCBE", "t", "m").verdict == "reproduced"
    # gap AugUCB - UCBEV: 30 points at T/2, 5 at T; UA - UCBEV: 40, then 55
    assert ex.claim_catches_up(err, "AugUCB", "UCBEV", "t", "m").verdict == (
        "reproduced"
    )
    assert ex.claim_catches_up(err, "UA", "UCBEV", "t", "m").verdict == (
        "not reproduced"
    )
    assert ex.claim_catches_up(err, "UCBEV", "AugUCB", "t", "m").verdict == (
        "not reproduced"
    )
    # APT and UCBE are level at T/2: nothing to catch up
    assert ex.claim_catches_up(err, "APT", "UCBE", "t", "m").verdict == (
        "not reproduced"
    )
