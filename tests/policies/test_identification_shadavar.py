"""SHAdaVar: TV-6 constants, the round-robin prefix, validation."""

import math

import numpy as np
import pytest
from _identification_util import play

import jbandits
from jbandits.policies.identification import halving_schedule, shadavar
from jbandits.policies.identification.shadavar import shadavar_denominator, shadavar_n0


def test_tv6_constants():
    assert 4 * math.log(20) + 1 == pytest.approx(12.982929, abs=5e-7)
    assert int(shadavar_n0(0.05)) == 13
    den = np.asarray(shadavar_denominator(0.05, np.array([12.0, 13.0, 14.0, 20.0])))
    np.testing.assert_allclose(
        den, [-0.043723, 0.000712, 0.039915, 0.205846], atol=5e-7
    )


@pytest.mark.parametrize("delta", [0.05, 0.2, 0.5, 0.9])
def test_n0_is_smallest_integer_above_4_log(delta):
    n0 = int(shadavar_n0(delta))
    assert n0 - 1 > 4 * math.log(1 / delta) >= n0 - 2


def test_k64_t5000_one_adaptive_step_in_stage_one():
    rng = np.random.default_rng(0)
    table = rng.normal(
        rng.uniform(0, 1, (64, 1)), rng.uniform(0.1, 1, (64, 1)), (64, 5000)
    )
    arms, _, _ = play(shadavar(64, budget=5000), table, 5000)
    end = int(halving_schedule(64, 5000).ends[0])
    assert end == 833
    np.testing.assert_array_equal(arms[:832], np.tile(np.arange(64), 13))
    counts = np.bincount(arms[:end], minlength=64)
    assert sorted(counts) == [13] * 63 + [14]


def test_validation_names_the_argument():
    for bad in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            shadavar(4, delta=bad, budget=40)


def test_registered():
    assert jbandits.core.registry.factory("shadavar") is shadavar
