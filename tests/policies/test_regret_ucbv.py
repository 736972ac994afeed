"""UCB-V unit tests (spec §2.3): linear term at z = 1, variance term, validation."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import rollout

from jbandits.policies.blocks import arms
from jbandits.policies.regret import ucbv
from jbandits.policies.regret.ucbv import ucbv_index


def test_hand_sequence():
    """Arm 0 pays 1, arm 1 pays 0; v = 0, so only the linear term 3 E / z explores.
    n = 2: E = 1.2 ln 3, 1 + 3E > 3E -> arm 0. n = 3: E = 1.2 ln 4,
    1 + 3E / 2 = 3.50 < 3E = 4.99 -> arm 1."""
    table = np.array([[1.0] * 20, [0.0] * 20])
    pulled, _, _ = rollout(ucbv(2), table, 4)
    assert pulled.tolist() == [0, 1, 0, 1]


def test_index_values_with_variance():
    # arm 0 saw (1, 0): mean .5, biased variance .25; arm 1 saw (1): variance 0
    stats = arms.init_stats(2)
    for arm, reward in ((0, 1.0), (0, 0.0), (1, 1.0)):
        stats = arms.update(stats, arm, reward)
    e = 1.2 * math.log(4)
    want = [0.5 + math.sqrt(2 * 0.25 * e / 2) + 3 * e / 2, 1.0 + 3 * e]
    np.testing.assert_allclose(
        np.asarray(ucbv_index(stats, 3, 1.2, 1.0, 1.0)), want, rtol=1e-6
    )
    # paper preset zeta = 1, c = 1/3, b = 2
    e = math.log(4)
    want0 = 0.5 + math.sqrt(2 * 0.25 * e / 2) + (1 / 3) * 3 * 2 * e / 2
    got = float(ucbv_index(stats, 3, 1.0, 1 / 3, 2.0)[0])
    assert abs(got - want0) < 1e-6


def test_validation_names_the_argument():
    for name, value in (("zeta", -0.1), ("c", -1.0), ("b", 0.0)):
        with pytest.raises(ValueError, match=name):
            ucbv(3, **{name: value})
    with pytest.raises(ValueError, match="tie_break"):
        ucbv(3, tie_break="?")
    assert jnp.isfinite(ucbv_index(arms.init_stats(3), 0, 1.2, 1.0, 1.0)).all()
