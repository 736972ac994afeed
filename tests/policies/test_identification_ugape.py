"""UGapEb / UGapEc (spec §6.2-6.5): TV-7, tie rules, stopping, read-outs, validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from harness import arm_stats, play_table

import jbandits
from jbandits.analysis import truth
from jbandits.analysis.oracles import ugapeb_oracle_a
from jbandits.policies.blocks import arms
from jbandits.policies.identification import ugape
from jbandits.policies.identification.ugape import (
    select_arm,
    ugape_width,
    ugapeb,
    ugapec,
    ugapec_exploration,
)

TOL = 5e-7  # TV-7 is printed with 6 decimals


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _stats(means, counts, m2=None):
    return arm_stats(counts, means=means, m2=m2, dtype=jnp.float64)


TV7_MU = [0.9, 0.6, 0.5, 0.2]
TV7_T = [3, 5, 2, 4]


def _tv7(m):
    beta = ugape_width(_stats(TV7_MU, TV7_T), "hoeffding", 1.0, 1.0)
    return beta, select_arm(jnp.asarray(TV7_MU), beta, jnp.ones(4, bool), m)


def test_tv7_widths_and_bounds():
    beta, sel = _tv7(2)
    np.testing.assert_allclose(beta, [0.577350, 0.447214, 0.707107, 0.5], atol=TOL)
    np.testing.assert_allclose(sel.upper, [1.477350, 1.047214, 1.207107, 0.7], atol=TOL)
    np.testing.assert_allclose(
        sel.lower, [0.322650, 0.152786, -0.207107, -0.3], atol=TOL
    )


@pytest.mark.parametrize(
    "m, index, chosen, b_j, u, l, arm",
    [
        (2, [0.724564, 1.054320, 1.254320, 1.507107], [0, 1], 1.054320, 2, 1, 2),
        (1, [0.884457, 1.324564, 1.684457, 1.777350], [0], 0.884457, 2, 0, 2),
    ],
)
def test_tv7_select_arm(m, index, chosen, b_j, u, l, arm):
    _, sel = _tv7(m)
    np.testing.assert_allclose(sel.index, index, atol=TOL)
    assert np.flatnonzero(np.asarray(sel.chosen)).tolist() == chosen
    assert abs(float(sel.index_chosen) - b_j) <= TOL
    assert (int(sel.u), int(sel.l), int(sel.arm)) == (u, l, arm)


def test_tv7_ugapec_width():
    # c = 1/2, delta = 0.1, K = 4, t = 11 (t - 1 = 10 pulls), same T_k
    a_t = ugapec_exploration(10, 4, 0.1, 0.5, 4.0)
    assert abs(float(a_t) - 0.5 * math.log(4 * 4 * 10**3 / 0.1)) <= 1e-12
    beta = ugape_width(_stats(TV7_MU, TV7_T), "hoeffding", a_t, 1.0)
    np.testing.assert_allclose(beta, [1.413207, 1.094666, 1.730818, 1.223873], atol=TOL)


def test_bernstein_width_formula():
    # T = 4, unbiased variance M2 / 3 = 0.25: sqrt(2 a 0.25 / 4) + 7 a b / 9
    stats = _stats([0.5, 0.5], [4, 2], m2=[0.75, 0.5])
    beta = ugape_width(stats, "bernstein", 2.0, 0.5)
    expect = [
        math.sqrt(2 * 2 * 0.25 / 4) + 7 * 2 * 0.5 / 9,
        math.sqrt(2 * 2 * 0.5 / 2) + 7 * 2 * 0.5 / 3,
    ]
    np.testing.assert_allclose(beta, expect, rtol=1e-14)


def test_tie_rules_larger_beta_then_first():
    # U ties outside J: arms 1, 2, 3 all have U = 1.0; arm 3 has the largest beta
    mu = jnp.asarray([0.9, 0.8, 0.6, 0.5])
    beta = jnp.asarray([0.3, 0.2, 0.4, 0.5])
    sel = select_arm(mu, beta, jnp.ones(4, bool), 1)
    assert np.asarray(sel.chosen).tolist() == [True, False, False, False]
    assert int(sel.u) == 3  # U tie -> larger beta
    # equal beta among U-tied arms -> first index
    sel = select_arm(mu, jnp.asarray([0.3, 0.2, 0.4, 0.4]), jnp.ones(4, bool), 1)
    assert int(sel.u) == 2
    # L ties inside J (m = 2): L_0 = L_1 = 0.5, beta_1 larger -> l = 1
    sel = select_arm(
        jnp.asarray([0.8, 0.9, 0.1, 0.0]),
        jnp.asarray([0.3, 0.4, 0.1, 0.1]),
        jnp.ones(4, bool),
        2,
    )
    assert np.flatnonzero(np.asarray(sel.chosen)).tolist() == [0, 1]
    assert int(sel.l) == 1


def test_equal_widths_pull_l_amb19():
    # all widths equal: beta_l == beta_u -> I = l (AMB-19)
    sel = select_arm(
        jnp.asarray([0.7, 0.5, 0.2]), jnp.full(3, 0.25), jnp.ones(3, bool), 1
    )
    assert (int(sel.l), int(sel.u), int(sel.arm)) == (0, 1, 0)


def test_equal_means_give_exactly_equal_indices():
    # m = 1, arms 0 and 1 hold the two largest U with equal means: B_0 == B_1 exactly
    mu = jnp.asarray([0.55, 0.55, 0.1])
    beta = jnp.asarray([0.3, 0.1234567, 0.05])
    sel = select_arm(mu, beta, jnp.ones(3, bool), 1)
    assert float(sel.index[0]) == float(sel.index[1])
    assert np.asarray(sel.chosen).tolist() == [True, False, False]  # ties -> first


def test_select_arm_ignores_padding():
    mu = jnp.asarray([0.2, 5.0, 0.9, 0.5, -3.0])
    beta = jnp.asarray([0.1, 9.0, 0.1, 0.1, 9.0])
    mask = jnp.asarray([True, False, True, True, False])
    sel = select_arm(mu, beta, mask, 2)
    assert np.flatnonzero(np.asarray(sel.chosen)).tolist() == [2, 3]
    assert int(sel.u) == 0 and bool(mask[sel.arm])
    assert np.isinf(np.asarray(sel.index)[~np.asarray(mask)]).all()


# ------------------------------------------------------------------------- engine runs
def _stopping_time(table, m, eps, delta, c, b=1.0):
    """Direct loop of the stopping rule for deterministic rewards (K = 2, m = 1)."""
    k = len(table)
    counts = [1] * k
    mu = [row[0] for row in table]
    t = k + 1
    while True:
        a_t = c * math.log(4 * k * (t - 1) ** 3 / delta)
        beta = [b * math.sqrt(a_t / n) for n in counts]
        # K = 2, m = 1, arm 0 best: J = {0}, B_J = (mu_1 - mu_0) + beta_1 + beta_0
        if (mu[1] - mu[0]) + beta[1] + beta[0] < eps:
            return t - 1
        i = 0 if beta[0] >= beta[1] else 1  # l = 0, u = 1
        counts[i] += 1
        t += 1


@pytest.mark.parametrize("eps", [0.0, 0.5])
def test_ugapec_stops_on_easy_instance(eps):
    table = np.zeros((2, 200))
    table[0] = 1.0
    res = play_table(ugapec(2, m=1, epsilon=eps, delta=0.1), table, 200)
    n_stop = _stopping_time([[1.0], [0.0]], 1, eps, 0.1, 0.5)
    assert bool(res.stopped)
    assert int(res.num_pulls) == n_stop < 200
    assert np.asarray(res.output).tolist() == [True, False]
    arms_ = np.asarray(res.arms)
    assert (arms_[:n_stop] >= 0).all() and (arms_[n_stop:] == -1).all()  # absorbing


def test_ugapec_eps0_identical_arms_never_stops():
    # equal means: B_J = beta_j + beta_k > 0 = eps for ever; horizon reached, not stopped
    table = np.full((3, 60), 0.5)
    res = play_table(ugapec(3, m=1, epsilon=0.0, delta=0.5, b=0.01), table, 60)
    assert not bool(res.stopped)
    assert int(res.num_pulls) == 60
    assert int(np.asarray(res.output).sum()) == 1


def test_ugapec_stopping_time_decreases_with_eps():
    table = np.zeros((3, 400))
    table[0], table[1] = 1.0, 0.7
    times = [
        int(play_table(ugapec(3, m=1, epsilon=e, delta=0.1), table, 400).num_pulls)
        for e in (0.0, 0.3, 1.0)
    ]
    assert times[0] > times[1] > times[2] >= 3


def test_ugapeb_returns_top_m_on_deterministic_ladder():
    table = np.repeat(np.asarray([[0.1], [0.9], [0.5], [0.7], [0.3]]), 50, axis=1)
    for m, best in ((1, [1]), (2, [1, 3]), (3, [1, 2, 3])):
        res = play_table(ugapeb(5, m=m, budget=50, a=0.5), table, 50)
        assert np.flatnonzero(np.asarray(res.output)).tolist() == best
        assert int(res.num_pulls) == 50 and not bool(res.stopped)


def test_ugapeb_output_is_argmin_over_candidate_times():
    # replay the policy by hand: the output is J(t*) with t* the latest minimiser
    rng = np.random.default_rng(3)
    table = (rng.random((4, 30)) < [[0.6], [0.5], [0.4], [0.3]]).astype(float)
    policy = ugapeb(4, m=2, budget=30, a=0.3)
    state = policy.init(jax.random.key(0), jnp.ones(4, bool))
    pulls = np.zeros(4, int)
    best, best_set = math.inf, None
    for t in range(30):
        arm = int(state.arm)
        state = policy.step(state, None, table[arm, pulls[arm]])
        pulls[arm] += 1
        if 4 <= t + 1 < 30:  # SELECT-ARM(t + 2) is a candidate (t + 2 <= n)
            beta = ugape_width(state.stats, "hoeffding", 0.3, 1.0)
            sel = select_arm(arms.mean(state.stats), beta, jnp.ones(4, bool), 2)
            if float(sel.index_chosen) <= best:
                best, best_set = float(sel.index_chosen), np.asarray(sel.chosen)
    np.testing.assert_array_equal(policy.output(state), best_set)


def test_readout_before_first_select_arm_is_empirical_top_m():
    policy = ugapec(4, m=2, confidence="bernstein")
    state = policy.init(jax.random.key(0), jnp.ones(4, bool))
    for reward in (0.2, 0.9, 0.5):  # still in the forced 2K pulls
        state = policy.step(state, None, reward)
    assert np.asarray(policy.output(state)).tolist() == [False, True, True, False]


def test_bernstein_forces_two_pulls_per_arm():
    table = np.tile([0.0, 1.0], (3, 20))
    res = play_table(
        ugapeb(3, m=1, budget=20, a=0.1, confidence="bernstein"), table, 20
    )
    assert np.asarray(res.arms)[:6].tolist() == [0, 1, 2, 0, 1, 2]


# -------------------------------------------------------------------------- oracle a
def test_ugapeb_oracle_a():
    means = [0.9, 0.6, 0.5, 0.2]
    # m = 1: gaps [0.3, 0.3, 0.4, 0.7]; eps = 0.1: max((gap+eps)/2, eps)
    denom = [0.2, 0.2, 0.25, 0.4]
    h = sum(1 / d**2 for d in denom)
    assert abs(truth.h_epsilon(means, 1, 0.1) - h) <= 1e-12 * h
    a = ugapeb_oracle_a(means, 1, 0.1, 100, eta=0.5)
    assert abs(a - 0.5 * 96 / (4 * h)) <= 1e-12 * a
    with pytest.raises(ValueError, match="ugapeb"):
        ugapeb_oracle_a([0.9, 0.5, 0.5, 0.2], 2, 0.0, 100)  # mu_(2) = mu_(3), eps = 0
    with pytest.raises(ValueError, match="budget"):
        ugapeb_oracle_a(means, 1, 0.1, 4)


# ------------------------------------------------------------------------- validation
@pytest.mark.parametrize(
    "factory, kwargs, name",
    [
        (ugapeb, dict(m=0, budget=20, a=1.0), "m"),
        (ugapeb, dict(m=4, budget=20, a=1.0), "m"),
        (ugapeb, dict(m=1.5, budget=20, a=1.0), "m"),
        (ugapeb, dict(m=1, budget=20, a=0.0), "a"),
        (ugapeb, dict(m=1, budget=20, a=1.0, b=-1.0), "b"),
        (ugapeb, dict(m=1, budget=20, a=1.0, epsilon=-0.1), "epsilon"),
        (ugapeb, dict(m=1, budget=20.5, a=1.0), "budget"),
        (ugapeb, dict(m=1, budget=20, a=1.0, confidence="kl"), "confidence"),
        (ugapec, dict(m=1, delta=0.0), "delta"),
        (ugapec, dict(m=1, delta=1.0), "delta"),
        (ugapec, dict(m=1, delta=1.5), "delta"),
        (ugapec, dict(m=1, delta=float("nan")), "delta"),
        (ugapec, dict(m=1, epsilon=-1.0), "epsilon"),
        (ugapec, dict(m=1, c=0.0), "c"),
        (ugapec, dict(m=1, c0=-4.0), "c0"),
        (ugapec, dict(m=4), "m"),
        (ugapec, dict(m=1, confidence="hoefding"), "confidence"),
    ],
)
def test_invalid_arguments(factory, kwargs, name):
    # the factory's own message, or the registry's for a static argument
    with pytest.raises(ValueError, match=rf"^(ugape[bc]: )?{name} "):
        factory(4, **kwargs)


def test_m_must_be_below_real_arms_and_budget_above_init():
    mask = jnp.asarray([True, False, True, False])
    with pytest.raises(ValueError, match="^m "):
        ugapec(4, m=2).init(jax.random.key(0), mask)
    with pytest.raises(ValueError, match="^budget "):
        ugapeb(4, m=1, budget=2, a=1.0).init(jax.random.key(0), mask)
    with pytest.raises(ValueError, match="^budget "):
        ugapeb(4, m=1, budget=4, a=1.0, confidence="bernstein").init(
            jax.random.key(0), mask
        )
    ugapeb(4, m=1, budget=5, a=1.0, confidence="bernstein").init(
        jax.random.key(0), mask
    )


def test_traced_eps_and_delta_compile_once():
    table = np.zeros((3, 80))
    table[0], table[1] = 1.0, 0.6
    bandit, params = jbandits.envs.replay(table)
    traces = []

    def stop_time(eps, delta):
        traces.append(1)
        pol = ugapec(3, m=1, epsilon=eps, delta=delta)
        return jbandits.run(
            pol, bandit, params, jax.random.key(0), budget=80, horizon=80
        ).num_pulls

    fn = jax.jit(jax.vmap(stop_time))
    out = fn(jnp.asarray([0.0, 0.5, 1.5]), jnp.asarray([0.1, 0.1, 0.1]))
    fn(jnp.asarray([0.2, 0.4, 0.6]), jnp.asarray([0.2, 0.3, 0.4]))
    assert len(traces) == 1
    assert out[0] >= out[1] >= out[2]
    assert ugape.CONFIDENCES == ("hoeffding", "bernstein")
