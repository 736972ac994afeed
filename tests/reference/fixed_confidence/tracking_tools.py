"""Plain-Python pieces shared by the Track-and-Stop, Best Challenger, uniform and racing
references (written from spec §1 and the papers, not from the library's code).

* :func:`divergence`: Bernoulli ``kl`` (``0 log 0 = 0``) or Gaussian ``(x - y)^2 /
  (2 sigma^2)``;
* :func:`pairwise_z` / :func:`glr`: Chernoff's statistic (GK16 eqs. (7)-(8)): the
  leader is the first empirical best, ``Z = min_{b != leader} Z_{leader,b}`` and the
  challenger its first minimiser;
* :func:`threshold`: ``beta(t, delta)`` for "practical", "gk16", "bounded" (Bernoulli)
  and "kk21", "t3c" (Gaussian), with ``C_G`` minimised by SciPy;
* :func:`kl_upper` / :func:`kl_lower`: KK13 eqs. (4)-(5) (bisection for Bernoulli, 50
  halvings from the Pinsker bracket, the midpoint returned; closed form for Gaussian);
* :func:`optimal_weights`: ``w*(mu)`` and ``T*(mu)`` of GK16 Theorem 5 (nested root
  finding, see its docstring), and :func:`project` (GK16 Sec. 3.1, C-Tracking's
  ``Sigma^eps``).
"""

from __future__ import annotations

import math

from scipy.optimize import brentq, minimize_scalar
from scipy.special import xlogy, zeta

HALVINGS = 50  # float64 bisection of the KL bounds


def divergence(family: str, x: float, y: float, sigma: float = 1.0) -> float:
    if family == "bernoulli":
        return float(
            xlogy(x, x) - xlogy(x, y) + xlogy(1 - x, 1 - x) - xlogy(1 - x, 1 - y)
        )
    return (x - y) ** 2 / (2.0 * (sigma * sigma))


def pairwise_z(family, n_a, mu_a, n_b, mu_b, sigma=1.0) -> float:
    """``Z_{a,b}`` for ``mu_a >= mu_b`` (both arms pulled): ``N_a d(mu_a, m) + N_b
    d(mu_b, m)``, ``m`` the count-weighted mean. The Gaussian form is the same number
    written as ``N_a N_b / (N_a + N_b) (mu_a - mu_b)^2 / (2 sigma^2)``."""
    total = n_a + n_b
    if family == "gaussian":
        gap = mu_a - mu_b
        return (n_a * n_b / total) * (gap * gap) / (2.0 * sigma * sigma)
    mid = min(max((n_a * mu_a + n_b * mu_b) / total, mu_b), mu_a)
    return n_a * divergence(family, mu_a, mid) + n_b * divergence(family, mu_b, mid)


def first_best(values, candidates=None) -> int:
    candidates = range(len(values)) if candidates is None else candidates
    best = None
    for i in candidates:
        if best is None or values[i] > values[best]:
            best = i
    return best


def first_worst(values, candidates=None) -> int:
    candidates = range(len(values)) if candidates is None else candidates
    worst = None
    for i in candidates:
        if worst is None or values[i] < values[worst]:
            worst = i
    return worst


def glr(family, arms, sigma=1.0):
    """``(Z, leader, challenger)`` over pulled arms (every arm pulled at least once)."""
    means = [a.mean for a in arms]
    leader = first_best(means)
    costs = [
        math.inf
        if b == leader
        else pairwise_z(
            family, arms[leader].n, means[leader], arms[b].n, means[b], sigma
        )
        for b in range(len(arms))
    ]
    challenger = first_worst(costs)
    return costs[challenger], leader, challenger


def c_gaussian(x: float) -> float:
    """``C_G(x) = min_{lambda in (1/2, 1]} (g(lambda) + x) / lambda`` (KK21 Thm 9)."""

    def objective(lam):
        g = (
            2 * lam
            - 2 * lam * math.log(4 * lam)
            + math.log(zeta(2 * lam))
            - 0.5 * math.log(1 - lam)
        )
        return (g + x) / lam

    res = minimize_scalar(
        objective,
        bounds=(0.5 + 1e-12, 1 - 1e-15),
        method="bounded",
        options={"xatol": 1e-14},
    )
    return float(res.fun)


