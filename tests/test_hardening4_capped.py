"""Issue 65 (hardening, round 4), classes 4 and 8: capped fixed-confidence runs are
counted in every result and warned about; unclear errors made clear (a step that
returns a plain tuple, ``summarize_stopping``'s ``best_arm``, ``python -m jbandits``).

Small K, budgets and reps.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.analysis.fixed_confidence import summarize_stopping
from jbandits.envs import bernoulli

KEY = jax.random.key(0)
BANDIT, PARAMS = bernoulli([0.4, 0.5, 0.6])
HARD = jbandits.make("lil_ucb", num_arms=3, delta=0.1)  # theory constants: slow
EASY_BANDIT, EASY = bernoulli([0.05, 0.95])


# ----------------------------------------------------------- class 4: capped runs
def test_simulate_counts_and_warns_when_runs_are_capped():
    with pytest.warns(UserWarning, match=r"8 of 8 runs of lil_ucb") as rec:
        res = jbandits.simulate(HARD, BANDIT, PARAMS, KEY, budget=30, num_reps=8)
    text = str(rec[0].message)
    assert "\n" not in text and "raise the budget" in text
    assert res.num_capped == 8 and res.num_stopped == 0


def test_no_warning_when_every_run_stops_or_for_a_regret_policy():
    policy = jbandits.make("uniform_glr", num_arms=2, delta=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = jbandits.simulate(policy, EASY_BANDIT, EASY, KEY, budget=2000, num_reps=4)
        assert res.num_stopped == 4 and res.num_capped == 0
        ucb = jbandits.make("ucb1", num_arms=3)
        res = jbandits.simulate(ucb, BANDIT, PARAMS, KEY, budget=30, num_reps=4)
    assert res.num_capped == 4  # counted (a regret policy never stops), not warned


def test_sweep_warns_too():
    with pytest.warns(UserWarning, match=r"4 of 4 runs of lil_ucb"):
        jbandits.sweep("lil_ucb", BANDIT, PARAMS, KEY, grid={"delta": [0.1, 0.2]},
                       num_reps=2, horizon=30, budget=30)  # fmt: skip


def test_sweep_grid_summary_has_the_stopping_columns():
    pols = [("lil_ucb", {"delta": 0.1}), ("uniform_glr", {"delta": 0.1})]
    with pytest.warns(UserWarning, match=r"runs of lil_ucb") as rec:
        res = jbandits.sweep_grid(pols, EASY_BANDIT, [EASY], KEY, budgets=[20, 2000],
                                  num_reps=4, progress=False)  # fmt: skip
    assert len(rec) == 1 and "uniform_glr" not in str(rec[0].message)
    table = res.summary()
    for col in ("stopped", "capped", "num_pulls", "num_pulls_lo", "num_pulls_hi"):
        assert col in table, col
    lil = table[(table.policy == "lil_ucb") & (table.budget == 20)]
    assert lil.capped.tolist() == [4] and lil.stopped.tolist() == [0]
    assert lil.num_pulls.tolist() == [20.0]  # at the cap
    glr = table[table.policy == "uniform_glr"].sort_values("budget")
    assert glr.capped.sum() + glr.stopped.sum() == 8
    big = glr[glr.budget == 2000]
    assert big.stopped.tolist() == [4] and float(big.num_pulls.iloc[0]) < 2000
    frame = res.to_dataframe()
    assert {"num_pulls", "stopped"} <= set(frame)
    assert res.num_capped == int(table.capped.sum())


# ---------------------------------------------------------- class 8: clear errors
class _S(NamedTuple):
    counts: jax.Array
    arm: jax.Array


def _init(key, arm_mask):
    del key
    return _S(jnp.zeros(arm_mask.shape[-1]), jnp.zeros((), jnp.int32))


def _tuple_step(state, key, reward):
    del key, reward
    return (state.counts, state.arm)


@pytest.mark.parametrize("entry", ["simulate", "run"])
def test_a_step_returning_a_plain_tuple_names_the_state_type(entry):
    policy = jbandits.Policy(_init, _tuple_step, lambda s: s.arm, "regret")
    with pytest.raises(ValueError, match=r"returns a tuple.*_S") as err:
        if entry == "simulate":
            jbandits.simulate(policy, BANDIT, PARAMS, KEY, budget=9, num_reps=2)
        else:
            jbandits.run(policy, BANDIT, PARAMS, KEY, budget=9, horizon=9)
    assert "\n" not in str(err.value)


def test_an_init_returning_a_plain_tuple_is_named():
    def init(key, arm_mask):
        del key
        return (jnp.zeros(arm_mask.shape[-1]), jnp.zeros((), jnp.int32))

    policy = jbandits.Policy(init, lambda s, k, r: s, lambda s: s[1], "regret")
    with pytest.raises(ValueError, match=r"init returns a tuple") as err:
        jbandits.simulate(policy, BANDIT, PARAMS, KEY, budget=9, num_reps=2)
    assert "\n" not in str(err.value)


def test_summarize_stopping_best_arm_errors():
    pulls, rec, done = np.array([5, 6, 7]), np.array([0, 1, 0]), np.ones(3, bool)
    with pytest.raises(ValueError, match="best_arm has 2 runs, num_pulls has 3"):
        summarize_stopping(pulls, rec, [0, 1], done, delta=0.1)
    for bad in (-1, [0, -1, 0]):
        with pytest.raises(ValueError, match="best_arm must be an arm"):
            summarize_stopping(pulls, rec, bad, done, delta=0.1)
    with pytest.raises(ValueError, match="best_arm"):
        summarize_stopping(pulls, rec, np.zeros((3, 1), int), done, delta=0.1)
    assert summarize_stopping(pulls, rec, 0, done, delta=0.1).errors == 1


def _python(*args, timeout=120):
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "JBANDITS_PROGRESS": "0"}
    return subprocess.run(
        [sys.executable, "-m", *args], capture_output=True, text=True, env=env,
        timeout=timeout,
    )  # fmt: skip


def test_python_dash_m_jbandits_runs_the_command():
    out = _python("jbandits", "--help")
    assert out.returncode == 0, out.stderr
    assert "sweep" in out.stdout


def test_python_dash_m_launch_runs_the_command(tmp_path):
    out = _python("jbandits.cli.launch", "sweep", str(tmp_path / "missing.toml"))
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "missing.toml" in out.stderr
