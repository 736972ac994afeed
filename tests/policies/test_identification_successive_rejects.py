"""Successive Rejects: TV-3 schedules, hand-checked runs, validation."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.policies.blocks import schedules
from jbandits.policies.identification import sr_schedule, successive_rejects


@pytest.mark.parametrize(
    ("k", "t", "per_arm", "ends"),
    [
        (5, 100, [11, 14, 18, 27], [55, 67, 79, 97]),
        (
            10,
            1000,
            [41, 46, 51, 59, 68, 82, 102, 136, 204],
            [410, 455, 495, 551, 605, 675, 755, 857, 993],
        ),
        (
            8,
            1871,
            [105, 120, 140, 168, 210, 280, 420],
            [840, 945, 1065, 1205, 1373, 1583, 1863],
        ),
    ],
)
def test_tv3_schedules(k, t, per_arm, ends):
    sched = sr_schedule(k, t)
    np.testing.assert_array_equal(sched.per_arm, per_arm)
    np.testing.assert_array_equal(sched.ends, ends)
    assert int(sched.num_phases) == k - 1


def test_tv3_float_evaluation_is_off_by_one_but_schedule_is_exact():
    logbar = 0.5 + sum(1.0 / i for i in range(2, 9))
    assert math.ceil((1871 - 8) / (logbar * 8)) == 106  # the float trap
    assert int(sr_schedule(8, 1871).per_arm[0]) == 105


def test_tv3_four_phases_end_on_one_step():
    sched = sr_schedule(100, 10_000)
    np.testing.assert_array_equal(sched.per_arm[:5], [22, 22, 22, 22, 23])
    assert (sched.ends[:4] == 2200).all() and sched.ends[4] > 2200


def test_k5_t100_pull_counts_phase_ends_and_idle_steps():
    arms, out, pulls = play(successive_rejects(5, budget=100), ladder(5, 100), 100)
    # arms 0, 1, 2, 3 are rejected in order after 11, 14, 18, 27 pulls; arm 4 has 27
    np.testing.assert_array_equal(pulls, [11, 14, 18, 27, 27])
    assert (arms[97:] == -1).all() and (arms[:97] >= 0).all()  # 3 idle steps
    assert int(out) == 4
    # phase 1 is index-order round robin
    np.testing.assert_array_equal(arms[:10], [0, 1, 2, 3, 4, 0, 1, 2, 3, 4])


def test_all_phases_ending_on_one_step():
    # K = 8, T = 10: every n_k = 1, so all 7 phases end at step 8 (7 rejections at once)
    sched = sr_schedule(8, 10)
    assert (sched.ends == 8).all()
    table = ladder(8, 10)[::-1]  # arm 0 is the best
    arms, out, pulls = play(successive_rejects(8, budget=10), table, 10)
    np.testing.assert_array_equal(arms, [0, 1, 2, 3, 4, 5, 6, 7, -1, -1])
    assert int(out) == 0


def test_ties_reject_lowest_index():
    arms, out, _ = play(successive_rejects(3, budget=30), np.zeros((3, 30)), 30)
    assert int(out) == 2  # arms 0 then 1 rejected on exact ties


def test_padding_with_schedule_for_real_k():
    mask = np.array([False, True, False, True, True, False])
    table = np.zeros((6, 50))
    table[mask] = ladder(3, 50)[::-1]  # real arm 1 (first real) is the best
    policy = successive_rejects(6, schedule=sr_schedule(3, 50, size=5))
    arms, out, pulls = play(policy, table, 50, arm_mask=mask)
    assert int(out) == 1 and (pulls[~mask] == 0).all()
    assert pulls.sum() == int(sr_schedule(3, 50).ends[-1])


def test_schedule_for_wrong_k_idles_with_output_minus_one():
    mask = np.array([True, True, True, False])
    policy = successive_rejects(4, schedule=sr_schedule(4, 40))
    arms, out, pulls = play(policy, np.ones((4, 40)), 40, arm_mask=mask)
    assert (arms == -1).all() and int(out) == -1 and pulls.sum() == 0


def test_budget_too_small_for_the_real_k_idles():
    # a concrete budget builds every real K's schedule: T = 5 has none for K = 5
    raw = jbandits.core.registry.raw_factory("successive_rejects")  # no entry checks
    arms, out, pulls = play(raw(5, budget=5), np.ones((5, 5)), 5)
    assert (arms == -1).all() and int(out) == -1 and pulls.sum() == 0


def test_never_exceeds_budget():  # TV-9
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 40))
        t = int(rng.integers(k + 1, 5000))
        sched = sr_schedule(k, t)
        assert sched.ends[-1] <= t
        assert sched.per_arm[:-1].sum() + 2 * sched.per_arm[-1] == sched.ends[-1]


def test_traced_schedule_under_jit():
    sched = sr_schedule(5, 100)

    @jax.jit
    def first_arm(per_arm, ends, num, k_real):
        pol = successive_rejects(
            5, schedule=schedules.PhaseSchedule(per_arm, ends, num, k_real)
        )
        return pol.init(jax.random.key(0), jnp.ones(5, bool)).arm

    assert int(first_arm(*sched)) == 0


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="budget"):
        sr_schedule(5, 5)
    with pytest.raises(ValueError, match="budget"):
        successive_rejects(5)
    with pytest.raises(ValueError, match="num_arms"):
        successive_rejects(1, budget=10)
    with pytest.raises(ValueError, match="schedule"):
        successive_rejects(5, budget=50, schedule=sr_schedule(5, 100))
    with pytest.raises(ValueError, match="budget"):
        jax.jit(
            lambda b: (
                successive_rejects(5, budget=b)
                .init(jax.random.key(0), jnp.ones(5, bool))
                .arm
            )
        )(100)


def test_registered():
    assert (
        jbandits.core.registry.factory("successive_rejects") is successive_rejects
    )