def threshold(name: str, t: float, delta: float, k: int, family: str) -> float:
    if name == "delta_correct":
        name = "gk16" if family == "bernoulli" else "kk21"
    if name == "practical":
        return math.log(math.log(t) + 1.0) + math.log(1.0 / delta)
    if name == "gk16":
        return math.log(2.0 * t) + math.log((k - 1) / delta)
    if name == "bounded":
        return 2.0 * math.log(1.0 + t / 2.0) + (
            math.log(1.0 / delta) + 2.0 + math.log(k - 1)
        )
    cg = 2.0 * c_gaussian(math.log((k - 1) / delta) / 2.0)
    if name == "kk21":
        return 4.0 * math.log(4.0 + math.log(t / 2.0)) + cg
    if name == "t3c":
        return 4.0 * math.log(4.0 + math.log(t)) + cg
    raise ValueError(name)


def kl_upper(family, p, level, sigma=1.0) -> float:
    """``max{q >= p : d(p, q) <= level}``."""
    level = max(level, 0.0)
    if family == "gaussian":
        return p + math.sqrt(2.0 * (sigma * sigma) * level)
    lo, hi = p, min(1.0, p + math.sqrt(level / 2.0))
    for _ in range(HALVINGS):
        mid = (lo + hi) / 2.0
        if divergence(family, p, mid) > level:
            hi = mid
        else:
            lo = mid
    return (lo + hi) / 2.0


def kl_lower(family, p, level, sigma=1.0) -> float:
    """``min{q <= p : d(p, q) <= level}``."""
    level = max(level, 0.0)
    if family == "gaussian":
        return p - math.sqrt(2.0 * (sigma * sigma) * level)
    lo, hi = max(0.0, p - math.sqrt(level / 2.0)), p
    for _ in range(HALVINGS):
        mid = (lo + hi) / 2.0
        if divergence(family, p, mid) > level:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


# ------------------------------------------------------------- optimal proportions
def _kl_stable(p: float, q: float) -> float:
    """Bernoulli ``kl(p, q)`` for ``q in (0, 1)``, as ``(p - q)^2 / (q (1 - q)) + p
    L((p - q)/q) + (1 - p) L((q - p)/(1 - q))``, ``L(e) = log(1 + e) - e``: the first-
    order terms of the two logarithms cancel exactly, so ``q`` near ``p`` keeps its
    digits (the root finding below divides by such divergences). Written out in one
    function: it is most of the references' running time."""
    if p == q:
        return 0.0
    if q <= 0.0 or q >= 1.0:
        return math.inf
    e_low, e_high = (p - q) / q, (q - p) / (1.0 - q)
    total = (p - q) ** 2 / (q * (1.0 - q))
    if p > 0.0:
        total += p * (math.log1p(e_low) - e_low)
    if p < 1.0:
        total += (1.0 - p) * (math.log1p(e_high) - e_high)
    return total


def _d(family, p, q):
    return _kl_stable(p, q) if family == "bernoulli" else (p - q) ** 2 / 2.0


def _root(f, lo, hi, rtol=1e-15):
    return brentq(f, lo, hi, xtol=1e-300, rtol=rtol, maxiter=500)


