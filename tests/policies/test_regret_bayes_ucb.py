"""Bayes-UCB unit tests (spec §2.9, §3.2-3.3, §8 item 9)."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _bayes_util import assert_binomial, first_arms, replay_arms
from harness import arm_stats
from scipy import stats as sps

import jbandits
from jbandits.core.execution import Execution
from jbandits.policies.regret import bayes_ucb
from jbandits.policies.regret.bayes_ucb import bayes_ucb_index, tail_level

MASK = np.array([False, True, True, False, True, True])  # 4 real arms, arm 0 padded


@pytest.mark.parametrize("posterior", ["beta", "gauss"])
def test_first_pull_is_uniform_over_real_arms(posterior):
    arms = first_arms(bayes_ucb(6, posterior=posterior), MASK)
    assert np.all(MASK[arms]), "a padded arm was chosen"
    for arm in np.flatnonzero(MASK):
        assert_binomial(int((arms == arm).sum()), arms.size, 0.25)


@pytest.mark.parametrize("posterior", ["beta", "gauss"])
def test_first_pull_with_first_ties_is_the_first_real_arm(posterior):
    # every quantile ties at t = 1 (0 for Beta, -inf for Gauss); the padded arm 0
    # must not win the tie
    arms = first_arms(bayes_ucb(6, posterior=posterior, tie_break="first"), MASK, n=8)
    assert np.all(arms == 1)


def test_tail_level():
    assert float(tail_level(5)) == pytest.approx(0.2)
    assert float(tail_level(5, 0.0, 100.0)) == pytest.approx(0.2)
    assert float(tail_level(5, 2.0, 100.0)) == pytest.approx(
        1 / (5 * math.log(100) ** 2)
    )
    assert float(tail_level(1, 3.0, 2.0)) == 1.0  # ln T floored at 1 keeps alpha <= 1


_stats = arm_stats  # (counts, sums), float32


def test_beta_index_is_the_scipy_quantile():
    stats = _stats([5.0, 2.0, 0.0, 40.0], [3.0, 0.0, 0.0, 31.0])
    succ = stats.sums  # binary rewards
    alpha = 1.0 / 47.0
    got = np.asarray(bayes_ucb_index(stats, succ, alpha, posterior="beta"))
    a, b = 1.0 + np.array([3, 0, 0, 31]), 1.0 + np.array([2, 2, 0, 9])
    np.testing.assert_allclose(got, sps.beta.isf(alpha, a, b), atol=5e-6)


def test_gauss_index_formula():
    stats = _stats([0.0, 3.0, 9.0], [0.0, 2.4, -1.0])
    alpha, s2 = 1.0 / 30.0, 0.5
    got = np.asarray(
        bayes_ucb_index(stats, stats.sums, alpha, posterior="gauss", noise_var=s2)
    )
    k, s = np.array([0.0, 3.0, 9.0]), np.array([0.0, 2.4, -1.0])
    expected = s / (k + 1) + np.sqrt(s2 / (k + 1)) * sps.norm.isf(alpha)
    np.testing.assert_allclose(got, expected, rtol=1e-5)


@pytest.mark.parametrize(
    "posterior, rewards",
    [
        # Beta: t=1 all tie -> 0; t=2 (alpha 1/2): median Beta(2,1)=.707 > .5 -> 0;
        # t=3 (alpha 1/3): Beta(2,2) upper-third quantile .613 < 2/3 of Beta(1,1) -> 1
        ("beta", [[1.0, 0.0], [0.0, 0.0]]),
        # Gauss: t=1 all -inf -> 0; t=2 (z=0): 1/2 > 0 -> 0; t=3: S=0, k=2:
        # sqrt(1/3) z_{1/3} = .249 < z_{1/3} = .431 of the unpulled arm -> 1
        ("gauss", [[1.0, -1.0], [0.0, 0.0]]),
    ],
)
def test_two_arm_three_step_hand_check(posterior, rewards):
    policy = bayes_ucb(2, posterior=posterior, tie_break="first")
    arms = replay_arms(policy, np.array(rewards), np.ones(2, bool), budget=3)
    np.testing.assert_array_equal(arms, [0, 0, 1])


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_concrete_c_needs_horizon_and_traced_c_sweeps():
    with pytest.raises(ValueError, match="horizon"):
        bayes_ucb(3, c=1.0)
    bayes_ucb(3, c=0.0)  # c = 0 needs no horizon

    def first_index_arm(c):
        policy = bayes_ucb(3, c=c, horizon=1000.0)
        state = policy.init(jax.random.key(0), jnp.ones(3, bool))
        return policy.step(state, jax.random.key(1), 1.0).arm

    assert jax.jit(jax.vmap(first_index_arm))(jnp.array([0.0, 1.0, 5.0])).shape == (3,)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"num_arms": 1}, "num_arms"),
        ({"num_arms": 3, "posterior": "gaussian"}, "posterior"),
        ({"num_arms": 3, "c": -1.0, "horizon": 10.0}, "c"),
        ({"num_arms": 3, "noise_var": 0.0}, "noise_var"),
        ({"num_arms": 3, "horizon": 0.0}, "horizon"),
        ({"num_arms": 3, "tie_break": "last"}, "tie_break"),
        ({"num_arms": 3, "num_iters": 2.5}, "num_iters"),
    ],
)
def test_validation_names_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        bayes_ucb(**kwargs)


@pytest.mark.parametrize("posterior", ["beta", "gauss"])
def test_padded_arms_never_pulled(posterior):
    rng = np.random.default_rng(0)
    table = (rng.random((6, 60)) < 0.5) * 1.0
    arms = replay_arms(bayes_ucb(6, posterior=posterior), table, MASK, budget=60)
    assert np.all(MASK[arms])
    assert jbandits.make("bayes_ucb", num_arms=3).setting == "regret"


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_beta_index_tracks_scipy_along_a_run():
    # at every decision of a float32 run no arm's scipy beta.isf exceeds the pulled
    # arm's by more than one cell (plus float32 rounding), and every arm's certified
    # floor (the state's lo; the pulled arm need not be resolved to its cell when
    # it is the lone contender) lies below its scipy quantile
    horizon, means = 1500, jnp.array([0.07, 0.1, 0.5, 0.07, 0.9])
    policy = bayes_ucb(5)
    cell = 2.0**-20

    def body(state, key):
        key_r, key_s = jax.random.split(key)
        reward = (jax.random.uniform(key_r) < means[state.arm]).astype(jnp.float32)
        state = policy.step(state, key_s, reward)
        succ = state.succ
        out = (state.quant[4], state.arm, 1 + succ)
        return state, out + (1 + state.stats.counts - succ, state.t + 1)

    state = policy.init(jax.random.key(0), jnp.ones(5, bool))
    keys = jax.random.split(jax.random.key(1), horizon)
    _, out = jax.jit(lambda s: jax.lax.scan(body, s, keys))(state)
    lo, arm, a, b, t = (np.asarray(v) for v in out)
    ref = sps.beta.isf(1.0 / np.asarray(t, np.float64)[:, None], a, b)
    pulled = ref[np.arange(horizon), arm]
    assert np.min(pulled - ref.max(axis=1)) >= -(cell + 2e-7)
    assert np.max(lo.astype(np.float64) - ref) <= 2e-7
    # the floors are tight where it matters: the pulled arm's within a few cells
    assert np.median(pulled - lo[np.arange(horizon), arm]) <= 4 * cell


_NAN_LEVEL = """
import jax, jax.numpy as jnp, numpy as np, jbandits
b, p = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 8))
def run(horizon):
    pol = jbandits.make("bayes_ucb", num_arms=8, num_iters=23, c=1.0, horizon=horizon)
    return jbandits.sim.engine.run(pol, b, p, jax.random.key(0), budget=48, horizon=48)
