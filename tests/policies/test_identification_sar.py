"""SAR: hand-checked top-m runs, forced decisions (AMB-21), validation."""

import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.policies.identification import sar, sr_schedule


@pytest.mark.parametrize("m", [1, 2, 3, 4])
def test_identifies_top_m_on_deterministic_rewards(m):
    arms, out, pulls = play(sar(5, m=m, budget=100), ladder(5, 100), 100)
    np.testing.assert_array_equal(out, np.arange(5) >= 5 - m)
    assert out.sum() == m and pulls.sum() <= 100


def test_accepting_an_extreme_arm_stops_its_pulls():
    # means .4, .45, .5, .9, 1.2 with m = 2: after phase 1 arm 4's gap 1.2 - .5 = .7
    # beats arm 0's .9 - .4 = .5, so arm 4 is accepted and never pulled again; then
    # arms 0, 1 are rejected, arms 2, 3 tie (.4) -> arm 2 rejected, arm 3 forced in.
    table = np.repeat(np.array([[0.4], [0.45], [0.5], [0.9], [1.2]]), 100, axis=1)
    arms, out, pulls = play(sar(5, m=2, budget=100), table, 100)
    n_1 = int(sr_schedule(5, 100).per_arm[0])
    assert pulls[4] == n_1
    np.testing.assert_array_equal(out, [False, False, False, True, True])


def test_forced_accept_all_when_m_rem_equals_active():
    # K = 4, m = 2, means -1, 0, .5, .5. Phase 1: arm 0's reject gap .5 + 1 wins.
    # Phase 2 (arms 1, 2, 3): gaps .5 (accept arm 2), .5 (accept arm 3), .5 (reject
    # arm 1): tie -> lowest index, arm 1 rejected; m_rem = 2 = #active, so arms 2, 3
    # are accepted at once (AMB-21) and phase 3 is idle.
    table = np.repeat(np.array([[-1.0], [0.0], [0.5], [0.5]]), 40, axis=1)
    arms, out, pulls = play(sar(4, m=2, budget=40), table, 40)
    sched = sr_schedule(4, 40)
    assert pulls.sum() == int(sched.ends[1]) < int(sched.ends[2])
    np.testing.assert_array_equal(out, [False, False, True, True])


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="m"):
        sar(4, m=0, budget=40)
    with pytest.raises(ValueError, match="m"):
        sar(4, m=4, budget=40)


def test_registered():
    assert jbandits.core.registry.factory("sar") is sar
