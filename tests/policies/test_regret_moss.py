"""MOSS unit tests (spec §2.4): horizon and anytime forms, the clamp at 0."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _regret_util import rollout
from harness import arm_stats

from jbandits.policies.regret import moss
from jbandits.policies.regret.moss import moss_index

_stats = arm_stats  # (counts, sums), float32


def test_index_values_and_clamp():
    stats = _stats([1, 4, 8, 9], [0.5, 2.0, 4.0, 4.5])
    got = np.asarray(moss_index(stats, 16.0, 2, 1.0))
    # ln(16 / (2 z)): z = 1 -> ln 8; z = 4 -> ln 2; z = 8 -> 0; z = 9 -> < 0, clamped
    want = [0.5 + math.sqrt(math.log(8)), 0.5 + math.sqrt(math.log(2) / 4), 0.5, 0.5]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got[2] == got[3] == 0.5  # exact tie once z >= T / K


def test_horizon_form_goes_greedy_after_t_over_k_pulls():
    """T = 8, K = 2: once both arms have z >= 4 the bonus is exactly 0."""
    table = np.array([[0.0, 1.0] * 10, [0.5] * 20])
    pulled, _, _ = rollout(moss(2, horizon=8, tie_break="first"), table, 12)
    counts = np.bincount(pulled[:8], minlength=2)
    assert counts.tolist() == [4, 4]
    # means after 8 pulls: arm 0 (0, 1, 0, 1) = .5 = arm 1 -> exact tie -> arm 0
    assert pulled[8] == 0


def test_anytime_form_differs_from_horizon_form():
    table = np.array([[1.0] * 30, [0.6] * 30])
    horizon, _, _ = rollout(moss(2, horizon=1000), table, 30)
    anytime, _, _ = rollout(moss(2, anytime=True), table, 30)
    # the anytime bonus is smaller early on (t < T), so it exploits arm 0 more
    assert (anytime == 0).sum() > (horizon == 0).sum()


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="horizon"):
        moss(3)
    with pytest.raises(ValueError, match="horizon"):
        moss(3, horizon=0.5)
    with pytest.raises(ValueError, match="alpha"):
        moss(3, horizon=10, alpha=-1.0)
    with pytest.raises(ValueError, match="tie_break"):
        moss(3, anytime=True, tie_break="?")
    moss(3, anytime=True)  # no horizon needed
