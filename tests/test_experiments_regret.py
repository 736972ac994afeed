"""Smoke tests of the S002 (EUCBV) regret experiments: tiny runs through ``execute``."""

import json
import os
import types
import warnings

import jax
import numpy as np
import pytest
from harness import slow_where

import jbandits
from experiments import (
    _core,
    eucbv,  # noqa: F401  (registers the experiments)
)
from experiments import _regret as R
from jbandits.envs import problems

VERDICTS = {"reproduced", "partly", "not reproduced", "undecided", "not testable"}
REPS = 4
TINY = {  # experiment -> extra config: a few algorithms, tiny horizons
    1: {"algorithms": ["EUCBV", "EUCBV (pulls)", "TS"], "horizon": 400},
    2: {"algorithms": ["EUCBV", "ME", "KL-UCB-Gauss"], "horizon": 300},
    3: {"algorithms": ["EUCBV", "TS"], "arms": (20, 30), "horizon_scale": 0.01},
    4: {"algorithms": ["EUCBV (pulls)", "MOSS"], "horizon": 300},
}


@pytest.fixture(scope="module")
def fast_compile():
    """Tiny runs are dominated by XLA compilation; optimise less while they run."""
    old = jax.config.read("jax_disable_most_optimizations")
    jax.config.update("jax_disable_most_optimizations", True)
    yield
    jax.config.update("jax_disable_most_optimizations", old)


def _claim_rows(table_md: str) -> list[list[str]]:
    section = table_md.split("## Claims", 1)[1].split("## Final values", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[c.strip() for c in r.strip("|").split(" | ")] for r in rows[1:]]


# Expt 3 (padded K) in the default suite; Expt 1, 2, 4 in the slow set
@pytest.mark.parametrize(
    "number",
    slow_where(range(1, 5), {1, 2, 4}),
)
def test_quick_experiment_writes_files_and_verdicts(number, tmp_path, fast_compile):
    extra = dict(TINY[number])
    if number != 3:
        extra["checkpoints"] = 4
    cfg = _core.Config(
        name=f"eucbv-expt{number}", quick=True, reps=REPS, out=tmp_path, extra=extra
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EUCBV warns that T < K^2.4 at these sizes
        out = _core.execute(cfg)
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
    regrets = [k for k in arrays.files if k.endswith("/regret")]
    assert len(regrets) == len(extra["algorithms"]) * (2 if number == 3 else 1)
    for k in regrets:
        assert arrays[k].shape[0] == REPS, k
        assert np.all(np.isfinite(arrays[k])) and np.all(arrays[k] >= 0), k
    eliminated = [k for k in arrays.files if k.endswith("/optimal_active")]
    assert eliminated, "EUCBV's elimination diagnostic missing"


def test_problems_match_the_paper():
    p1 = problems.eucbv_experiment(1)
    assert p1.means.size == 20 and p1.stds is None and p1.horizon == 60_000
    assert p1.means[p1.best_arm] == 0.1 and np.sum(p1.means == 0.07) == 19
    p2 = problems.eucbv_experiment(2)
    assert p2.best_arm == 99 and p2.horizon == 300_000
    np.testing.assert_allclose(p2.stds**2, np.r_[[0.7] * 33, [0.1] * 66, 0.7])
    np.testing.assert_allclose(p2.means[[0, 32, 33, 98, 99]], [0.7, 0.7, 0.8, 0.8, 0.9])
    p4 = problems.eucbv_experiment(4)
    np.testing.assert_allclose(p4.stds**2, np.r_[[0.2] * 33, [0.1] * 66, 0.4])
    np.testing.assert_allclose(p4.means[[32, 33, 99]], [0.4, 0.6, 0.9])
    for k in problems.EUCBV_EXPT3_ARMS:
        p3 = problems.eucbv_experiment(3, k)
        assert p3.horizon == 100_000 + k**3 and p3.means.size == k
        assert np.argmax(p3.means) == p3.best_arm
        np.testing.assert_allclose(p3.stds[p3.best_arm] ** 2, 0.7)
        np.testing.assert_allclose(np.delete(p3.stds, p3.best_arm) ** 2, 0.25)
    with pytest.raises(ValueError, match="num_arms"):
        problems.eucbv_experiment(3, 25)
    with pytest.raises(ValueError, match="number"):
        problems.eucbv_experiment(5)


def test_expt3_padding_keeps_reward_stacks(fast_compile):
    """The padded K_max run of one K equals the unpadded run (same keys, first ties)."""
    p = problems.eucbv_experiment(3, 20)
    algo = _core.Algo("MOSS", "moss", {"anytime": True, "tie_break": "first"})
    bandit, params = p.bandit()
    key = jax.random.fold_in(jax.random.key(0), 20)
    budget = 150
    direct = jbandits.simulate(
        R.make_policy(algo, 20, budget),
        bandit,
        params,
        key,
        budget=budget,
        num_reps=3,
        permute=False,
    )
    padded = jbandits.envs.stack_instances([jbandits.envs.pad_arms(params, 100)])
    # longer horizon: steps past T are no-ops
    res = R.run_padded(algo, bandit, padded, key[None], [budget], 200, 3)
    np.testing.assert_array_equal(
        np.asarray(res.regret[0, :, -1]), direct.regret[:, -1]
    )
    np.testing.assert_array_equal(np.asarray(res.pulls[0, :, :20]), direct.pulls)
    assert int(np.asarray(res.pulls[0, :, 20:]).sum()) == 0


def test_expt3_padded_runs_are_stored_when_resumable(tmp_path, fast_compile):
    """run_padded names the registered policy (the run's T as its traced horizon), so
    resumable() stores its runs (it warned "<lambda> is not stored") and reads them."""
    from jbandits.sim import runner

    p = problems.eucbv_experiment(3, 20)
    algo = _core.Algo(
        "OCUCB", "ocucb", {"horizon": R.RUN_T}, {"alpha": 2.0, "psi": 2.0}
    )
    bandit, params = p.bandit()
    padded = jbandits.envs.stack_instances([jbandits.envs.pad_arms(params, 100)])
    key = jax.random.fold_in(jax.random.key(0), 20)[None]
    plain = R.run_padded(algo, bandit, padded, key, [150], 200, 3)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*not stored")
        with runner.resumable(str(tmp_path)):
            first = R.run_padded(algo, bandit, padded, key, [150], 200, 3)
        assert [q for q in tmp_path.iterdir() if q.is_dir()]
        with runner.resumable(str(tmp_path)):
            again = R.run_padded(algo, bandit, padded, key, [150], 200, 3)
    for res in (first, again):
        np.testing.assert_array_equal(np.asarray(res.regret), np.asarray(plain.regret))


def test_elimination_reads_the_active_set():
    """EUCBV's diagnostic: the optimal arm's survival and the count of active arms."""
    active = np.array([[True, True, False, False], [False, False, True, False]])
    res = types.SimpleNamespace(diagnostics={"active": active})
    out = R.elimination(res, best_arm=2)
    np.testing.assert_array_equal(out["optimal_active"], [False, True])
    np.testing.assert_array_equal(out["num_active"], [2, 1])
    assert out["num_active"].dtype == np.int32
