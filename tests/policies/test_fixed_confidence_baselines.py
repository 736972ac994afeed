"""Unit tests of the fixed-confidence baselines of 2019-2023 (EB-TC / EB-TCε, ...):
argument errors and the pieces with a closed form."""

from __future__ import annotations

import jax.numpy as jnp
import pytest

import jbandits


def test_eb_tc_refuses_bad_arguments():
    with pytest.raises(ValueError, match="target"):
        jbandits.make("eb_tc", num_arms=3, target="coin")
    with pytest.raises(ValueError, match="needs family='gaussian'"):
        jbandits.make("eb_tc", num_arms=3, epsilon=0.1)
    with pytest.raises(ValueError, match="epsilon0"):
        jbandits.make("eb_tc", num_arms=3, family="gaussian", epsilon0=-0.1)
    with pytest.raises(ValueError, match="beta"):
        jbandits.make("eb_tc", num_arms=3, beta=1.0)


def test_eb_tc_ids_share_is_the_gaussian_ratio():
    """IDS's share ``N_B d(mu_B, u) / (N_B d(mu_B, u) + N_C d(mu_C, u))`` is ``N_C /
    (N_B + N_C)`` for Gaussian arms; the Bernoulli form tends to it as the means meet."""
    from jbandits.policies.fixed_confidence import eb_tc

    counts = jnp.asarray([30.0, 10.0, 5.0])
    means = jnp.asarray([0.5, 0.4999, 0.2])
    gauss = float(eb_tc.ids_share("gaussian", counts, means, 0, 1))
    bern = float(eb_tc.ids_share("bernoulli", counts, means, 0, 1))
    assert gauss == pytest.approx(10.0 / 40.0)
    assert bern == pytest.approx(10.0 / 40.0, abs=1e-3)
    far = float(eb_tc.ids_share("bernoulli", counts, means, 0, 2))
    assert 0.0 < far < 1.0 and far != pytest.approx(5.0 / 35.0, abs=1e-3)
