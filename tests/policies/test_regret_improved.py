"""UCB-Improved unit tests: spec §2.6 schedule oracles (§8 item 2), hand checks."""

from __future__ import annotations

import math

import jax
import numpy as np
import pytest
from _regret_util import find_case, reference_traces, rollout

from jbandits.policies.regret import ucb_improved, ucb_improved_schedule

ORACLES = [
    (60_000, 7, [23, 77, 264, 876, 2_794, 8_337, 21_991, 42_535]),
    (300_000, 8, [26, 90, 315, 1_082, 3_618, 11_633, 35_175, 95_273, 199_385]),
]


@pytest.mark.parametrize("horizon, cap, targets", ORACLES)
def test_schedule_oracles(horizon, cap, targets):
    sched = ucb_improved_schedule(horizon)
    assert sched.cap == cap
    assert sched.targets[:-1].tolist() == targets
    assert sched.targets[-1] == math.inf and sched.widths[-1] == 0.0
    # w_m = sqrt(ln(T D^2) / (2 n_m)) ~ D_m / 2 (spec: 0.489, 0.250, 0.125, ...)
    deltas = 2.0 ** -np.arange(cap + 1)
    if horizon == 60_000:
        np.testing.assert_allclose(sched.widths[:3], [0.489, 0.250, 0.125], atol=1e-3)
    np.testing.assert_allclose(sched.widths[:-1], deltas / 2, rtol=0.03)


def test_targets_strictly_increase_for_every_horizon():
    for horizon in list(range(1, 400)) + [10**4, 10**5, 10**6, 10**7]:
        t = ucb_improved_schedule(horizon).targets[:-1]
        assert (np.diff(t) > 0).all(), horizon
        logs = [math.log(horizon * 4.0**-m) for m in range(len(t))]
        if horizon >= 3:  # ln(T D_m^2) >= 1 for m <= M (spec §2.6 edge cases)
            assert min(logs) >= 1.0, horizon


def test_hand_round_zero_elimination():
    """T = 8: M = 0, n_0 = ceil(2 ln 8) = 5, w_0 = sqrt(ln 8 / 10) ~ 0.456.

    Arm 0 pays 1, arm 1 pays 0, arm 2 pays 0.5: after 5 pulls each, arm 1
    (0 + w < 1 - w) goes, arm 2 (0.5 + w >= 1 - w) stays; rounds are then
    exhausted, so the greedy arm 0 is pulled from then on.
    """
    sched = ucb_improved_schedule(8)
    assert sched.cap == 0 and sched.targets[0] == 5
    table = np.array([[1.0] * 40, [0.0] * 40, [0.5] * 40])
    arms, states, final = rollout(
        ucb_improved(3, horizon=8, tie_break="first"), table, 30
    )
    assert arms[:15].tolist() == [0, 1, 2] * 5
    assert (arms[15:] == 0).all()
    assert np.asarray(final.active).tolist() == [True, False, True]
    assert int(final.m) == 1 and int(np.asarray(states.m)[14]) == 1
    assert int(np.asarray(states.m)[13]) == 0


def test_single_survivor_pulled_until_the_end():
    # T = 100: M = 2, n = 10, 26, 59; w_0 ~ 0.48 -> a 0/1 gap eliminates at round 0
    table = np.array([[0.0] * 100, [1.0] * 100])
    arms, _, final = rollout(ucb_improved(2, horizon=100), table, 100)
    assert sorted(arms[:20].tolist()) == [0] * 10 + [1] * 10
    assert (arms[20:] == 1).all()
    assert int(final.m) == 1 and np.asarray(final.active).tolist() == [False, True]


def test_forced_pulls_then_least_pulled_with_padding():
    mask = np.array([True, False, True, True, False])
    table = np.full((5, 60), 0.5)
    arms, _, _ = rollout(
        ucb_improved(5, horizon=100), table, 30, mask, key=jax.random.key(4)
    )
    assert arms[:3].tolist() == [0, 2, 3]
    assert mask[arms].all()
    counts = np.bincount(arms, minlength=5)
    assert counts.max() - counts[mask].min() <= 1  # least-pulled keeps them level


@pytest.mark.parametrize(
    "name",
    [
        "ucb_improved-T8-random",
        "ucb_improved-T20-first",
        "ucb_improved-T20-random",
        "ucb_improved-T100-random",
    ],
)
def test_trace_instances_exercise_rounds_and_eliminations(name):
    case = find_case(name)
    runs = reference_traces(case)
    eliminated = sum(len(tr[-1][1]) < inst.num_arms for inst, tr in runs)
    rounds = sum(tr[-1][2] >= 1 for _, tr in runs)
    assert eliminated >= 10 and rounds >= 50, (eliminated, rounds)
    if "T100" not in name:  # rounds exhausted: the greedy branch runs
        cap = ucb_improved_schedule(int(name.split("-T")[1].split("-")[0])).cap
        exhausted = sum(tr[-1][2] == cap + 1 and len(tr[-1][1]) > 1 for _, tr in runs)
        assert exhausted >= 10, exhausted


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="horizon"):
        ucb_improved(3, horizon=10.0)
    with pytest.raises(ValueError, match="horizon"):
        ucb_improved(3, horizon=0)
    with pytest.raises(ValueError, match="tie_break"):
        ucb_improved(3, horizon=10, tie_break="x")
    with pytest.raises(ValueError, match="num_arms"):
        ucb_improved(1, horizon=10)
