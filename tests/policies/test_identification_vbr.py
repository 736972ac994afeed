"""VBR_provisional: two initial round-robin passes, SR phases, validation."""

import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.policies.identification import sr_schedule, vbr_provisional


def test_two_initial_round_robin_passes_and_sr_phase_ends():
    rng = np.random.default_rng(1)
    table = rng.normal(0.0, 1.0, (5, 200)) + np.arange(5)[:, None] * 2.0
    arms, out, pulls = play(vbr_provisional(5, budget=200), table, 200)
    np.testing.assert_array_equal(arms[:10], np.tile(np.arange(5), 2))
    assert pulls.sum() == int(sr_schedule(5, 200).ends[-1])
    assert int(out) == 4


def test_zero_gamma_is_pure_tie_first():
    # gamma = 0: all widths tie -> lowest active index; rejection by lowest mean
    arms, out, _ = play(vbr_provisional(3, gamma=0.0, budget=30), ladder(3, 30), 30)
    assert int(out) == 2


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="gamma"):
        vbr_provisional(4, gamma=-1.0, budget=40)


def test_registered_as_provisional():
    assert jbandits.core.registry.factory("vbr_provisional") is vbr_provisional
    assert "vbr" not in jbandits.names()