res = jax.jit(run)(jnp.float32(np.nan))
print(int(res.num_pulls))
"""


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_nan_tail_level_ends_every_step():
    """A NaN tail level (traced horizon NaN) certifies no cell: the search stops at
    once. It used to move each bound down one grid cell per probe, ~2^22 probes per
    arm and step in float32 (the property tests with invalid hyper-parameters ran
    past CI's time limit)."""
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", _NAN_LEVEL],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "JAX_PLATFORMS": "cpu"},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-1] == "48"


@pytest.mark.parametrize("tie_break", ["random", "first"])
def test_gaussian_kept_rows_pull_the_same_arms(tie_break):
    """``Execution.gauss_kept_arms``: means and scales kept per arm (K = 40 >= 2) or
    computed every step (K = 40 < 1000) give the same arms through ``simulate``, on
    Gaussian rewards with padded instances; the kept form has the two extra rows."""
    rng = np.random.default_rng(11)
    stack = []
    for k in (40, 25, 33):
        _, params = jbandits.envs.gaussian(rng.normal(0.0, 0.3, k), np.ones(k))
        stack.append(jbandits.envs.pad_arms(params, 40))
    bandit = jbandits.envs.GAUSSIAN
    params = jbandits.envs.stack_instances(stack)
    out = {}
    for kept in (2, 1000):
        policy = jbandits.make(
            "bayes_ucb",
            num_arms=40,
            posterior="gauss",
            c=1.0,
            horizon=300.0,
            noise_var=0.7,
            tie_break=tie_break,
            execution=Execution(gauss_kept_arms=kept),
        )
        out[kept] = jbandits.simulate(
            policy, bandit, params, jax.random.key(5), budget=300, num_reps=8,
            record_arms=True, return_state=True, progress=False,
        )  # fmt: skip
    np.testing.assert_array_equal(np.asarray(out[2].arms), np.asarray(out[1000].arms))
    assert out[2].state.stats.extra.shape[-2] == 2
    assert out[1000].state.stats.extra.shape[-2] == 0


@pytest.mark.parametrize("bad", [1, 0, 2.5, True, "32"])
def test_gauss_kept_arms_is_checked(bad):
    with pytest.raises(ValueError, match="gauss_kept_arms"):
        Execution(gauss_kept_arms=bad)
