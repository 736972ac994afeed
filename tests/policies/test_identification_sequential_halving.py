"""Sequential Halving (both variants): TV-5 schedules and per-stage counts."""

import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.policies.identification import halving_schedule, sequential_halving


def _stage_counts(arms, ends, k):
    out, start = [], 0
    for end in ends:
        seg = arms[start:end]
        out.append(np.bincount(seg[seg >= 0], minlength=k))
        start = end
    return out


@pytest.mark.parametrize(
    ("k", "t", "sizes", "per_arm", "used"),
    [(8, 200, [8, 4, 2], [8, 16, 33], 194), (5, 100, [5, 3, 2], [6, 11, 16], 95)],
)
def test_tv5_karnin(k, t, sizes, per_arm, used):
    sched = halving_schedule(k, t, variant="karnin")
    np.testing.assert_array_equal(sched.sizes, sizes)
    np.testing.assert_array_equal(sched.per_arm, per_arm)
    arms, out, pulls = play(
        sequential_halving(k, budget=t, variant="karnin"), ladder(k, t), t
    )
    assert pulls.sum() == used and (arms[used:] == -1).all() and int(out) == k - 1
    for counts, size, t_r in zip(
        _stage_counts(arms, sched.ends, k), sizes, per_arm, strict=True
    ):
        assert sorted(counts[counts > 0]) == [t_r] * size


def test_tv5_karnin_k64():
    sched = halving_schedule(64, 5000, variant="karnin")
    np.testing.assert_array_equal(sched.per_arm, [13, 26, 52, 104, 208, 416])


@pytest.mark.parametrize(
    ("k", "t", "counts"),
    [
        (8, 200, [[9, 9, 8, 8, 8, 8, 8, 8], [17, 17, 16, 16], [33, 33]]),
        (6, 50, [[3, 3, 3, 3, 2, 2], [6, 5, 5], [8, 8]]),
    ],
)
def test_tv5_equal_stages_counts_and_idle(k, t, counts):
    sched = halving_schedule(k, t)  # default variant="equal_stages"
    arms, out, pulls = play(sequential_halving(k, budget=t), ladder(k, t), t)
    stages = _stage_counts(arms, sched.ends, k)
    for got, want in zip(stages, counts, strict=True):
        np.testing.assert_array_equal(got[got > 0], want)
    assert (arms[-2:] == -1).all() and (arms[:-2] >= 0).all()  # 2 idle steps
    assert int(out) == k - 1


def test_tv5_equal_stages_k64_first_arm_gets_one_more():
    sched = halving_schedule(64, 5000)
    assert int(sched.ends[0]) == 833  # n_s = 833 = 64 * 13 + 1


def test_stage_local_means_decide():  # AMB-15
    # arm 0 is great in stage 1 only; arm 1 is better in stage 2 (stage-local)
    table = np.zeros((4, 40))
    table[0, :4] = 1.0  # stage 1: arm 0 pulls 0..3 -> mean 1
    table[1, :4] = 0.9
    table[1, 4:] = 0.5  # stage 2: arm 1 -> 0.5 vs arm 0 -> 0
    arms, out, _ = play(sequential_halving(4, budget=16), table, 16)
    assert int(out) == 1


def test_ties_keep_lowest_index():
    arms, out, _ = play(sequential_halving(5, budget=30), np.zeros((5, 30)), 30)
    assert int(out) == 0


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="variant"):
        sequential_halving(4, budget=40, variant="cumulative")
    with pytest.raises(ValueError, match="budget"):
        halving_schedule(8, 23)  # needs K ceil(log2 K) = 24
    with pytest.raises(ValueError, match="budget"):
        sequential_halving(8)


def test_registered():
    assert (
        jbandits.core.registry.factory("sequential_halving") is sequential_halving
    )


def test_the_old_variant_name_s004_is_an_unknown_variant():
    """The name of "equal_stages" before 0.2.0, "s004", is no longer recognised
    (0.3.0): the usual error listing the variants, from every way in (the schedule,
    the factory, ``make``)."""
    new = r"variant must be one of \('equal_stages', 'karnin'\), got 's004'"
    with pytest.raises(ValueError, match=new):
        halving_schedule(8, 200, variant="s004")
    with pytest.raises(ValueError, match=new):
        sequential_halving(8, budget=200, variant="s004")
    with pytest.raises(ValueError, match=new):
        jbandits.make("sequential_halving", num_arms=8, budget=200, variant="s004")


def test_factory_warnings_point_at_the_callers_line():
    """A policy's warning names the user's line, not the library frame that built
    the policy (``make`` -> registry -> structure -> factory)."""
    with pytest.warns(UserWarning, match="Theorem 1") as caught:
        jbandits.make("eucbv", num_arms=10, horizon=100)
    assert caught[0].filename == __file__
