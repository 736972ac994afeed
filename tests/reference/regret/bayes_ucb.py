"""Reference: Bayes-UCB with Beta and Gaussian posteriors (spec §2.9, §3.2-3.3).

Index of arm j at the decision of pull ``t`` (1-based): the upper quantile of its
posterior at tail probability ``alpha_t = 1 / (t (ln T)^c)`` (``ln T`` floored at 1).

Beta: the quantile procedure of the library (a documented numeric method, not the
spec's bisection, which costs 30 ``betainc`` per arm and step), re-written here per
arm in float64 scalars: each arm keeps a warm start ``(g, ln P(X > g), P(X > g) /
pdf(g))`` (initially ``(0, 0, inf)``). After arm i is pulled its pair is re-evaluated
under its new posterior and refined alone with 3 Newton steps; then every arm takes 2
Newton steps on ``ln P(X > x) = ln alpha`` in ``w = ln(1 - x)`` and is snapped to the
grid ``2^-bits``: ``g`` = nearest grid point, index ``g +- 2^-(bits+1)`` by the sign of
``ln P(X > g) - ln alpha``. ``P(X > x) = I_{1-x}(b, a)`` comes from its continued
fraction (modified Lentz, 48 fixed terms) with the prefactor
``x^a (1-x)^b / B(a, b)`` from Stirling's formula (the float64 settings).

Gauss: posterior ``N(S/(k+1), s2/(k+1))``, index
``S/(k+1) + sqrt(s2/(k+1)) * (-ndtri(alpha))``.
Each decision's key splits into (binarisation, tie) keys.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy.special import gammaln, ndtri

from reference.regret._bayes_common import empirical_best, pick_max
from reference.stats import arms as new_arms

GRID_BITS = 40  # float64 default
CF_TERMS = 48
NEWTON_ALL = 2
NEWTON_PULLED = 3
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
    """ln Gamma(z) - ((z - 1/2) ln z - z + ln(2 pi)/2)."""
    if z >= 10.0:
        r = 1.0 / z
        r2 = r * r
        series = 0.0
        for coef in reversed(STIRLING):  # B_2k / (2k (2k - 1)), k = 1..8
            series = coef + r2 * series
        return r * series
    return gammaln(z) - ((z - 0.5) * math.log(z) - z + HALF_LOG_2PI)


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
    """Continued fraction of I_x(a, b) (DLMF 8.17.22), modified Lentz, CF_TERMS terms."""
    tiny = 1e-30

    def guard(v):
        return tiny if abs(v) < tiny else v

    d = 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    c, h = 1.0, d
    for m in range(1, CF_TERMS + 1):
        for coef in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 / guard(1.0 + coef * d)
            c = guard(1.0 + coef / c)
            h = h * d * c
    return h


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


def _newton(x, log_tail, ratio, log_alpha, top):
    """Newton step in w = ln(1 - x); fallbacks (1+x)/2 / x/2 when not finite."""
    gap = log_tail - log_alpha
    if gap == 0:
        return x
    u = 1.0 - x
    dw = -gap * ratio / u
    if np.isfinite(dw):
        x = 1.0 - u * np.exp(dw)
    else:
        x = (1.0 + x) / 2.0 if gap > 0 else x / 2.0
    return min(x, top)


def _quantile(a, b, log_alpha, warm, steps, bits):
    """``steps`` Newton steps from ``warm``, then the dyadic snap -> (index, warm)."""
    scale = 2.0**bits
    top = 1.0 - 1.0 / scale
    x, log_tail, ratio = warm
    for i in range(steps):
        if i > 0:
            log_tail, ratio = _tail(a, b, x)
        x = _newton(x, log_tail, ratio, log_alpha, top)
    g = min(max(round(x * scale) / scale, 0.0), top)
    log_tail, ratio = _tail(a, b, g)
    half = 0.5 / scale
    q = g + half if log_tail > log_alpha else g - half
    return min(max(q, half), 1.0 - half), (g, log_tail, ratio)


def make(posterior: str, tie_break: str, bits: int = GRID_BITS):
    def reference(inst, draws):
        k = inst.num_arms
        c = float(inst.hp.get("c", 0.0))
        horizon = inst.hp.get("horizon")
        noise_var = float(inst.hp.get("noise_var", 1.0))
        arms = new_arms(k)
        succ = [0.0] * k
        warm = [(0.0, 0.0, math.inf)] * k
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
                if last is not None:  # the pulled arm's posterior changed
                    i = last[0]
                    _, warm[i] = _quantile(
                        a[i],
                        b[i],
                        log_alpha,
                        (warm[i][0], *_tail(a[i], b[i], warm[i][0])),
                        NEWTON_PULLED,
                        bits,
                    )
                index = []
                for j in range(k):
                    q, warm[j] = _quantile(
                        a[j], b[j], log_alpha, warm[j], NEWTON_ALL, bits
                    )
                    index.append(q)
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
