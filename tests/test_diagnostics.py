"""The policy diagnostics channel (``Policy.diagnostics`` read at checkpoints)."""

import jax
import numpy as np
import pytest

import jbandits


def _eucbv_run(**kw):
    bandit, params = jbandits.envs.bernoulli([0.1, 0.2, 0.3, 0.9])
    pol = jbandits.make("eucbv", num_arms=4, horizon=600)
    return jbandits.simulate(
        pol,
        bandit,
        params,
        jax.random.key(3),
        budget=600,
        num_reps=6,
        num_checkpoints=3,
        progress=False,
        **kw,
    )


def test_diagnostics_are_read_at_checkpoints_in_bandit_numbering():
    res = _eucbv_run(diagnostics=True, return_state=True)
    active = res.diagnostics["active"]
    assert active.shape == (6, 3, 4) and res.diagnostics["round"].shape == (6, 3)
    # the last read-out is the final state's active set, relabelled by perm
    for r in range(6):
        expected = np.zeros(4, bool)
        expected[res.perm[r]] = res.state.active[r]
        np.testing.assert_array_equal(active[r, -1], expected)
    # elimination only removes arms, and the round index never decreases
    assert not np.any(active[:, 1:] & ~active[:, :-1])
    assert np.all(np.diff(res.diagnostics["round"], axis=1) >= 0)
    # the 0.9 arm survives in every replication at this budget, others are dropped
    assert active[:, -1, 3].all() and active[:, -1].sum() < 6 * 4


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_diagnostics_do_not_change_results():
    a, b = _eucbv_run(diagnostics=True), _eucbv_run()
    np.testing.assert_array_equal(a.regret, b.regret)
    np.testing.assert_array_equal(a.pulls, b.pulls)
    assert b.diagnostics is None


def test_diagnostics_without_a_channel_is_a_clear_error():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.8])
    with pytest.raises(ValueError, match="diagnostics channel"):
        jbandits.simulate(
            jbandits.make("ucb1", num_arms=2),
            bandit,
            params,
            jax.random.key(0),
            budget=10,
            num_reps=2,
            diagnostics=True,
            progress=False,
        )


# ------------------------------------------------- Policy.setting picks the metric
def test_setting_chooses_the_default_metric():
    from jbandits.analysis import metrics

    apt = jbandits.make("apt", num_arms=4, threshold=0.4, epsilon=0.05)
    assert metrics.for_policy(apt) == metrics.thresholding(0.4)
    sr = jbandits.make("successive_rejects", num_arms=4, budget=100)
    assert metrics.for_policy(sr) == metrics.identification()
    top = jbandits.make("ugapeb", num_arms=4, budget=100, m=2, epsilon=0.1, a=1.0)
    assert metrics.for_policy(top) == metrics.top_m(2, 0.1)
    assert metrics.for_policy(jbandits.make("ucb1", num_arms=4)) is None
    hand = apt._replace(spec=None)  # no recorded threshold: regret only
    assert metrics.for_policy(hand) is None


def test_simulate_uses_the_settings_metric_by_default():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.45, 0.55, 0.8])
    pol = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
    run = dict(budget=40, num_reps=16, progress=False)
    auto = jbandits.simulate(pol, bandit, params, jax.random.key(0), **run)
    explicit = jbandits.simulate(
        pol,
        bandit,
        params,
        jax.random.key(0),
        metric=jbandits.analysis.metrics.thresholding(0.5),
        **run,
    )
    assert set(auto.metrics) == {"error", "misclassified"}
    np.testing.assert_array_equal(auto.metrics["error"], explicit.metrics["error"])
    bare = jbandits.simulate(pol, bandit, params, jax.random.key(0), metric=None, **run)
    assert bare.metrics == {}
