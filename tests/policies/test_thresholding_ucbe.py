"""UCBE / UCBEV: oracle-a helpers (paper vs authors' code), widths, validation."""

import numpy as np
import pytest

from jbandits.analysis.oracles import ucbe_oracle_a, ucbev_oracle_a
from jbandits.policies.thresholding import ucbe, ucbev

# S000 Expt 1 (K = 100, tau = 0.5, T = 10^4)
MEANS = np.r_[
    0.2 + 0.05 * np.arange(4), 0.45, 0.55, 0.65 + 0.05 * np.arange(4), np.full(90, 0.4)
]
LISTED = np.r_[np.full(5, 0.5), np.full(5, 0.6), np.full(90, 0.4)]


def test_ucbe_oracle_a_expt1():
    paper = ucbe_oracle_a(MEANS, threshold=0.5, budget=10_000)
    code = ucbe_oracle_a(MEANS, threshold=0.5, budget=10_000, variant="authors_code")
    assert abs(paper - 0.9907) < 5e-5 and abs(code - 9.969) < 5e-4
    assert ucbe_oracle_a(MEANS, threshold=0.5, budget=10_000, exponent=-1) == paper / 4


def test_ucbev_oracle_a_expt1_authors_code():
    code = ucbev_oracle_a(
        MEANS, LISTED, threshold=0.5, budget=10_000, variant="authors_code"
    )
    assert abs(code - 2.9615) < 5e-5


def test_ucbev_oracle_a_paper_formula():
    means, var = np.array([0.2, 0.7]), np.array([0.25, 0.04])
    gaps, sig = np.array([0.3, 0.2]), np.array([0.5, 0.2])
    xi = sig + np.sqrt(sig**2 + 16 / 3 * gaps)
    expected = 16 * (50 - 4) / np.sum(xi / gaps**2)
    got = ucbev_oracle_a(means, var, threshold=0.5, budget=50, exponent=2)
    assert abs(got - expected) <= 1e-12 * expected


def test_oracle_refuses_degenerate():
    with pytest.raises(ValueError, match="gap"):
        ucbe_oracle_a([0.5, 0.7], threshold=0.5, budget=10)
    with pytest.raises(ValueError, match="complexity"):  # authors' sum is empty
        ucbe_oracle_a([0.4, 0.4], threshold=0.5, budget=10, variant="authors_code")
    with pytest.raises(ValueError, match="budget"):
        ucbev_oracle_a([0.2, 0.7], [0.1, 0.1], threshold=0.5, budget=4)


def test_validation_names_argument():
    with pytest.raises(ValueError, match="a must"):
        ucbe(3, threshold=0.5, a=0.0)
    with pytest.raises(ValueError, match="variant"):
        ucbe(3, threshold=0.5, a=1.0, variant="x")
    with pytest.raises(ValueError, match="b must"):
        ucbev(3, threshold=0.5, a=1.0, b=-1.0)
