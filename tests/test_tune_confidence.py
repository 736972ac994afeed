"""The tuner's confidence statement (paired CIs on fresh common replications) and its
warnings: a flat landscape, an optimum on the box's edge, none for a well-posed one."""

import warnings

import numpy as np
import pytest

import jbandits
from jbandits.tuning import LogSpace, Objective, Report, Search, TuningWarning

BANDIT, PARAMS = jbandits.envs.bernoulli(np.array([0.3, 0.45, 0.55, 0.7]))
# UCB1's regret at T = 200: interior optimum near alpha = 0.85, steep above it
UCB = Objective("ucb1", BANDIT, PARAMS, budget=200)
SMALL = Search(simulations=240, num_reps=20)


def _tune(objective, space, search, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = jbandits.tuning.tune(objective, space, search=search, **kw)
    issued = [str(w.message) for w in caught if w.category is TuningWarning]
    assert issued == list(res.warnings)  # each listed warning is also issued
    return res


def test_a_well_posed_tuning_is_significantly_better_than_a_bad_start():
    search = Search(start={"alpha": 10.0}, simulations=240, num_reps=20)
    res = _tune(UCB, {"alpha": LogSpace(0.01, 10.0)}, search, key=0)
    assert res.warnings == ()
    conf = res.confidence
    assert conf.num_reps == 40 and set(conf.rows) == {"tuned", "start"}
    d = conf.paired["tuned - start"]
    assert d.significant and d.hi < 0 and d.lo <= d.mean <= d.hi and d.se > 0
    assert "tuned - start" in str(res) and "significant" in str(res)
    assert res.simulations <= 240  # the statement is not the search's budget


def test_an_optimum_outside_the_box_warns_about_the_edge():
    res = _tune(UCB, {"alpha": LogSpace(1.0, 10.0)}, SMALL, key=0)
    assert len(res.warnings) == 1 and "lower edge" in res.warnings[0]
    assert "alpha" in res.warnings[0] and "widen the box" in res.warnings[0]
    assert res.confidence.grid_p < 0.05  # the grid is anything but flat
    assert "best evaluated" in res.confidence.rows


def test_a_flat_objective_warns_that_the_landscape_is_flat():
    rng = np.random.default_rng(0)  # pure noise, independent of alpha
    noise = lambda res: rng.normal(size=res.regret.shape[:2])
    flat = Objective("ucb1", BANDIT, PARAMS, budget=200, loss=noise)
    res = _tune(flat, {"alpha": LogSpace(0.01, 10.0)}, SMALL, key=0)
    assert any("flat within noise" in w for w in res.warnings)
    assert res.confidence.grid_p >= 0.05
    assert not any(p.significant for p in res.confidence.paired.values())
    assert "warning: the loss landscape is flat" in str(res)


def test_the_evaluation_serves_the_statement_and_confidence_zero_turns_it_off():
    space = {"alpha": LogSpace(0.01, 10.0)}
    res = _tune(UCB, space, SMALL, report=Report(evaluate=30), key=1)
    assert res.confidence.num_reps == 30
    tuned, start = res.evaluation.rows["tuned"][1], res.evaluation.rows["start"][1]
    d = res.confidence.paired["tuned - start"]
    assert d.mean == pytest.approx(tuned - start)
    assert d.lo == pytest.approx(res.evaluation.paired["tuned - start"][1])
    res = _tune(UCB, space, SMALL, report=Report(confidence=0), key=1)
    assert res.confidence is None and res.warnings == ()
    with pytest.raises(ValueError, match="confidence"):
        Report(confidence=1)
