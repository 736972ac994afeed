"""EUCBV unit tests: spec §2.1 schedule oracles, §8 items 1, 6, 7, 8, validation."""

from __future__ import annotations

import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import find_case, reference_traces, rollout

import jbandits
from jbandits.policies.blocks.schedules import num_rounds as round_cap
from jbandits.policies.regret import eucbv, eucbv_schedule
from jbandits.policies.regret.eucbv import eliminated_optimal

# spec §2.1 "Schedule oracles": (T, K, M, n_m for m = 0..M+1, (L_0, L_{M+1}))
ORACLES = [
    (60_000, 20, 7, [9, 15, 27, 48, 84, 146, 247, 404, 631], (16.013, 10.468)),
    (300_000, 100, 8, [9, 15, 27, 48, 84, 146, 247, 404, 631, 906], (16.013, 9.774)),
    (108_000, 20, 7, [9, 16, 29, 53, 94, 165, 284, 479, 781], (17.188, 11.643)),
    (
        1_100_000,
        100,
        9,
        [10, 18, 32, 58, 105, 187, 330, 571, 963, 1571, 2432],
        (18.611, 11.680),
    ),
]
EXPT1_L = [16.013, 15.320, 14.626, 13.933, 13.240, 12.547, 11.854, 11.161, 10.468]


