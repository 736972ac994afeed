"""UCB1 unit tests (spec §2.2): hand-computed decisions and index values."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import rollout

from jbandits.policies.blocks import arms
from jbandits.policies.regret import ucb1
from jbandits.policies.regret.ucb import ucb1_index


def test_hand_sequence():
    """Arm 0 pays 1, arm 1 pays 0. With z_1 = 1, arm 1 comes back at the first n with
    sqrt(2 ln n) > 1 + sqrt(2 ln n / (n - 1)): n = 5 gives 1.794 < 1.897, n = 6 gives
    1.893 > 1.847."""
    table = np.array([[1.0] * 20, [0.0] * 20])
    pulled, _, _ = rollout(ucb1(2), table, 7)
    assert pulled.tolist() == [0, 1, 0, 0, 0, 0, 1]


def test_index_values():
    stats = arms.ArmStats(
        counts=jnp.array([1.0, 4.0, 0.0]),
        sums=jnp.array([0.5, 3.0, 0.0]),
        m2=jnp.zeros(3),
    )
    got = np.asarray(ucb1_index(stats, 5, 2.0))
    want = [
        0.5 + math.sqrt(2 * math.log(5)),
        0.75 + math.sqrt(2 * math.log(5) / 4),
        math.sqrt(2 * math.log(5)),
    ]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert np.isfinite(got).all()  # z = 0 is guarded by max(z, 1)


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="alpha"):
        ucb1(3, alpha=-1.0)
    with pytest.raises(ValueError, match="tie_break"):
        ucb1(3, tie_break="best")
    with pytest.raises(ValueError, match="num_arms"):
        ucb1(1)
