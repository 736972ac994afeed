"""Issue 65 (hardening, round 4), classes 3 and 7: a fixed-confidence policy's reward
model is checked against the bandit at the entry points (``check_model=False``
overrides), and instances are validated where they enter (the builders' validators).

Small K, budgets and reps: every run here is a few hundred pulls.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.core import registry, reward_model
from jbandits.envs import bernoulli, gaussian, replay

KEY = jax.random.key(0)
GAUSS, GAUSS_PARAMS = gaussian([0.0, 1.0], [1.0, 1.0])
BERN, BERN_PARAMS = bernoulli([0.2, 0.8])


def _simulate(policy, bandit=GAUSS, params=GAUSS_PARAMS, **kw):
    return jbandits.simulate(
        policy, bandit, params, KEY, budget=kw.pop("budget", 64), num_reps=2, **kw
    )


def _one_line(err) -> str:
    text = str(err.value)
    assert "\n" not in text, text
    return text


# ------------------------------------------------------------- class 3: the model
@pytest.mark.parametrize("name", ["uniform_glr", "kl_racing", "track_and_stop"])
def test_a_bernoulli_policy_is_refused_on_gaussian_rewards(name):
    policy = jbandits.make(name, num_arms=2, delta=0.1)
    with pytest.raises(ValueError, match="family='gaussian'") as err:
        _simulate(policy)
    text = _one_line(err)
    assert name in text and "check_model=False" in text


def test_check_model_false_runs_it_anyway():
    policy = jbandits.make("uniform_glr", num_arms=2, delta=0.1)
    res = _simulate(policy, check_model=False)
    assert res.num_pulls.shape == (2,)


def test_a_gaussian_policy_sigma_is_checked_against_the_instance():
    small = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=0.1)
    with pytest.raises(ValueError, match=r"sigma=0\.1.*std up to 1") as err:
        _simulate(small)
    assert "sigma >= 1" in _one_line(err)
    for sigma in (1.0, 2.0):  # the instance's sigma, and a conservative one
        ok = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=sigma)
        _simulate(ok)


def test_the_largest_std_of_a_stack_counts():
    bandit, params = gaussian([[0.0, 1.0], [0.0, 1.0]], [[0.5, 0.5], [0.5, 2.0]])
    policy = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=1.0)
    with pytest.raises(ValueError, match="std up to 2"):
        jbandits.simulate(policy, bandit, params, KEY, budget=[64, 64], num_reps=1)


def test_a_gaussian_policy_on_bernoulli_rewards_needs_sigma_one_half():
    ok = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=0.5)
    _simulate(ok, BERN, BERN_PARAMS)
    small = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=0.4)
    with pytest.raises(ValueError, match=r"sigma >= 0\.5"):
        _simulate(small, BERN, BERN_PARAMS)


def test_replay_tables_by_their_values():
    policy = jbandits.make("uniform_glr", num_arms=2, delta=0.1)
    binary = np.tile([[1.0, 0.0, 1.0, 1.0], [0.0, 0.0, 1.0, 0.0]], (1, 16))
    _simulate(policy, *replay(binary))
    _simulate(policy, *replay(binary * 0.5 + 0.25))  # in [0, 1]: bounded, accepted
    with pytest.raises(ValueError, match=r"\[0, 3\]"):
        _simulate(policy, *replay(binary * 3.0))
    wide = jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=1.5)
    _simulate(wide, *replay(binary * 3.0))  # range 3: sub-Gaussian with sigma 3/2


class _ExpParams(NamedTuple):
    means: jax.Array
    arm_mask: jax.Array


def _exp_sample(params, key, arm, pull_index):
    u = jbandits.envs.reward_uniform(key, arm, pull_index, params.means.dtype)
    return -params.means[arm] * jnp.log1p(-u)


EXP = jbandits.envs.family(
    "exponential", _ExpParams, _exp_sample, stds=lambda p: p.means
)
EXP_PARAMS = _ExpParams(jnp.asarray([0.5, 1.0]), jnp.asarray([True, True]))


def test_a_family_of_unknown_rewards_is_refused_and_can_be_overridden():
    policy = jbandits.make("kl_lucb", num_arms=2, delta=0.1)
    with pytest.raises(ValueError, match="'exponential'") as err:
        _simulate(policy, EXP, EXP_PARAMS)
    assert "check_model=False" in _one_line(err)
    _simulate(policy, EXP, EXP_PARAMS, check_model=False)


def test_sweep_checks_every_grid_point():
    def make(sigma):
        return jbandits.make("uniform_glr", num_arms=2, family="gaussian", sigma=sigma)

    kw = dict(num_reps=1, horizon=64, budget=64, metric=None)
    with pytest.raises(ValueError, match=r"sigma=0\.2"):
        jbandits.sweep(make, GAUSS, GAUSS_PARAMS, KEY, grid={"sigma": [1.0, 0.2]}, **kw)
    grid = {"delta": [0.1, 0.2]}  # a registered name: its default family
    with pytest.raises(ValueError, match="family='gaussian'"):
        jbandits.sweep("uniform_glr", GAUSS, GAUSS_PARAMS, KEY, grid=grid, **kw)
    jbandits.sweep("uniform_glr", BERN, BERN_PARAMS, KEY, grid=grid, **kw)
    jbandits.sweep(make, GAUSS, GAUSS_PARAMS, KEY, grid={"sigma": [1.0, 0.2]},
                   check_model=False, **kw)  # fmt: skip


def test_sweep_grid_refuses_and_the_gaussian_family_fits():
    kw = dict(budgets=[64], num_reps=1, progress=False)
    with pytest.raises(ValueError, match="family='gaussian'") as err:
        jbandits.sweep_grid([("kl_racing", {"delta": 0.1})], GAUSS, [GAUSS_PARAMS],
                            KEY, **kw)  # fmt: skip
    _one_line(err)
    hp = {"delta": 0.1, "family": "gaussian", "sigma": [1.0, 0.3]}
    with pytest.raises(ValueError, match=r"sigma=0\.3"):
        jbandits.sweep_grid([("kl_racing", hp)], GAUSS, [GAUSS_PARAMS], KEY, **kw)
    hp = {"delta": 0.1, "family": "gaussian", "sigma": 1.0}
    res = jbandits.sweep_grid([("kl_racing", hp)], GAUSS, [GAUSS_PARAMS], KEY, **kw)
    assert len(res.cells) == 1
    jbandits.sweep_grid([("kl_racing", {"delta": 0.1})], GAUSS, [GAUSS_PARAMS], KEY,
                        check_model=False, **kw)  # fmt: skip


def test_regret_and_hand_built_policies_declare_nothing():
    assert reward_model.of_policy(jbandits.make("klucb", num_arms=2)) is None
    assert reward_model.of_policy(jbandits.make("ucb1", num_arms=2)) is None
    _simulate(jbandits.make("klucb", num_arms=2))  # not checked: see the docs
    made = jbandits.make("uniform_glr", num_arms=2)
    hand = made._replace(spec=None)
    assert reward_model.of_policy(hand) is None


def test_a_user_policy_with_family_and_sigma_declares_its_model():
    def mine(num_arms, *, delta=0.1, family="bernoulli", sigma=1.0):
        return jbandits.make("uniform_glr", num_arms=num_arms, delta=delta,
                             family=family, sigma=sigma)._replace(spec=None)  # fmt: skip

    registry.register("hardening4_mine", mine)
    try:
        model = reward_model.of_policy(jbandits.make("hardening4_mine", num_arms=2))
        assert model.family == "bernoulli"
        with pytest.raises(ValueError, match="hardening4_mine"):
            _simulate(jbandits.make("hardening4_mine", num_arms=2))
        gauss = jbandits.make("hardening4_mine", num_arms=2, family="gaussian")
        assert reward_model.of_policy(gauss) == reward_model.RewardModel(
            "gaussian", 1.0
        )
    finally:
        registry.unregister("hardening4_mine")


def test_every_fixed_confidence_policy_declares_its_model():
    from jbandits.policies import fixed_confidence

    for name in jbandits.names():
        module = registry.raw_factory(name).__module__
        if module.startswith(fixed_confidence.__name__):
            model = reward_model.of_policy(jbandits.make(name, num_arms=2))
            assert model == reward_model.RewardModel("bernoulli", None), name


# --------------------------------------------------- class 7: instances at the door
BAD_BERNOULLI = [
    ("nan", [float("nan"), 0.5], "finite"),
    ("above", [1.5, 0.5], r"\[0, 1\]"),
    ("below", [-0.3, 0.5], r"\[0, 1\]"),
]


@pytest.mark.parametrize(("label", "means", "match"), BAD_BERNOULLI)
def test_simulate_refuses_what_the_bernoulli_builder_refuses(label, means, match):
    del label
    params = BERN_PARAMS._replace(means=jnp.asarray(means, jnp.float32))
    policy = jbandits.make("ucb1", num_arms=2)
    with pytest.raises(ValueError, match=match) as err:
        _simulate(policy, BERN, params)
    text = _one_line(err)
    with pytest.raises(ValueError) as built:
        bernoulli(means)
    assert str(built.value) == text  # one validator, the same words
    with pytest.raises(ValueError, match=match):
        jbandits.sweep_grid([("ucb1", {})], BERN, [params], KEY, budgets=[16],
                            num_reps=1, progress=False)  # fmt: skip


@pytest.mark.parametrize(
    ("stds", "match"), [([-1.0, 1.0], ">= 0"), ([float("nan"), 1.0], "finite")]
)
def test_simulate_refuses_bad_gaussian_stds(stds, match):
    params = GAUSS_PARAMS._replace(stds=jnp.asarray(stds, jnp.float32))
    with pytest.raises(ValueError, match=match) as err:
        _simulate(jbandits.make("ucb1", num_arms=2), GAUSS, params)
    _one_line(err)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_user_families_with_non_finite_means_are_refused(bad):
    params = EXP_PARAMS._replace(means=jnp.asarray([bad, 1.0]))
    with pytest.raises(ValueError, match="finite") as err:
        _simulate(jbandits.make("ucb1", num_arms=2), EXP, params)
    _one_line(err)
    with pytest.raises(ValueError, match="finite"):
        jbandits.sweep_grid([("ucb1", {})], EXP, [params], KEY, budgets=[16],
                            num_reps=1, progress=False)  # fmt: skip


def test_a_long_bad_instance_is_one_line():
    means = np.full(200, 0.5)
    means[150] = 1.5
    params = bernoulli(np.full(200, 0.5))[1]._replace(means=jnp.asarray(means))
    with pytest.raises(ValueError, match=r"means\[150\] = 1\.5") as err:
        _simulate(jbandits.make("ucb1", num_arms=200), BERN, params, budget=400)
    _one_line(err)


def test_valid_instances_still_run():
    _simulate(jbandits.make("ucb1", num_arms=2), BERN, bernoulli([0.0, 1.0])[1])
    _simulate(jbandits.make("ucb1", num_arms=2), GAUSS, gaussian([0.0, 1.0], 0.0)[1])
