"""Named problem instances: S000 (AugUCB) Experiments 1-6 and S001 (LSA) Setups 1-3."""

import numpy as np
import pytest

from jbandits.analysis import oracles
from jbandits.envs import problems

EXACT = 1e-15  # one float64 rounding of the spec's arithmetic on numbers <= 1

FIRST_TEN = {
    1: [0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.65, 0.7, 0.75, 0.8],
    2: [0.2, 0.36, 0.392, 0.3984, 0.45, 0.55, 0.6016, 0.608, 0.64, 0.8],
    3: [0.1, 0.1, 0.1, 0.35, 0.45, 0.55, 0.65, 0.9, 0.9, 0.9],
    4: [0.45] * 5 + [0.55] * 5,
    5: [0.45] * 5 + [0.55] * 5,
    6: [0.45] * 5 + [0.55] * 5,
}


@pytest.mark.parametrize("number", range(1, 7))
def test_augucb_paper_means_are_exact(number):
    p = problems.augucb_experiment(number, "paper")
    assert p.means.shape == (100,) and p.stds.shape == (100,)
    np.testing.assert_allclose(p.means[:10], FIRST_TEN[number], rtol=0, atol=EXACT)
    np.testing.assert_array_equal(p.means[10:], 0.4)
    assert p.threshold == 0.5
    assert "Experiment" in p.source


@pytest.mark.parametrize("noise", problems.NOISE_MODELS)
@pytest.mark.parametrize("number", range(1, 7))
def test_augucb_s_tau_is_arms_6_to_10(number, noise):
    p = problems.augucb_experiment(number, noise)
    above = np.flatnonzero(p.means >= p.threshold)
    np.testing.assert_array_equal(above, np.arange(5, 10))


@pytest.mark.parametrize("number", range(1, 7))
def test_augucb_paper_noise_listed_values_are_variances(number):
    p = problems.augucb_experiment(number, "paper", seed=3)
    var = p.stds**2
    first = (0.5, 0.6) if number <= 4 else (0.3, 0.8)
    lo, hi = (0.38, 0.42) if number <= 4 else (0.2, 0.3)
    np.testing.assert_allclose(var[:5], first[0], rtol=1e-15)
    np.testing.assert_allclose(var[5:10], first[1], rtol=1e-15)
    # sqrt then square: relative error of a few ulps
    assert np.all(var[10:] >= lo * (1 - 1e-15)) and np.all(var[10:] <= hi * (1 + 1e-15))


@pytest.mark.parametrize("number", range(1, 7))
def test_augucb_authors_code_listed_values_are_standard_deviations(number):
    p = problems.augucb_experiment(number, "authors_code", seed=3)
    _, listed = problems.augucb_listed_values(number, ranges="authors_code", seed=3)
    np.testing.assert_array_equal(p.stds, listed)
    first = (0.5, 0.6) if number <= 4 else (0.3, 0.8)
    lo, hi = (0.3, 0.4) if number <= 4 else (0.2, 0.3)
    np.testing.assert_array_equal(p.stds[:5], first[0])
    np.testing.assert_array_equal(p.stds[5:10], first[1])
    assert np.all((p.stds[10:] >= lo) & (p.stds[10:] <= hi))
    # the code's environment files hold 3 decimals
    np.testing.assert_array_equal(p.stds, np.round(p.stds, 3))
    np.testing.assert_array_equal(p.means, np.round(p.means, 3))


def test_augucb_authors_code_rounds_expt2_means():
    p = problems.augucb_experiment(2, "authors_code")
    np.testing.assert_array_equal(
        p.means[:10], [0.2, 0.36, 0.392, 0.398, 0.45, 0.55, 0.602, 0.608, 0.64, 0.8]
    )


