"""S004 §5.1 Gaussian bandit instances (jbandits.envs.problems.shvar_gaussian)."""

import numpy as np
import pytest

from jbandits.envs import problems


def test_base_instance_matches_the_paper_formulas():
    means, var = problems.shvar_base(4)
    np.testing.assert_allclose(
        means, [1.0, 1 - np.sqrt(0.25), 1 - np.sqrt(0.5), 1 - np.sqrt(0.75)]
    )
    # 1-based i: arms 2 and 4 are even -> 0.9 mu^2 + 0.1; arms 1 and 3 -> 0.1
    np.testing.assert_allclose(
        var, [0.1, 0.9 * 0.25 + 0.1, 0.1, 0.9 * means[3] ** 2 + 0.1]
    )
    _, flipped = problems.shvar_base(4, parity="zero_based")
    np.testing.assert_allclose(flipped, [1.0, 0.1, 0.9 * means[2] ** 2 + 0.1, 0.1])


def test_perturbations_per_instance_have_the_stated_laws():
    n, k = 20_000, 8
    prob = problems.shvar_gaussian(k, n, seed=3)
    means, var = problems.shvar_base(k)
    assert prob.means.shape == prob.stds.shape == (n, k)
    noise = prob.means - means
    # N(0, 0.05^2): mean within 5 SE of 0, std within 3% of 0.05
    assert abs(noise.mean()) < 5 * 0.05 / np.sqrt(n * k)
    assert abs(noise.std() / 0.05 - 1) < 0.03
    ratio = prob.stds**2 / var  # U(0.5, 1.5)
    assert ratio.min() >= 0.5 and ratio.max() <= 1.5
    assert abs(ratio.mean() - 1.0) < 5 * np.sqrt(1 / 12) / np.sqrt(n * k)
    # instances differ; the same seed reproduces them
    assert not np.allclose(prob.means[0], prob.means[1])
    np.testing.assert_array_equal(
        prob.means, problems.shvar_gaussian(k, n, seed=3).means
    )


def test_unperturbed_and_validation():
    prob = problems.shvar_gaussian(6, 2, perturb=False)
    np.testing.assert_allclose(prob.means[1], problems.shvar_base(6)[0])
    with pytest.raises(ValueError, match="num_arms"):
        problems.shvar_base(1)
    with pytest.raises(ValueError, match="parity"):
        problems.shvar_base(4, parity="odd")
    with pytest.raises(ValueError, match="num_instances"):
        problems.shvar_gaussian(4, 0)
