"""Reference: Bayes-UCB with Beta and Gaussian posteriors (spec §2.9, §3.2-3.3).

Index of arm j at the decision of pull ``t`` (1-based): the upper quantile of its
posterior at tail probability ``alpha_t = 1 / (t (ln T)^c)`` (``ln T`` floored at 1).

Beta: the midpoint of the ``2^-bits`` dyadic cell ``(g, g + 2^-bits]`` that holds the
root of ``P(X > x) = alpha`` (``g + 2^-(bits+1)``, ``g`` the largest grid point below 1
with ``P(X > g) > alpha``, 0 when none), the tail evaluated as the library does, per
arm in float64 scalars (stateless: no warm start). ``P(X > x) = I_{1-x}(b, a)`` comes
from its continued fraction (DLMF 8.17.22, 48 terms evaluated backward) with the
prefactor ``x^a (1-x)^b / B(a, b)`` from Stirling's formula (the float64 settings).
The cell is found from scipy's quantile and then by the sign of the tail at grid
points, so it is the cell of the tail as computed here.

Gauss: posterior ``N(S/(k+1), s2/(k+1))``, index
``S/(k+1) + sqrt(s2/(k+1)) * (-ndtri(alpha))``.
Each decision's key splits into (binarisation, tie) keys.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy.special import ndtri
from scipy.stats import beta as beta_law

from reference.regret._bayes_common import empirical_best, pick_max
from reference.stats import arms as new_arms

GRID_BITS = 40  # float64 default
CF_TERMS = 48
HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
STIRLING = (1 / 12, -1 / 360, 1 / 1260, -1 / 1680, 1 / 1188, -691 / 360360, 1 / 156)
STIRLING += (-3617 / 122400,)


@jax.jit
def _split(key):
    """Decision key -> (binarisation uniform, tie key)."""
    key_bin, key_tie = jax.random.split(key)
    return jax.random.uniform(key_bin, ()), key_tie


def _log1pmx(e):
    """ln(1 + e) - e; series in s = e / (2 + e) for |e| <= 1/4."""
    if abs(e) <= 0.25:
        s = e / (2.0 + e)
        s2 = s * s
        series = 0.0
        for k in range(9, -1, -1):  # sum_{k < 10} s^(2k) / (2k + 3), Horner
            series = 1.0 / (2 * k + 3) + s2 * series
        return 2.0 * s * s2 * series - 2.0 * s2 / (1.0 - s)
    return np.log1p(e) - e


def _stirling_error(z):
    """ln Gamma(z) - ((z - 1/2) ln z - z + ln(2 pi)/2) for z >= 1.

    The 8-term asymptotic series at z >= 10; below, the series at z + 10 plus the ten
    differences se(w) - se(w + 1) = sum_j s^(2j) / (2j + 1), s = 1 / (2w + 1).
    """
    if z < 10.0:
        shifts = 0.0
        for k in range(9, -1, -1):
            s = 1.0 / (2.0 * (z + k) + 1.0)
            s2 = s * s
            series = 0.0
            for j in range(16, 0, -1):
                series = s2 * (1.0 / (2 * j + 1) + series)
            shifts = shifts + series
        return _stirling_error(z + 10.0) + shifts
    r = 1.0 / z
    r2 = r * r
    series = 0.0
    for coef in reversed(STIRLING):  # B_2k / (2k (2k - 1)), k = 1..8
        series = coef + r2 * series
    return r * series


def _log_kernel(a, b, x):
    """ln[x^a (1 - x)^b / B(a, b)] by Stirling's formula."""
    n = a + b
    norm = (
        0.5 * math.log(a * b / n)
        - HALF_LOG_2PI
        - (_stirling_error(a) + _stirling_error(b) - _stirling_error(n))
    )
    d = b - n * (1.0 - x) if x > 0.5 else n * x - a  # n x - a from the smaller side
    return a * _log1pmx(d / a) + b * _log1pmx(-d / b) + norm


def _cont_frac(a, b, x):
    """Continued fraction of I_x(a, b) (DLMF 8.17.22), CF_TERMS terms, backward."""
    t = 0.0
    for m in range(CF_TERMS, 0, -1):
        t = (
            -(a + m)
            * (a + b + m)
            * x
            / ((a + 2.0 * m) * (a + 2.0 * m + 1.0) * (1.0 + t))
        )
        t = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m) * (1.0 + t))
    t = -(a + b) * x / ((a + 1.0) * (1.0 + t))
    return 1.0 / (1.0 + t)


def _tail(a, b, x):
    """(ln P(X > x), P(X > x) / pdf(x)) for X ~ Beta(a, b)."""
    x = np.float64(x)
    y = 1.0 - x
    with np.errstate(divide="ignore", invalid="ignore"):  # x in {0, 1}: ln 0, 0/0
        kernel_log = _log_kernel(a, b, x)
        kernel = np.exp(kernel_log)
        if y < (b + 1.0) / (a + b + 2.0):  # upper tail: I_{1-x}(b, a) directly
            cf = _cont_frac(b, a, y)
            return kernel_log + np.log(cf / b), cf * x * y / b
        upper = 1.0 - kernel * _cont_frac(a, b, x) / a
        return np.log(upper), upper * x * y / kernel


def _cell_index(a, b, log_alpha, bits):
    """Midpoint of the dyadic cell holding the root of ln P(X > x) = ln alpha."""
    scale = 2.0**bits
    cell = 1.0 / scale
    top = 1.0 - cell  # the last grid point below 1 (P(X > 1) = 0)

    def above(g):
        return _tail(a, b, g)[0] > log_alpha

    g = min(math.floor(beta_law.isf(math.exp(log_alpha), a, b) * scale) / scale, top)
    while g > 0.0 and not above(g):
        g -= cell
    while g < top and above(g + cell):
        g += cell
    return g + cell / 2.0


def make(posterior: str, tie_break: str, bits: int = GRID_BITS):
    def reference(inst, draws):
        k = inst.num_arms
        c = float(inst.hp.get("c", 0.0))
        horizon = inst.hp.get("horizon")
        noise_var = float(inst.hp.get("noise_var", 1.0))
        arms = new_arms(k)
        succ = [0.0] * k
        pulls, last = [], None
        for t in range(inst.budget):
            u_bin, key_tie = _split(draws.key_for_pull(t))
            if last is not None and posterior == "beta":
                i, r = last  # binarise the previous reward: success iff u < r
                succ[i] += 1.0 if float(u_bin) < r else 0.0
            factor = 1.0 if horizon is None else max(math.log(float(horizon)), 1.0) ** c
            alpha = 1.0 / ((t + 1) * factor)
            if posterior == "beta":
                log_alpha = math.log(alpha)
                a = [1.0 + succ[j] for j in range(k)]
                b = [1.0 + arms[j].n - succ[j] for j in range(k)]
                index = [_cell_index(a[j], b[j], log_alpha, bits) for j in range(k)]
            else:
                z = -ndtri(alpha)
                index = [
                    arms[j].total / (arms[j].n + 1.0)
                    + math.sqrt(noise_var / (arms[j].n + 1.0)) * z
                    for j in range(k)
                ]
            i = pick_max(index, tie_break, draws, key_tie)
            r = float(inst.table[i, arms[i].n])
            arms[i].add(r)
            pulls.append(i)
            last = (i, r)
        return pulls, empirical_best(arms)

    return reference
