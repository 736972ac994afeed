"""Simple regret as a tuning loss (issue 53, item 1): ``Objective(loss="simple_regret")``
where the setting's metric has one (identification, top-m), refused where it has not,
and the benchmark's statistical verdict."""

import jax
import numpy as np
import pytest

from benchmarks.tuning_tasks import heldout_tasks, hits, second_loss, tasks
from jbandits import envs
from jbandits.analysis import metrics
from jbandits.tuning import LogSpace, Objective, Report, Search, tune

MEANS = np.array([0.7, 0.5, 0.4, 0.3])
BANDIT, PARAMS = envs.bernoulli(MEANS)
GAPS = MEANS.max() - MEANS


def _objective(loss, metric=None, policy="ucb_e"):
    return Objective(
        policy, BANDIT, PARAMS, budget=24, loss=loss, metric=metric or
        metrics.identification(),
    )  # fmt: skip


def test_simple_regret_is_the_gap_of_the_recommended_arm_and_zero_with_the_error():
    theta = {"a": np.array([0.5, 5.0])}
    key = jax.random.key(3)
    sr = _objective("simple_regret").losses(theta, key, 64, chunk=128)
    err = _objective("error").losses(theta, key, 64, chunk=128)
    assert sr.shape == err.shape == (2, 64)
    # every replication's loss is the gap of some arm, and 0 exactly when no error
    assert np.all(np.min(np.abs(sr[..., None] - GAPS), -1) < 1e-6)
    np.testing.assert_array_equal(sr > 0, err > 0)
    assert 0 < sr.mean() < GAPS.max() and (err > 0).any() and (err == 0).any()


def test_tune_minimises_simple_regret_and_top_m_offers_it():
    obj = _objective("simple_regret")
    res = tune(
        obj, {"a": LogSpace(0.1, 100.0)}, key=0, report=Report(confidence=0),
        search=Search(num_reps=8, simulations=120),
    )  # fmt: skip
    assert 0.1 <= res.theta["a"] <= 100.0 and np.all(np.isfinite(res.init[1]))
    assert res.simulations <= 120
    top = Objective(
        "ugapeb", BANDIT, PARAMS, budget=24, loss="simple_regret",
        metric=metrics.top_m(1), fixed={"m": 1},
    )  # fmt: skip
    per = top.losses({"a": np.array([1.0])}, jax.random.key(0), 16, chunk=16)
    assert np.all(np.min(np.abs(per[..., None] - GAPS), -1) < 1e-6)


def test_simple_regret_is_refused_where_the_metric_has_none():
    with pytest.raises(ValueError, match="not an output of the metric.*misclassified"):
        Objective(
            "lsa", BANDIT, PARAMS, budget=24, loss="simple_regret",
            metric=metrics.thresholding(0.5), fixed={"threshold": 0.5},
        )  # fmt: skip
    with pytest.raises(ValueError, match="pass metric"):
        Objective("ucb_e", BANDIT, PARAMS, budget=24, loss="simple_regret")


def test_the_verdict_counts_runs_within_two_paired_se_of_the_tolerance():
    ratios = [1.00, 1.03, 1.03, 1.10]
    ses = [0.0, 0.006, 0.004, 0.01]  # 1.03 - 0.012 <= 1.02; 1.03 - 0.008 > 1.02
    assert hits(ratios, ses) == 2
    assert hits(ratios, [0.0] * 4) == 1
    assert hits(ratios, ses, tol=1.1) == 4


def test_identification_tasks_are_also_scored_under_their_other_loss():
    for t in tasks() + heldout_tasks():
        other = second_loss(t)
        if t.setting != "identification":
            assert other is None
        else:
            assert {t.loss, other} == {"error", "simple_regret"}
            t.objective(0.3)  # its metric offers both
            Objective(
                t.policy, envs.BERNOULLI if callable(t.instance) else BANDIT,
                t.instance if callable(t.instance) else PARAMS, budget=24,
                loss=other, metric=t.metric, fixed=t.fixed,
            )  # fmt: skip
