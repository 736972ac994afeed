"""SHVar: TV-9 properties (equal sigma == SH; integer lambda -> exact allocation)."""

import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.policies.identification import halving_schedule, sequential_halving, shvar


@pytest.mark.parametrize("seed", range(5))
def test_equal_variances_is_sh_pull_for_pull(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(2, 12))
    t = int(rng.integers(k * 4, 300))
    table = (rng.random((k, t)) < rng.uniform(0.2, 0.8, (k, 1))).astype(float)
    sigma2 = np.full(k, rng.uniform(0.1, 2.0))
    a_sh, o_sh, _ = play(sequential_halving(k, budget=t), table, t)
    a_var, o_var, _ = play(shvar(k, variances=sigma2, budget=t), table, t)
    np.testing.assert_array_equal(a_sh, a_var)
    assert int(o_sh) == int(o_var)


def test_all_zero_variances_round_robin():
    a_sh, _, _ = play(sequential_halving(5, budget=60), ladder(5, 60), 60)
    a_var, _, _ = play(shvar(5, variances=np.zeros(5), budget=60), ladder(5, 60), 60)
    np.testing.assert_array_equal(a_sh, a_var)


def test_integer_lambda_gives_exact_allocation():
    # K = 4, T = 48: n_s = 24. Stage 1: lambda = 24 * [1, 1, 2, 4] / 8 = [3, 3, 6, 12].
    # Arms 2, 3 survive (best means); stage 2: 24 * [2, 4] / 6 = [8, 16].
    sigma2 = np.array([1.0, 1.0, 2.0, 4.0])
    arms, out, _ = play(shvar(4, variances=sigma2, budget=48), ladder(4, 48), 48)
    sched = halving_schedule(4, 48)
    s1 = np.bincount(arms[: sched.ends[0]], minlength=4)
    s2 = np.bincount(arms[sched.ends[0] : sched.ends[1]], minlength=4)
    np.testing.assert_array_equal(s1, [3, 3, 6, 12])
    np.testing.assert_array_equal(s2, [0, 0, 8, 16])
    assert int(out) == 3


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="variances"):
        shvar(4, variances=np.array([1.0, -1.0, 1.0, 1.0]), budget=40)
    with pytest.raises(ValueError, match="variances"):
        shvar(4, variances=np.ones(3), budget=40)


def test_registered():
    assert jbandits.core.registry.factory("shvar") is shvar