def optimal_weights(family: str, means) -> tuple[float, list[float]]:
    """``(T*, w*)`` of GK16 Theorem 5 for a unique best arm (any order of the arms;
    Gaussian at ``sigma = 1``: ``w*`` does not depend on ``sigma``).

    With ``b`` the best arm, ``m_a(x) = (mu_b + x mu_a)/(1 + x)``, ``g_a(x) = d(mu_b,
    m_a(x)) + x d(mu_a, m_a(x))`` (increasing from 0), ``x_a = g_a^-1`` and ``F(y) =
    sum_a d(mu_b, m_a(x_a(y))) / d(mu_a, m_a(x_a(y)))``, ``y*`` solves ``F = 1``;
    ``w*_a = x_a(y*) / (1 + sum x)``, ``w*_b = 1 / (1 + sum x)``, ``T* = (1 + sum x)/y*``
    (GK16 App. A.2).

    Gaussian: ``d(mu_b, m)/d(mu_a, m) = x^2`` and ``x_a(y) = y / (D_a - y)``, ``D_a =
    (mu_b - mu_a)^2 / 2``; with ``u = y / D_2`` (``D_2`` of the second-best arm) ``x_a =
    c_a u / (1 - c_a u)``, ``c_a = D_2 / D_a``, and ``sum x_a^2 = 1`` is solved in
    ``u in (0, 1)`` (one other arm: ``x = 1`` exactly). Bernoulli: ``F = 1`` is
    bracketed by ``(0, y_c]``, ``y_c = g_2(x_c)`` at the Chernoff point of the two best
    arms (``d(mu_b, m) = d(mu_2, m)``, where arm 2's term of ``F`` is 1: GK16 Sec. 2.2,
    "two-armed bandits") and solved by Brent's method; every ``x_a(y)`` by Newton's
    method on ``g_a(x) = y`` (arms of equal means share one solve).
    """
    k = len(means)
    b = first_best(means)
    others = [a for a in range(k) if a != b]
    mu1 = means[b]
    mu2 = max(means[a] for a in others)
    x = [0.0] * k
    if family == "gaussian":
        gap2 = {a: (mu1 - means[a]) ** 2 for a in others}
        big = (mu1 - mu2) ** 2
        c = {a: big / gap2[a] for a in others}

        def xs(u):
            return {a: c[a] * u / (1.0 - c[a] * u) for a in others}

        if len(others) == 1:
            u = 0.5
        else:
            u = _root(lambda u: sum(v * v for v in xs(u).values()) - 1.0, 0.0, 0.5)
        for a, v in xs(u).items():
            x[a] = v
        y = u * big / 2.0
    else:

        def meet(mu, xv):
            return (mu1 + xv * mu) / (1.0 + xv)

        def g(mu, xv):
            if xv == 0.0:
                return 0.0  # m = mu_b: d(mu_a, mu_b) may be infinite, 0 * inf
            m = (mu1 + xv * mu) / (1.0 + xv)
            return _kl_stable(mu1, m) + xv * _kl_stable(mu, m)

        start = {}  # warm starts of the inner solves (the last x_a found)

        def x_of(mu, y):
            """Newton's method on g(x) = y, g' = d(mu_a, m) (GK16 App. A.2: the
            derivatives of the divergences in m cancel); g is concave increasing, so
            after one step the iterates are left of the root and increase to it (a
            step is kept no lower than half the previous iterate). Start: ``y /
            g'(0) = y / d(mu_a, mu_b)``, left of the root by concavity, where that is
            finite; else the last root found."""
            slope0 = _kl_stable(mu, mu1)
            x = y / slope0 if slope0 < math.inf else start.get(mu, 1.0)
            for _ in range(400):
                m = (mu1 + x * mu) / (1.0 + x)
                slope = _kl_stable(mu, m)
                gx = _kl_stable(mu1, m) + x * slope
                new = max(x + (y - gx) / slope, 0.5 * x)
                if abs(new - x) <= 4e-15 * x or (gx <= y and new <= x):
                    break  # converged (to rounding), or no progress from the left
                x = new
            start[mu] = x
            return x

        # arms of equal means share one solve (their x are then exactly equal)
        levels = {}
        for a in others:
            levels[means[a]] = levels.get(means[a], 0) + 1

        def f(y):
            if y == 0.0:
                return -1.0  # F(0) = 0
            total = 0.0
            for mu, count in levels.items():
                m = meet(mu, x_of(mu, y))
                total += count * (_kl_stable(mu1, m) / _kl_stable(mu, m))
            return total - 1.0

        edge = 1e-12 * (mu1 - mu2)  # d(mu_1, mu_2) may be infinite
        m_c = _root(
            lambda m: _d(family, mu1, m) - _d(family, mu2, m), mu2 + edge, mu1 - edge
        )
        y_c = g(mu2, (mu1 - m_c) / (m_c - mu2))
        y = y_c if f(y_c) <= 0.0 else _root(f, 0.0, y_c, rtol=1e-13)
        solved = {mu: x_of(mu, y) for mu in levels}
        for a in others:
            x[a] = solved[means[a]]
    x[b] = 1.0
    total = sum(x)
    return total / y, [v / total for v in x]


def project(w, eps: float) -> list[float]:
    """``max(w - lam, eps)`` with ``lam >= 0`` such that the result sums to 1: the
    Euclidean projection of ``w`` (in the simplex) onto ``Sigma^eps = {v in [eps, 1]^K,
    sum v = 1}``, which is also an L-infinity projection (GK16 Sec. 3.1, C-Tracking):
    its distance ``max(lam, max_a (eps - w_a)_+)`` is the smallest possible, as the
    total deficit must come off the other arms, none of them below eps.

    ``lam`` from the arms sorted in decreasing order: the largest ``j`` with ``u_j -
    lam_j > eps``, ``lam_j = (u_1 + ... + u_j - 1 + (K - j) eps) / j``.
    """
    k = len(w)
    order = sorted(range(k), key=lambda a: -w[a])
    lam, partial = 0.0, 0.0
    for j, a in enumerate(order, start=1):
        partial += w[a]
        cand = (partial - 1.0 + (k - j) * eps) / j
        if w[a] - cand > eps:
            lam = cand
    return [max(v - lam, eps) for v in w]


GRID_SCALE = 2.0**20  # w* is rounded to a multiple of 2^-20 before tracking