def test_augucb_variances_drawn_once_per_seed():
    a = problems.augucb_experiment(1, "paper", seed=7)
    b = problems.augucb_experiment(1, "paper", seed=7)
    c = problems.augucb_experiment(1, "paper", seed=8)
    np.testing.assert_array_equal(a.stds, b.stds)
    assert not np.array_equal(a.stds[10:], c.stds[10:])
    # Experiment 6 is Experiment 5's instance; Experiments 1-4 share their draws
    for noise in problems.NOISE_MODELS:
        e5 = problems.augucb_experiment(5, noise, seed=7)
        e6 = problems.augucb_experiment(6, noise, seed=7)
        np.testing.assert_array_equal(e5.means, e6.means)
        np.testing.assert_array_equal(e5.stds, e6.stds)
        for n in (2, 3, 4):
            en = problems.augucb_experiment(n, noise, seed=7)
            e1 = problems.augucb_experiment(1, noise, seed=7)
            np.testing.assert_array_equal(en.stds[10:], e1.stds[10:])


def test_augucb_ranges_share_their_uniforms():
    _, paper = problems.augucb_listed_values(1, ranges="paper", seed=5)
    _, code = problems.augucb_listed_values(1, ranges="authors_code", seed=5)
    u_paper = (paper[10:] - 0.38) / 0.04
    u_code = (code[10:] - 0.3) / 0.1
    # rounding to 3 decimals moves u_code by at most 0.0005 / 0.1
    np.testing.assert_allclose(u_code, u_paper, rtol=0, atol=0.005 + 1e-12)


def test_augucb_invalid_arguments():
    with pytest.raises(ValueError, match="number"):
        problems.augucb_experiment(7)
    with pytest.raises(ValueError, match="noise"):
        problems.augucb_experiment(1, "sd")
    with pytest.raises(ValueError, match="ranges"):
        problems.augucb_listed_values(1, ranges="code")


# thresholding-authors-code.md §2 quotes these oracle parameters (T = 10^4)
@pytest.mark.parametrize(
    ("number", "variant", "expected"),
    [(1, "paper", 0.9907), (1, "authors_code", 9.969), (5, "paper", 0.7615),
     (5, "authors_code", 2.475)],
)  # fmt: skip
def test_augucb_ucbe_oracle_a_matches_the_spec_file(number, variant, expected):
    p = problems.augucb_experiment(number, variant)
    a = oracles.ucbe_oracle_a(p.means, threshold=0.5, budget=10_000, variant=variant)
    assert abs(a - expected) <= 0.5e-4 * 10 ** np.ceil(np.log10(expected))


@pytest.mark.parametrize(("number", "expected"), [(1, 2.9615), (5, 0.8058)])
def test_augucb_ucbev_authors_a_matches_the_spec_file(number, expected):
    p = problems.augucb_experiment(number, "authors_code")
    _, listed = problems.augucb_listed_values(number, ranges="authors_code")
    a = oracles.ucbev_oracle_a(
        p.means, listed, threshold=0.5, budget=10_000, variant="authors_code"
    )
    assert abs(a - expected) <= 0.5e-4


@pytest.mark.parametrize("number", [1, 5])
def test_augucb_ucbev_paper_a_lies_between_the_range_ends(number):
    """H_sigma,1 increases with sigma, so a lies between its values at lo and hi."""
    p = problems.augucb_experiment(number, "paper")
    _, listed = problems.augucb_listed_values(number, ranges="paper")
    lo, hi = (0.38, 0.42) if number <= 4 else (0.2, 0.3)

    def a_of(rest):
        var = listed.copy()
        var[10:] = rest
        return oracles.ucbev_oracle_a(p.means, var, threshold=0.5, budget=10_000)

    a = oracles.ucbev_oracle_a(p.means, listed, threshold=0.5, budget=10_000)
    assert a_of(hi) < a < a_of(lo)


@pytest.mark.parametrize("number", [1, 2, 3])
def test_lsa_setups(number):
    p = problems.lsa_setup(number)
    k = {1: 10, 2: 20, 3: 10}[number]
    assert p.means.shape == (k,) and p.stds is None and p.threshold == 0.5
    with pytest.raises(ValueError, match="number"):
        problems.lsa_setup(4)
