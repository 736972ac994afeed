"""Median Elimination unit tests: spec §2.7 sample sizes (§8 item 3), median rule."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import find_case, reference_traces, rollout

import jbandits
from jbandits.policies.regret import median_elimination
from jbandits.policies.regret.median_elimination import (
    _median,
    median_elimination_samples,
)


def _rounds(eps, delta, count, square=True):
    eps_l, delta_l, out = eps / 4.0, delta / 2.0, []
    for _ in range(count):
        out.append(int(median_elimination_samples(eps_l, delta_l, square)))
        eps_l, delta_l = 0.75 * eps_l, 0.5 * delta_l
    return out


@pytest.mark.parametrize("x64", [False, True])
def test_sample_size_oracles(x64):
    with jax.enable_x64(x64):
        assert _rounds(0.1, 0.1, 3) == [
            26_204,
            54_472,
            110_858,
        ]  # spec §2.7 / §8 item 3
        assert _rounds(0.1, 0.1, 1, square=False) == [328]  # authors' form (spec A6)


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_expt2_is_round_robin():
    """Spec §8 item 3 (scaled down): n_1 = 26 204 > T / K, so ME is round robin and
    every arm gets exactly T / K pulls; the pseudo-regret is T * mean(gap)."""
    num_arms, budget = 100, 6_000
    means = np.linspace(0.2, 0.8, num_arms)
    bandit, params = jbandits.envs.bernoulli(means)
    for tie_break in ("first", "random"):
        res = jbandits.simulate(
            median_elimination(num_arms, tie_break=tie_break),
            bandit,
            params,
            jax.random.key(0),
            budget=budget,
            num_reps=2,
        )
        assert (np.asarray(res.pulls) == budget // num_arms).all()
        expected = budget * float(np.mean(means.max() - means))
        np.testing.assert_allclose(np.asarray(res.regret)[:, -1], expected, rtol=1e-5)


@pytest.mark.parametrize("count", range(1, 9))
def test_median_matches_numpy(count):
    rng = np.random.default_rng(count)
    for _ in range(20):
        values = rng.integers(0, 3, size=9) / 2.0  # many exact ties
        active = np.zeros(9, bool)
        active[rng.choice(9, count, replace=False)] = True
        got = float(_median(jnp.asarray(values), jnp.asarray(active)))
        assert got == float(np.median(values[active]))


def test_hand_rounds_and_median_ties():
    """n_1 = ceil(8 / eps ln(6 / delta)) = 1 for eps = 50, delta = 0.9 (no square).

    Round 1: one pull each; estimates (1, .5, .5, 0) -> median .5, only arm 3 goes
    (ties at the median stay). Round 2: n_2 = ceil(8 / 37.5 ln(13.3)) = 1; estimates
    (1, 0, .5) -> median .5, arm 1 goes. Round 3 keeps arms 0 and 2 ...
    """
    table = np.array([[1.0] * 20, [0.5, 0.0] + [0.0] * 18, [0.5] * 20, [0.0] * 20])
    policy = median_elimination(4, eps=50.0, delta=0.9, square=False, tie_break="first")
    arms, states, final = rollout(policy, table, 12)
    active = np.asarray(states.active)
    assert arms[:4].tolist() == [0, 1, 2, 3]
    assert active[3].tolist() == [True, True, True, False]
    assert arms[4:7].tolist() == [0, 1, 2]
    assert active[6].tolist() == [True, False, True, False]
    assert np.asarray(states.round_index)[6] == 2
    # round 3: (1, .5) with two arms -> median .75, arm 2 goes; then arm 0 forever
    assert arms[7:9].tolist() == [0, 2]
    assert active[8].tolist() == [True, False, False, False]
    assert (arms[9:] == 0).all() and int(policy.output(final)) == 0


def test_cumulative_means_switch_changes_the_estimate():
    # arm 0 pays 0 then 1, arm 1 pays 1 then 0.4: round 2 estimates differ by switch
    table = np.array([[0.0, 1.0, 1.0, 1.0, 1.0], [1.0, 0.4, 0.4, 0.4, 0.4], [0.7] * 5])
    kw = dict(eps=50.0, delta=0.9, square=False, tie_break="first")
    _, s_round, _ = rollout(median_elimination(3, means="round", **kw), table, 5)
    _, s_cum, _ = rollout(median_elimination(3, means="cumulative", **kw), table, 5)
    # round 1 (.0, 1, .7): median .7 -> arm 0 goes in both
    assert np.asarray(s_round.active)[2].tolist() == [False, True, True]
    # round 2 on arms 1, 2 (one pull each): per-round (.4, .7) vs cumulative (.7, .7)
    assert np.asarray(s_round.active)[4].tolist() == [False, False, True]
    assert np.asarray(s_cum.active)[4].tolist() == [False, True, True]
    assert np.asarray(s_cum.round_index)[4] == 2


def test_first_pull_random_over_real_arms():
    policy = median_elimination(6)
    mask = jnp.array([False, True, True, False, True, True])
    keys = jax.random.split(jax.random.key(5), 4000)
    first = np.asarray(jax.vmap(lambda k: policy.init(k, mask).arm)(keys))
    assert set(first.tolist()) == {1, 2, 4, 5}
    for arm in (1, 2, 4, 5):  # binomial, p = 1/4, 4.5 standard errors
        assert abs((first == arm).mean() - 0.25) <= 4.5 * np.sqrt(0.25 * 0.75 / 4000)
    assert int(median_elimination(6, tie_break="first").init(keys[0], mask).arm) == 1


@pytest.mark.parametrize(
    "name",
    [
        "median_elimination-sq-round-random",
        "median_elimination-nosq-cumulative-random",
        "median_elimination-sq-cumulative-first",
    ],
)
def test_trace_instances_exercise_rounds(name):
    runs = reference_traces(find_case(name))
    eliminated = sum(len(tr[-1][1]) < inst.num_arms for inst, tr in runs)
    several = sum(tr[-1][2] >= 2 for _, tr in runs)
    single = sum(len(tr[-1][1]) == 1 for _, tr in runs)
    no_shrink = 0  # a completed round that removed no arm (ties at the median)
    for _, tr in runs:
        for before, after in zip(tr, tr[1:], strict=False):
            no_shrink += after[2] > before[2] and len(after[1]) == len(before[1])
    assert eliminated >= 50 and several >= 50 and single >= 30, (
        eliminated,
        several,
        single,
    )
    assert no_shrink >= 5, no_shrink


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="eps"):
        median_elimination(3, eps=0.0)
    with pytest.raises(ValueError, match="delta"):
        median_elimination(3, delta=1.0)
    with pytest.raises(ValueError, match="delta"):
        median_elimination(3, delta=0.0)
    with pytest.raises(ValueError, match="means"):
        median_elimination(3, means="per_round")
    with pytest.raises(ValueError, match="tie_break"):
        median_elimination(3, tie_break="last")
    with pytest.raises(ValueError, match="num_arms"):
        median_elimination(1)
