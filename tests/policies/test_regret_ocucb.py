"""OCUCB (2015) unit tests (spec §2.5): index values, t = n + 1, validation."""

from __future__ import annotations

import math

import jax.numpy as jnp
import numpy as np
import pytest
from _regret_util import rollout

from jbandits.policies.blocks import arms
from jbandits.policies.regret import ocucb
from jbandits.policies.regret.ocucb import ocucb_index


def test_index_values():
    stats = arms.ArmStats(jnp.array([1.0, 3.0]), jnp.array([1.0, 1.5]), jnp.zeros(2))
    got = np.asarray(ocucb_index(stats, 4, 100.0, 3.0, 2.0))
    log_term = math.log(2 * 100 / 5)  # t = n + 1 = 5
    want = [1.0 + math.sqrt(3 * log_term), 0.5 + math.sqrt(3 / 3 * log_term)]
    np.testing.assert_allclose(got, want, rtol=1e-6)
    # past psi T the log is clamped at 0 (NaN-free)
    assert np.asarray(ocucb_index(stats, 500, 100.0, 3.0, 2.0)).tolist() == [1.0, 0.5]


def test_hand_sequence():
    """Arm 0 pays 1, arm 1 pays 0, T = 10, alpha = 3, psi = 2, l = ln(20 / (n + 1)).
    With z_1 = 1, arm 1 is pulled at n when sqrt(3 l) > 1 + sqrt(3 l / (n - 1)); the
    left side is 2.39, 2.20, 2.04, 1.90, ... and the right side 3.39, 2.55, 2.18,
    1.95, ...: arm 1 never comes back within T."""
    table = np.array([[1.0] * 20, [0.0] * 20])
    pulled, _, _ = rollout(ocucb(2, horizon=10), table, 10)
    assert pulled.tolist() == [0, 1] + [0] * 8
    pulled, _, _ = rollout(ocucb(2, horizon=10, alpha=20.0), table, 4)
    # alpha = 20, n = 2: sqrt(20 l) = 6.16 vs 1 + 6.16 / sqrt(1) -> arm 0; n = 3:
    # l = ln 5: 1 + sqrt(20 l / 2) = 5.01 < sqrt(20 l) = 5.67 -> arm 1
    assert pulled.tolist() == [0, 1, 0, 1]


def test_validation_names_the_argument():
    with pytest.raises(ValueError, match="psi"):
        ocucb(3, horizon=10, psi=0.5)
    with pytest.raises(ValueError, match="alpha"):
        ocucb(3, horizon=10, alpha=-1.0)
    with pytest.raises(ValueError, match="horizon"):
        ocucb(3, horizon=0)
    with pytest.raises(TypeError, match="horizon"):
        ocucb(3)
