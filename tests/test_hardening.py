"""Silent wrong results that used to pass unnoticed: NaN hyper-parameters, overflowing
rewards, out-of-range rewards for Opt-KG, and the traced hyper-parameter check."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.core import validate as _validate
from jbandits.policies.identification.ugape import select_arm


def _pulls_of_padded(policy_fn, bandit, params, budget, reps=4):
    keys = jax.random.split(jax.random.key(0), reps)

    def one(key, params):
        res = jbandits.run(
            policy_fn(), bandit, params, key, budget=budget, horizon=budget
        )
        return res.pulls

    pulls = np.asarray(jax.jit(jax.vmap(one, in_axes=(0, None)))(keys, params))
    return pulls[:, ~np.asarray(params.arm_mask)].sum(), pulls


def test_apt_with_nan_epsilon_never_pulls_a_padded_arm():
    # every index is NaN: the selection used to fall back to arm 0, a padded arm
    mask = np.ones(100, bool)
    mask[0] = False
    bandit, params = jbandits.envs.bernoulli(
        np.linspace(0.05, 0.95, 100), arm_mask=jnp.asarray(mask)
    )

    def policy():
        return jbandits.apt(100, threshold=0.5, epsilon=jnp.float32(jnp.nan))

    padded, pulls = _pulls_of_padded(policy, bandit, params, budget=300)
    assert padded == 0
    assert (pulls.sum(1) == 300).all()


@pytest.mark.parametrize("name", ["ucbv", "eucbv"])
def test_overflowing_means_never_pull_a_padded_arm(name):
    # sums of rewards near 3e37 overflow float32 after ~12 pulls: inf / NaN indices
    mask = jnp.asarray([False, True, True, True])
    bandit, params = jbandits.envs.gaussian(
        np.array([0.0, 3e37, 3e37, 3e37]), np.ones(4), arm_mask=mask
    )
    make = {
        "ucbv": lambda: jbandits.ucbv(4),
        "eucbv": lambda: jbandits.eucbv(4, horizon=200),
    }[name]
    padded, _ = _pulls_of_padded(make, bandit, params, budget=200)
    assert padded == 0


def test_ugape_selection_with_nan_statistics_picks_real_arms():
    mask = jnp.asarray([False, True, True, True, False])
    nan = jnp.full(5, jnp.nan)
    sel = select_arm(nan, jnp.ones(5), mask, 2)
    assert bool(mask[sel.arm]) and bool(mask[sel.u]) and bool(mask[sel.l])
    assert not np.asarray(sel.chosen & ~mask).any()


# ------------------------------------------------------------------------------ OptKG
def _optkg_run(bandit, params, budget=60):
    policy = jbandits.optkg(4, threshold=0.5)
    return jax.jit(
        lambda k, p: jbandits.run(
            policy, bandit, p, k, budget=budget, horizon=budget, return_state=True
        )
    )(jax.random.key(3), params)


def test_optkg_flags_rewards_outside_unit_interval_and_keeps_state_finite():
    bandit, params = jbandits.envs.gaussian([0.2, 0.4, 0.6, 0.8], [1.0] * 4)
    res = _optkg_run(bandit, params)
    state = res.state
    for leaf in (state.post_a, state.post_b, state.log_gain):
        assert np.isfinite(np.asarray(leaf)).all()
    assert (np.asarray(state.post_a) > 0).all() and (np.asarray(state.post_b) > 0).all()
    assert bool(state.bad_reward)
    assert bool(res.stopped) and int(state.arm) == -1
    assert int(res.num_pulls) < 60


def test_optkg_bernoulli_rewards_are_not_flagged():
    bandit, params = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
    res = _optkg_run(bandit, params)
    assert not bool(res.state.bad_reward)
    assert not bool(res.stopped) and int(res.num_pulls) == 60


def test_optkg_fractional_and_nan_rewards_directly():
    policy = jbandits.optkg(3, threshold=0.5)
    mask = jnp.ones(3, bool)
    state = policy.init(jax.random.key(0), mask)
    state = policy.step(state, jax.random.key(0), 0.25)  # in [0, 1]: used
    assert not bool(state.bad_reward) and int(state.arm) >= 0
    assert float(state.post_a[0]) == 1.25 and float(state.post_b[0]) == 1.75
    bad = policy.step(state, jax.random.key(0), jnp.nan)
    assert bool(bad.bad_reward) and int(bad.arm) == -1
    np.testing.assert_array_equal(bad.post_a, state.post_a)
    assert np.isfinite(np.asarray(bad.log_gain)).all()


# --------------------------------------------------------------- traced parameter check
def test_check_traced_flags_nan_and_sign_under_jit_and_vmap():
    def check(zeta, c, b, eps):
        return _validate.check_traced(
            {"zeta": zeta, "c": c, "b": b, "eps": eps},
            positive=("b",),
            nonnegative=("zeta", "c"),
            finite=("eps",),
        )

    zeta = jnp.asarray([1.2, jnp.nan, 1.0, 1.0, 0.0])
    c = jnp.asarray([1.0, 1.0, -0.1, 1.0, 0.0])
    b = jnp.asarray([1.0, 1.0, 1.0, 0.0, 2.0])
    eps = jnp.asarray([0.0, 0.0, 0.0, jnp.inf, -5.0])
    bad = jax.jit(jax.vmap(check))(zeta, c, b, eps)
    assert set(bad) == {"zeta", "c", "b", "eps"}
    assert np.asarray(bad["zeta"]).tolist() == [False, True, False, False, False]
    assert np.asarray(bad["c"]).tolist() == [False, False, True, False, False]
    assert np.asarray(bad["b"]).tolist() == [False, False, False, True, False]
    assert np.asarray(bad["eps"]).tolist() == [False, False, False, True, False]


def test_check_traced_unconstrained_names_still_flag_nan_and_arrays_reduce():
    bad = _validate.check_traced(
        {"tau": jnp.nan, "priors": jnp.asarray([1.0, -1.0]), "k": 3},
        positive=("priors",),
    )
    assert bool(bad["tau"]) and bool(bad["priors"]) and not bool(bad["k"])
    assert bad["priors"].shape == ()
    with pytest.raises(ValueError, match="delta"):
        _validate.check_traced({"tau": 0.5}, positive=("delta",))


def test_ugape_selection_with_every_real_arm_chosen_pulls_a_real_arm():
    """m >= the real arms (outside the contract; unchecked for a traced mask, e.g. a
    padded instance in a batch): J holds every real arm, there is no u, and the
    pulled arm is l, a real arm (it was a padded one, found by the property test
    with one real arm left: any a, NaN included)."""
    mask = jnp.asarray([False, True, False, False])
    for a in (1.0, jnp.nan):
        beta = jnp.sqrt(a / jnp.asarray([1.0, 5.0, 1.0, 1.0]))
        sel = select_arm(jnp.asarray([0.0, 0.4, 0.0, 0.0]), beta, mask, 1)
        assert int(sel.u) == -1 and int(sel.l) == 1 and int(sel.arm) == 1


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_float32_count_ceiling_is_refused(monkeypatch):
    """Float32 statistics count pulls exactly only to 2^24; a run that pulls an arm
    more often raises instead of returning statistics frozen at the ceiling (the
    ceiling is lowered here so that the run is short). 101 pulls of 2 arms put more
    than 50 on one arm; 100 uniform pulls of 4 arms put 25 on each."""
    if jax.config.jax_enable_x64:
        pytest.skip("64-bit floats count exactly to 2^53")
    monkeypatch.setattr(jbandits.sim.runner.results, "EXACT_FLOAT32_COUNT", 50)
    two, two_params = jbandits.envs.bernoulli([0.3, 0.7])
    with pytest.raises(ValueError, match="float32 statistics count"):
        jbandits.simulate(
            jbandits.make("ucb1", num_arms=2), two, two_params, jax.random.key(0),
            budget=101, num_reps=4, progress=False,
        )  # fmt: skip
    four, four_params = jbandits.envs.bernoulli([0.2, 0.4, 0.6, 0.8])
    res = jbandits.simulate(
        jbandits.make("uniform", num_arms=4, threshold=0.5), four, four_params,
        jax.random.key(0), budget=100, num_reps=4, progress=False,
    )  # fmt: skip
    assert np.asarray(res.pulls).max() <= 50


def test_float32_count_check_reads_the_largest_count():
    """The check itself: 2^24 pulls pass, one more raises."""
    if jax.config.jax_enable_x64:
        pytest.skip("64-bit floats count exactly to 2^53")
    ok = np.array([[3, 1 << 24]], np.int32)
    jbandits.sim.runner.check_count_precision(ok)
    with pytest.raises(ValueError, match="2\\^24"):
        jbandits.sim.runner.check_count_precision(ok + 1)
