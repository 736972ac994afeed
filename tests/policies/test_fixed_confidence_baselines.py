"""Unit tests of the fixed-confidence baselines of 2019-2023 (EB-TC / EB-TCε, ...):
argument errors and the pieces with a closed form."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
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


def test_fws_game_direction_solves_the_linear_program():
    """The FW direction's matrix game ``max_z min_{j in rows} z_* a_j + z_j b_j - c_j``
    (:func:`jbandits.policies.fixed_confidence.fws.game_direction`) reaches the value
    that SciPy's LP solver finds, on random games with 2-6 rows of 8 arms."""
    from scipy.optimize import linprog

    from jbandits.policies.fixed_confidence import fws

    rng = np.random.default_rng(3)
    for _ in range(40):
        k = 8
        rows = np.zeros(k, bool)
        rows[1 + rng.choice(k - 1, size=int(rng.integers(2, 7)), replace=False)] = True
        a, b = rng.uniform(0.01, 2.0, k), rng.uniform(0.01, 2.0, k)
        c = rng.uniform(0.0, 0.5, k)
        z_rows, z_star = fws.game_direction(
            jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32),
            jnp.asarray(c, jnp.float32), jnp.asarray(rows),
        )  # fmt: skip
        z = np.asarray(z_rows, float)
        got = min(
            float(z_star) * a[j] + z[j] * b[j] - c[j] for j in np.flatnonzero(rows)
        )
        # variables (z_0 = z_*, z_1..z_{k-1}, w): maximise w
        idx = np.flatnonzero(rows)
        a_ub = np.zeros((idx.size, k + 1))
        for r, j in enumerate(idx):
            a_ub[r, 0], a_ub[r, j], a_ub[r, k] = -a[j], -b[j], 1.0
        lp = linprog(
            np.r_[np.zeros(k), -1.0], A_ub=a_ub, b_ub=-c[idx],
            A_eq=np.r_[np.ones(k), 0.0][None, :], b_eq=[1.0],
            bounds=[(0, 1)] * k + [(None, None)],
        )  # fmt: skip
        assert lp.success
        assert got == pytest.approx(-lp.fun, abs=2e-5)
        assert abs(float(z_star) + z.sum() - 1.0) < 1e-5 and np.all(z >= 0)


def test_fws_is_square():
    from jbandits.policies.fixed_confidence import fws

    n = jnp.arange(0, 20000, dtype=jnp.int32)
    root = np.floor(np.sqrt(np.arange(20000)))
    assert np.array_equal(np.asarray(fws.is_square(n)), root * root == np.arange(20000))