def _quiet(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return eucbv(**kw)


@pytest.mark.parametrize("x64", [False, True])
@pytest.mark.parametrize("horizon, k, cap, n_sched, logs", ORACLES)
def test_schedule_oracles(x64, horizon, k, cap, n_sched, logs):
    with jax.enable_x64(x64):
        n, log_m = eucbv_schedule(horizon, horizon / k**2)
        assert round_cap(horizon) == cap
        assert n.shape == (cap + 2,)
        np.testing.assert_array_equal(np.asarray(n), n_sched)
        np.testing.assert_allclose(np.asarray(log_m)[[0, -1]], logs, atol=1e-3)


def test_schedule_expt1_logs_and_nominal_round_ends():
    n, log_m = eucbv_schedule(60_000, 150.0)
    np.testing.assert_allclose(np.asarray(log_m), EXPT1_L, atol=1e-3)
    # N_0 = K n_0, N_{m+1} = N_m + K n_{m+1} without elimination (spec §2.1)
    ends = np.cumsum(20 * np.asarray(n, np.int64))
    assert ends.tolist() == [180, 480, 1020, 1980, 3660, 6580, 11520, 19600, 32220]


def test_schedule_guards_bind_for_tiny_psi():
    # psi T = 2: L_0 = ln 2, L_1 = ln 1 = 0, L_2 < 0 -> 0; n_m = max(ceil(.), 1)
    n, log_m = eucbv_schedule(100, 0.02)
    assert round_cap(100) == 2
    np.testing.assert_array_equal(np.asarray(n), [1, 1, 1, 1])
    np.testing.assert_allclose(np.asarray(log_m), [math.log(2), 0, 0, 0], atol=1e-7)


def test_round_cap_small_horizons():
    assert [round_cap(t) for t in (1, 2, 3, 10, 11, 43, 44)] == [0, 0, 0, 0, 1, 1, 2]


def test_first_decision_hand_check():
    """Spec §8 item 7: K = 2, rewards 1 and 0 -> equal widths, arm 0 is chosen."""
    for rewards, expected in (((1.0, 0.0), 0), ((0.0, 1.0), 1)):
        policy = _quiet(num_arms=2, horizon=1000)
        state = policy.init(jax.random.key(0), jnp.ones(2, bool))
        arms = [int(state.arm)]
        for r in rewards:
            state = policy.step(state, jax.random.key(1), r)
            arms.append(int(state.arm))
        assert arms == [0, 1, expected]
        assert int(state.m) == 0 and bool(state.active.all())


def test_forced_pulls_in_index_order_with_padding():
    mask = np.array([False, True, True, False, True, True])
    table = np.zeros((6, 40))
    arms, _, _ = rollout(_quiet(num_arms=6, horizon=1000), table, 30, mask)
    assert arms[:4].tolist() == [1, 2, 4, 5]
    assert set(arms.tolist()) <= {1, 2, 4, 5}


def _bernoulli_table(rng, means, columns):
    return (rng.random((len(means), columns)) < np.asarray(means)[:, None]).astype(
        float
    )


@pytest.mark.parametrize("elim_count", ["round", "pulls"])
def test_invariants_over_a_scan(elim_count):
    """Spec §8 item 6: active never empties and only shrinks, m non-decreasing and
    <= M + 1, N strictly increases at resets, eliminated arms are never pulled."""
    rng = np.random.default_rng(3)
    horizon = 400
    mask = np.array([True, True, False, True, True, True])
    means = [0.1, 0.9, 0.5, 0.6, 0.2, 0.85]
    policy = _quiet(
        num_arms=6, horizon=horizon, psi=0.05, rho=0.3, elim_count=elim_count
    )
    arms, states, final = rollout(
        policy, _bernoulli_table(rng, means, horizon), horizon, mask
    )
    active = np.asarray(states.active)
    m = np.asarray(states.m)
    ends = np.asarray(states.round_end)
    assert (active.sum(1) >= 1).all()
    assert not active[:, ~mask].any()
    assert (active[1:] <= active[:-1]).all()  # only loses arms
    assert (np.diff(m) >= 0).all() and m.max() <= round_cap(horizon) + 1
    resets = np.flatnonzero(np.diff(m) > 0) + 1
    assert len(resets) >= 2
    assert (ends[resets] > ends[resets - 1]).all()
    assert (ends[resets] > np.arange(1, horizon + 1)[resets]).all()  # N > n after reset
    for t in range(1, horizon):  # arm pulled at t was active after pull t
        assert active[t - 1, arms[t]]
    assert active[-1].sum() < 5  # eliminations did happen
    assert mask[arms].all()  # padded arms never pulled
    assert bool(final.active[int(policy.output(final))])


def _elimination_runs(elim_count, num_reps=200, horizon=10_000):
    """K = 2, Bernoulli (0.25, 0.75) (spec §8 item 6)."""
    policy = eucbv(num_arms=2, horizon=horizon, elim_count=elim_count)
    bandit, params = jbandits.envs.bernoulli([0.25, 0.75])

    def one(key):
        from jbandits.sim.replication import split_key, step_key

        key_init, key_steps, key_env, _ = split_key(key)

        def body(carry, t):
            state, counts = carry
            r = bandit.sample(params, key_env, state.arm, counts[state.arm])
            counts = counts.at[state.arm].add(1)
            state = policy.step(state, step_key(key_steps, t), r)
            return (state, counts), state.active[0]

        state0 = policy.init(key_init, params.arm_mask)
        (state, counts), alive = jax.lax.scan(
            body, (state0, jnp.zeros(2, jnp.int32)), jnp.arange(horizon)
        )
        return state.active, counts, jnp.argmin(alive)

    keys = jax.random.split(jax.random.key(11), num_reps)
    return jax.device_get(jax.jit(jax.vmap(one))(keys))


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_round_eliminates_the_worse_arm():
    active, counts, when = _elimination_runs("round")
    assert (~active[:, 0]).all() and active[:, 1].all()  # spec: 200/200 runs
    assert np.median(when) < 500  # spec: median elimination time 116, max 721
    assert (counts[:, 0] < 1000).all()


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_pulls_keeps_the_worse_arm_rarely_pulled():
    active, counts, _ = _elimination_runs("pulls")
    assert active[:, 1].all()
    # spec measured mean 13.6, max 43 pulls of the worse arm
    assert counts[:, 0].mean() < 30 and counts[:, 0].max() < 100
    assert (~active[:, 0]).mean() < 0.6  # spec: eliminated in only ~25 % of runs


def test_eliminated_optimal_diagnostic():
    policy = _quiet(num_arms=3, horizon=50, psi=0.02, rho=0.5)
    table = np.array([[0.0] * 50, [1.0] * 50, [0.5] * 50])
    _, _, final = rollout(policy, table, 50)
    means = jnp.array([0.9, 0.1, 0.5])  # arm 0 truly best but paid 0: eliminated
    assert not bool(final.active[0]) and bool(final.active[1])
    assert bool(eliminated_optimal(final, means))
    assert not bool(eliminated_optimal(final, jnp.array([0.1, 0.9, 0.5])))
    assert int(policy.output(final)) == 1


@pytest.mark.parametrize(
    "name",
    [
        "eucbv-round-random",
        "eucbv-pulls-first",
        "eucbv-round-default-psi",
        "eucbv-pulls-default-psi",
    ],
)
def test_trace_instances_exercise_rounds_and_eliminations(name):
    case = find_case(name)
    runs = reference_traces(case, num_instances=200)
    eliminated = sum(len(tr[-1][1]) < inst.num_arms for inst, tr in runs)
    resets = sum(tr[-1][2] >= 1 for _, tr in runs)
    capped = sum(tr[-1][2] == round_cap(case.horizon) + 1 for _, tr in runs)
    single = sum(len(tr[-1][1]) == 1 for _, tr in runs)
    assert eliminated >= 20, eliminated
    assert resets >= 100 and capped >= 10, (resets, capped)
    if "default" not in name:
        assert single >= 10, single


def test_traced_hyper_parameters_one_compile():
    table = np.random.default_rng(0).random((4, 60))
    bandit, params = jbandits.envs.replay(table)
    traces = []

    def pulls(rho, psi):
        traces.append(1)
        policy = _quiet(num_arms=4, horizon=60, rho=rho, psi=psi)
        res = jbandits.run(
            policy, bandit, params, jax.random.key(0), budget=60, horizon=60
        )
        return res.pulls

    grid = (jnp.array([0.5, 0.05, 0.5]), jnp.array([1.0, 0.02, 1.0]))
    out = np.asarray(jax.jit(jax.vmap(pulls))(*grid))
    assert len(traces) == 1
    np.testing.assert_array_equal(out[0], out[2])
    assert not np.array_equal(out[0], out[1])
    single = np.asarray(pulls(jnp.asarray(0.05), jnp.asarray(0.02)))
    np.testing.assert_array_equal(out[1], single)


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="horizon"):
        eucbv(num_arms=3, horizon=100.5)
    with pytest.raises(TypeError, match="horizon"):
        eucbv(num_arms=3)  # required keyword
    with pytest.raises(ValueError, match="rho"):
        _quiet(num_arms=3, horizon=100, rho=0.0)
    with pytest.raises(ValueError, match="psi"):
        _quiet(num_arms=3, horizon=100, psi=-1.0)
    with pytest.raises(ValueError, match="elim_count"):
        _quiet(num_arms=3, horizon=100, elim_count="z")
    with pytest.raises(ValueError, match="tie_break"):
        _quiet(num_arms=3, horizon=100, tie_break="last")
    with pytest.raises(ValueError, match="num_arms"):
        _quiet(num_arms=1, horizon=100)


def test_warns_below_theorem_range():
    with pytest.warns(UserWarning, match="K\\^2.4"):
        eucbv(num_arms=10, horizon=100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        eucbv(num_arms=2, horizon=100)
