"""GapE and GapE-V (spec §5.7, §5.8): gaps, indices, oracle tuning, runs, validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from harness import arm_stats, play_table

from jbandits.analysis import truth
from jbandits.analysis.oracles import gape_oracle_params, gape_v_oracle_params
from jbandits.policies.identification.gape import empirical_gaps, gape, gape_index
from jbandits.policies.identification.gape_v import gape_v, gape_v_index


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _stats(means, counts, m2=None):
    return arm_stats(counts, means=means, m2=m2, dtype=jnp.float64)


def test_empirical_gaps():
    mask = jnp.ones(3, bool)
    gaps = empirical_gaps(_stats([0.25, 0.5, 0.375], [1, 1, 1]), mask)
    np.testing.assert_array_equal(gaps, [-0.25, 0.125, -0.125])
    # tied empirical best arms: both gaps are 0
    gaps = empirical_gaps(_stats([0.5, 0.5, 0.125], [1, 1, 1]), mask)
    np.testing.assert_array_equal(gaps, [0.0, 0.0, -0.375])
    # a padded arm with a huge mean is ignored
    gaps = empirical_gaps(
        _stats([0.25, 9.0, 0.5], [1, 0, 1]), jnp.asarray([True, False, True])
    )
    np.testing.assert_array_equal(np.asarray(gaps)[[0, 2]], [-0.25, 0.25])


def test_gape_index_values():
    stats = _stats([0.25, 0.5, 0.375], [4, 1, 2])
    index = gape_index(stats, jnp.ones(3, bool), 0.5, 2.0)
    expect = [
        -0.25 + 2 * math.sqrt(0.5 / 4),
        -0.125 + 2 * math.sqrt(0.5),
        -0.125 + 2 * math.sqrt(0.5 / 2),
    ]
    np.testing.assert_allclose(index, expect, rtol=1e-14)


def test_gape_v_index_values():
    # n = [2, 4], M2 = [0.5, 0.75] -> unbiased variances [0.5, 0.25]
    stats = _stats([0.5, 0.25], [2, 4], m2=[0.5, 0.75])
    index = gape_v_index(stats, jnp.ones(2, bool), 0.3, 1.5)
    expect = [
        -0.25 + math.sqrt(2 * 0.3 * 0.5 / 2) + 7 * 0.3 * 1.5 / 3,
        -0.25 + math.sqrt(2 * 0.3 * 0.25 / 4) + 7 * 0.3 * 1.5 / 9,
    ]
    np.testing.assert_allclose(index, expect, rtol=1e-14)


def test_gape_oracle_params():
    means, stds, budget = [0.7, 0.5, 0.4, 0.1], [0.1, 0.2, 0.3, 0.05], 400
    a, b = gape_oracle_params(means, stds, budget)
    b_hand = max(
        m + s * math.sqrt(math.log(budget)) for m, s in zip(means, stds, strict=True)
    )
    gaps = [0.2, 0.2, 0.3, 0.6]
    h = sum(b_hand**2 / g**2 for g in gaps)
    assert abs(b - b_hand) <= 1e-15
    assert abs(a - 16 * (budget - 4) / (h * math.log2(4))) <= 1e-12 * a
    with pytest.raises(ValueError, match="gape"):
        gape_oracle_params([0.7, 0.7, 0.1], [0.1, 0.1, 0.1], budget)


def test_gape_v_oracle_params():
    means, stds, budget = [0.7, 0.5, 0.4], [0.1, 0.2, 0.3], 300
    a, b = gape_v_oracle_params(means, stds, budget)
    gaps = np.asarray([0.2, 0.2, 0.3])
    sig = np.asarray(stds)
    h = float(np.sum((sig + np.sqrt(sig**2 + 16 / 3 * b * gaps)) ** 2 / gaps**2))
    assert abs(h - truth.hsigma_gabillon(gaps, sig, b)) <= 1e-12 * h
    assert abs(a - 16 * (budget - 6) / (h * math.log2(3))) <= 1e-12 * a
    with pytest.raises(ValueError, match="budget"):
        gape_v_oracle_params(means, stds, 5)
    with pytest.raises(ValueError, match="gape_v"):
        gape_v_oracle_params([0.5, 0.5, 0.1], stds, budget)


def test_gape_focuses_on_the_two_closest_arms():
    # deterministic: arms 1 and 2 are 0.05 apart, arm 0 is far; small a: after the
    # init, GapE pulls only arms with the smallest |gap| (1 and 2), never arm 0
    table = np.stack([np.full(40, 0.1), np.full(40, 0.8), np.full(40, 0.75)])
    res = play_table(gape(3, a=1e-4, b=1.0), table, 40)
    arms_ = np.asarray(res.arms)
    assert arms_[:3].tolist() == [0, 1, 2]
    assert set(arms_[3:].tolist()) == {1, 2}
    assert int(res.output) == 1


def test_gape_v_two_forced_passes():
    table = np.tile([0.0, 1.0], (5, 15))
    mask = np.asarray([True, True, False, True, True])
    res = play_table(gape_v(5, a=0.1, b=1.0), table, 30, arm_mask=mask)
    arms_ = np.asarray(res.arms)
    assert arms_[:8].tolist() == [0, 1, 3, 4, 0, 1, 3, 4]
    assert 2 not in arms_.tolist()


@pytest.mark.parametrize("factory", [gape, gape_v])
@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(a=0.0), "a"),
        (dict(a=-1.0), "a"),
        (dict(a=1.0, b=0.0), "b"),
        (dict(a=1.0, b=float("nan")), "b"),
        (dict(a=1.0, tie_break="x"), "tie_break"),
    ],
)
def test_invalid_arguments(factory, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        factory(4, **kwargs)
