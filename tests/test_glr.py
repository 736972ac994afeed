"""The GLR (Chernoff) stopping block, jbandits.policies.blocks.glr, against closed forms,
the spec's numbers (spec §9) and a plain-Python evaluation of the definitions
(Garivier & Kaufmann, COLT 2016, eqs. (7)-(8); Kaufmann & Koolen, JMLR 2021)."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy.special import zeta as scipy_zeta

from jbandits.policies.blocks import glr

# spec §9: delta = 0.1, t = 1000; the five values imply K = 4 (gk16: log(2 t (K-1) /
# delta) = 11.002 needs K - 1 = 3, and so do the others: see test_spec_table_needs_k4)
SPEC_THRESHOLDS = {
    ("practical", "bernoulli"): 4.370,
    ("gk16", "bernoulli"): 11.002,
    ("kk21", "gaussian"): 15.819,
    ("t3c", "gaussian"): 16.082,
    ("bounded", "bernoulli"): 17.834,
}
SPEC_CG = {1.0: 2.507, 5.0: 6.757, 20.0: 22.203}


# --- plain-Python definitions (no jbandits code) ------------------------------------


def py_kl(p, q):
    def xlogy(x, y):
        return 0.0 if x == 0 else x * math.log(y)

    return xlogy(p, p) - xlogy(p, q) + xlogy(1 - p, 1 - p) - xlogy(1 - p, 1 - q)


def py_d(family, x, y, sigma):
    return py_kl(x, y) if family == "bernoulli" else (x - y) ** 2 / (2 * sigma**2)


def py_z(family, na, ma, nb, mb, sigma):
    """GK16 eq. (7): Z_{a,b}, with Z_{b,a} = -Z_{a,b}."""
    if ma < mb:
        return -py_z(family, nb, mb, na, ma, sigma)
    m = (na * ma + nb * mb) / (na + nb)
    return na * py_d(family, ma, m, sigma) + nb * py_d(family, mb, m, sigma)


def py_glr(family, counts, means, sigma):
    """GK16 eq. (8): Z(t) = max_a min_{b != a} Z_{a,b}; leader = first empirical best;
    challenger = first argmin_b Z_{leader,b} (all arms pulled, K >= 2)."""
    k = len(counts)
    rows = [
        [
            py_z(family, counts[a], means[a], counts[b], means[b], sigma)
            for b in range(k)
        ]
        for a in range(k)
    ]
    value = max(min(rows[a][b] for b in range(k) if b != a) for a in range(k))
    leader = max(range(k), key=lambda a: (means[a], -a))
    others = [b for b in range(k) if b != leader]
    challenger = min(others, key=lambda b: (max(rows[leader][b], 0.0), b))
    return value, leader, challenger


def py_cg(x):
    """C_G(x) by a dense grid over lambda in (1/2, 1), refined twice around the best."""

    def f(lam):
        g = (
            2 * lam
            - 2 * lam * math.log(4 * lam)
            + math.log(scipy_zeta(2 * lam))
            - 0.5 * math.log(1 - lam)
        )
        return (g + x) / lam

    lo, hi = 0.5 + 1e-9, 1 - 1e-12
    for _ in range(4):
        grid = np.linspace(lo, hi, 2001)
        values = [f(lam) for lam in grid]
        i = int(np.argmin(values))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    return min(values)


# --- closed forms and identities ----------------------------------------------------


@pytest.mark.parametrize("x64", [False, True])
def test_two_gaussian_arms_closed_form(x64):
    """Z = (mu_a - mu_b)^2 / (2 sigma^2 (1/N_a + 1/N_b)) (Shang et al. 2020, Sec. 3),
    and the two-arm GLR is Z_{leader, other}."""
    rng = np.random.default_rng(0)
    with jax.enable_x64(x64):
        for _ in range(20):
            na, nb = rng.integers(1, 200, size=2).astype(float)
            ma, mb = rng.normal(size=2)
            sigma = rng.uniform(0.2, 3.0)
            want = (ma - mb) ** 2 / (2 * sigma**2 * (1 / na + 1 / nb))
            got = glr.pairwise_glr("gaussian", na, ma, nb, mb, sigma)
            sign = 1.0 if ma >= mb else -1.0
            np.testing.assert_allclose(
                float(got), sign * want, rtol=1e-5 if not x64 else 1e-12
            )
            stat = glr.glr(
                "gaussian",
                jnp.array([na, nb]),
                jnp.array([ma, mb]),
                jnp.array([True, True]),
                sigma,
            )
            np.testing.assert_allclose(
                float(stat.value), want, rtol=1e-5 if not x64 else 1e-12
            )
            assert int(stat.leader) == (0 if ma >= mb else 1)
            assert int(stat.challenger) == 1 - int(stat.leader)


def test_two_bernoulli_arms_by_hand():
    """N_a = 3, mu_a = 1, N_b = 4, mu_b = 0: m = 3/7, Z = 3 log(7/3) + 4 log(7/4)."""
    with jax.enable_x64(True):
        got = float(glr.pairwise_glr("bernoulli", 3, 1.0, 4, 0.0))
    assert got == pytest.approx(3 * math.log(7 / 3) + 4 * math.log(7 / 4), rel=1e-14)


def decimal_z(na, a, nb, b):
    """Bernoulli Z_{a,b} (mu_a >= mu_b) in 50-digit decimal arithmetic."""
    getcontext().prec = 50
    a, b, na, nb = (Decimal(float(v)) for v in (a, b, na, nb))
    m = (na * a + nb * b) / (na + nb)

    def kl(x, y):
        left = x * (x / y).ln() if x > 0 else 0
        return left + ((1 - x) * ((1 - x) / (1 - y)).ln() if x < 1 else 0)

    return float(na * kl(a, m) + nb * kl(b, m))


def test_bernoulli_z_accurate_in_float32():
    """Z within 1e-6 (relative) of 50-digit arithmetic in float32, near the stopping
    thresholds with up to 1e6 pulls per arm (close means: the textbook kl's two terms
    cancel there and lost 3e-3 of Z at 1e6 pulls)."""
    for n, gap in [
        (1000, 0.05),
        (1e5, 0.01),
        (1e6, 0.003),
        (1e4, 0.001),
        (10, 1.0),
        (3, 0.5),
        (7, 0.3),
    ]:
        na, nb = n, int(0.9 * n)
        a = float(np.float32(np.round(min(0.5 + gap / 2, 1.0) * na) / na))
        b = float(np.float32(np.round(max(0.5 - gap / 2, 0.0) * nb) / nb))
        want = decimal_z(na, a, nb, b)
        got = glr.pairwise_glr("bernoulli", *np.float32([na, a, nb, b]))
        assert got.dtype == jnp.float32
        assert float(got) == pytest.approx(want, rel=1e-6), (n, gap)
        with jax.enable_x64(True):
            assert float(glr.pairwise_glr("bernoulli", na, a, nb, b)) == pytest.approx(
                want, rel=1e-14
            )


@pytest.mark.parametrize("family", glr.FAMILIES)
@pytest.mark.parametrize("x64", [False, True])
def test_antisymmetry_bit_exact(family, x64):
    rng = np.random.default_rng(1)
    with jax.enable_x64(x64):
        n_a, n_b = rng.integers(0, 50, size=(2, 500)).astype(float)
        if family == "bernoulli":
            mu_a, mu_b = rng.integers(0, 8, size=(2, 500)) / 7.0  # many ties, 0 and 1
        else:
            mu_a, mu_b = rng.normal(size=(2, 500)).round(1)
        ab = np.asarray(glr.pairwise_glr(family, n_a, mu_a, n_b, mu_b, 0.7))
        ba = np.asarray(glr.pairwise_glr(family, n_b, mu_b, n_a, mu_a, 0.7))
    assert np.all(np.isfinite(ab))
    np.testing.assert_array_equal(ab, -ba)
    assert np.all(ab[mu_a == mu_b] == 0.0)
    assert np.all(ab[(n_a == 0) | (n_b == 0)] == 0.0)
    assert np.all(ab[(mu_a > mu_b) & (n_a > 0) & (n_b > 0)] > 0.0)


@pytest.mark.parametrize("family", glr.FAMILIES)
def test_against_plain_python_definitions(family):
    """Random instances (K = 2..9, ties included) in float64: value, leader and
    challenger as GK16's max_a min_b Z_{a,b}, evaluated literally."""
    rng = np.random.default_rng(2)
    with jax.enable_x64(True):
        for trial in range(60):
            k = int(rng.integers(2, 10))
            counts = rng.integers(1, 40, size=k).astype(float)
            if family == "bernoulli":
                means = rng.integers(0, counts + 1) / counts
            else:
                means = rng.normal(size=k).round(1 if trial % 2 else 6)
            sigma = float(rng.uniform(0.3, 2.0))
            want = py_glr(family, list(counts), list(means), sigma)
            stat = glr.glr(family, counts, means, np.ones(k, bool), sigma)
            assert float(stat.value) == pytest.approx(want[0], rel=1e-10, abs=1e-12)
            assert (int(stat.leader), int(stat.challenger)) == want[1:]
            costs = np.asarray(
                glr.transport_costs(
                    family, counts, means, stat.leader, np.ones(k, bool), sigma
                )
            )
            assert costs[want[1]] == np.inf
            for j in range(k):
                if j != want[1]:
                    z = py_z(
                        family,
                        counts[want[1]],
                        means[want[1]],
                        counts[j],
                        means[j],
                        sigma,
                    )
                    assert costs[j] == pytest.approx(max(z, 0.0), rel=1e-10, abs=1e-12)


def test_not_unique_best_gives_zero():
    counts = jnp.array([5.0, 9.0, 4.0])
    means = jnp.array([0.2, 0.6, 0.6])
    stat = glr.glr("bernoulli", counts, means, jnp.ones(3, bool))
    assert float(stat.value) == 0.0
    assert int(stat.leader) == 1 and int(stat.challenger) == 2


def test_unpulled_arms_and_single_arm():
    """An unpulled real arm makes Z = 0 (no NaN, whatever its mean holds); the leader
    is chosen among pulled arms; one pulled real arm: Z = +inf, challenger -1."""
    mask = jnp.array([True, True, True, False])
    for family in glr.FAMILIES:
        stat = glr.glr(
            family,
            jnp.array([3.0, 0.0, 2.0, 0.0]),
            jnp.array([0.5, 0.9, 0.1, jnp.nan]),
            mask,
        )
        assert float(stat.value) == 0.0
        assert int(stat.leader) == 0 and int(stat.challenger) == 1
        stat = glr.glr(family, jnp.zeros(4), jnp.full(4, jnp.nan), mask)
        assert float(stat.value) == 0.0 and int(stat.leader) == 0
        stat = glr.glr(
            family,
            jnp.array([4.0, 0.0]),
            jnp.array([1.0, 0.0]),
            jnp.array([True, False]),
        )
        assert float(stat.value) == np.inf and int(stat.challenger) == -1


@pytest.mark.parametrize("family", glr.FAMILIES)
def test_padding_invariance(family):
    """Padded arms with any counts and means change nothing; K in the threshold is the
    number of real arms."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        k = int(rng.integers(2, 7))
        counts = rng.integers(1, 30, size=k).astype(np.float32)
        means = (rng.integers(0, counts + 1) / counts).astype(np.float32)
        name = "practical" if family == "bernoulli" else "t3c"
        want = glr.stops(family, counts, means, np.ones(k, bool), 40, 0.3, 1.0, name)
        pad = int(rng.integers(1, 5))
        where = np.sort(rng.choice(k + pad, size=k, replace=False))
        big_counts = rng.integers(0, 1000, size=k + pad).astype(np.float32)
        big_means = np.full(k + pad, np.nan, np.float32)
        big_means[::2] = 5.0
        mask = np.zeros(k + pad, bool)
        big_counts[where], big_means[where], mask[where] = counts, means, True
        got = glr.stops(family, big_counts, big_means, mask, 40, 0.3, 1.0, name)
        assert float(got[1].value) == float(want[1].value)
        assert bool(got[0]) == bool(want[0])
        assert int(where[int(want[1].leader)]) == int(got[1].leader)
        assert int(where[int(want[1].challenger)]) == int(got[1].challenger)


def test_padded_arms_do_not_count_in_the_threshold():
    """Two real Gaussian arms among 6: the stop sequence over n pulls each is that of
    the unpadded pair (K = 2 in kk21's log((K - 1) / delta), not 6)."""
    mask = jnp.array([False, True, False, False, True, False])
    seen = {2: [], 6: []}
    for n in range(1, 120):
        for size, where in ((2, [0, 1]), (6, [1, 4])):
            counts = jnp.zeros(size).at[jnp.array(where)].set(float(n))
            means = jnp.full(size, 3.0).at[jnp.array(where)].set(jnp.array([1.0, 0.0]))
            arm_mask = jnp.ones(2, bool) if size == 2 else mask
            stop, _ = glr.stops(
                "gaussian", counts, means, arm_mask, 2 * n, 0.1, 1.0, "kk21"
            )
            seen[size].append(bool(stop))
    assert seen[2] == seen[6] and any(seen[2]) and not all(seen[2])


def test_garbage_in_unpulled_and_padded_arms_stays_out():
    """Unpulled and padded arms holding out-of-range or infinite means give finite
    results (a Bernoulli kl of 7 would be NaN, an infinite Gaussian gap inf)."""
    counts = jnp.array([4.0, 0.0, 6.0, 0.0, 3.0])
    mask = jnp.array([True, True, True, False, True])
    for junk in (7.0, -jnp.inf, jnp.inf, jnp.nan):
        means = jnp.array([0.25, junk, 0.5, junk, 1.0])
        for family in glr.FAMILIES:
            z = glr.pairwise_glr(family, counts, means, counts[::-1], means[::-1])
            assert np.all(np.isfinite(np.asarray(z))) and float(z[1]) == 0.0
            costs = np.asarray(glr.transport_costs(family, counts, means, 4, mask))
            assert costs[1] == 0.0 and costs[3] == np.inf and 0.0 < costs[0] < np.inf


def test_jit_and_vmap_match_eager():
    rng = np.random.default_rng(4)
    counts = rng.integers(0, 20, size=(8, 5)).astype(np.float32)
    means = rng.uniform(size=(8, 5)).astype(np.float32)
    mask = rng.uniform(size=(8, 5)) < 0.8
    mask[:, 0] = True
    t = rng.integers(0, 100, size=8)
    delta = rng.uniform(0.01, 0.5, size=8).astype(np.float32)

    def one(c, m, a, t, d):
        return glr.stops("gaussian", c, m, a, t, d, 0.5, "delta_correct")

    batched = jax.jit(jax.vmap(one))(counts, means, mask, t, delta)
    for r in range(8):
        eager = one(counts[r], means[r], mask[r], t[r], delta[r])
        assert bool(batched[0][r]) == bool(eager[0])
        np.testing.assert_allclose(batched[1].value[r], eager[1].value, rtol=1e-6)
        assert int(batched[1].leader[r]) == int(eager[1].leader)
        assert int(batched[1].challenger[r]) == int(eager[1].challenger)


# --- thresholds and C_G -------------------------------------------------------------


@pytest.mark.parametrize("x64", [False, True])
def test_spec_threshold_values(x64):
    with jax.enable_x64(x64):
        for (name, family), want in SPEC_THRESHOLDS.items():
            got = float(glr.threshold(name, 1000, 0.1, 4, family))
            assert abs(got - want) <= 5e-4, (name, got, want)
        assert float(
            glr.threshold("delta_correct", 1000, 0.1, 4, "bernoulli")
        ) == float(glr.threshold("gk16", 1000, 0.1, 4, "bernoulli"))
        assert float(glr.threshold("delta_correct", 1000, 0.1, 4, "gaussian")) == float(
            glr.threshold("kk21", 1000, 0.1, 4, "gaussian")
        )


def test_spec_table_needs_k4():
    """The spec's table is self-consistent at K = 4 and at no other K (the K-free
    'practical' value aside)."""
    for k in (2, 3, 5, 10):
        off = [
            abs(float(glr.threshold(n, 1000, 0.1, k, f)) - v)
            for (n, f), v in SPEC_THRESHOLDS.items()
            if n != "practical"
        ]
        assert min(off) > 0.1, k


def test_threshold_formulas_in_plain_python():
    """Each threshold against its formula, in float64, at several (t, delta, K)."""
    cg = {}
    with jax.enable_x64(True):
        for t, delta, k in [
            (1, 0.5, 2),
            (7, 0.05, 3),
            (1000, 1e-3, 10),
            (12345, 1e-8, 30),
        ]:
            x = math.log((k - 1) / delta) / 2
            cg[x] = cg.get(x) or py_cg(x)
            want = {
                ("practical", "gaussian"): math.log((math.log(t) + 1) / delta),
                ("gk16", "bernoulli"): math.log(2 * t * (k - 1) / delta),
                ("kk21", "gaussian"): 2 * cg[x] + 4 * math.log(4 + math.log(t / 2)),
                ("t3c", "gaussian"): 4 * math.log(4 + math.log(t)) + 2 * cg[x],
                ("bounded", "bernoulli"): (
                    math.log(1 / delta) + 2 * math.log(1 + t / 2) + 2 + math.log(k - 1)
                ),
            }
            for (name, family), value in want.items():
                got = float(glr.threshold(name, t, delta, k, family))
                assert got == pytest.approx(value, rel=1e-9), (name, t, delta, k)
                const = glr.threshold_constant(name, delta, k, family)
                assert (
                    float(glr.threshold(name, t, delta, k, family, constant=const))
                    == got
                )


def test_threshold_before_any_sample_and_monotone():
    for name, family in SPEC_THRESHOLDS:
        assert float(glr.threshold(name, 0, 0.1, 4, family)) == np.inf
        values = np.asarray(glr.threshold(name, jnp.arange(1, 2000), 0.1, 4, family))
        assert np.all(np.isfinite(values)) and np.all(np.diff(values) >= 0), name


def test_threshold_family_and_argument_errors():
    with pytest.raises(ValueError, match="bernoulli arms only"):
        glr.threshold("gk16", 10, 0.1, 4, "gaussian")
    with pytest.raises(ValueError, match="bernoulli arms only"):
        glr.threshold("bounded", 10, 0.1, 4, "gaussian")
    for name in ("kk21", "t3c"):
        with pytest.raises(ValueError, match="gaussian arms only"):
            glr.threshold(name, 10, 0.1, 4, "bernoulli")
    with pytest.raises(ValueError, match="threshold must be one of"):
        glr.threshold("lil", 10, 0.1, 4, "gaussian")
    with pytest.raises(ValueError, match="family must be one of"):
        glr.glr("poisson", jnp.ones(2), jnp.ones(2), jnp.ones(2, bool))
    for delta in (0.0, 1.0, -0.1, float("nan")):
        with pytest.raises(ValueError, match="delta"):
            glr.threshold("practical", 10, delta, 4, "gaussian")


def test_c_gaussian_spec_values_and_definition():
    for x, want in SPEC_CG.items():
        assert abs(float(glr.c_gaussian(x)) - want) <= 5e-4
    with jax.enable_x64(True):
        for x in (0.0, 0.3, 1.0, 1.7005986908310777, 5.0, 20.0, 300.0):
            assert float(glr.c_gaussian(x)) == pytest.approx(
                py_cg(x), rel=1e-9, abs=1e-9
            )
        # C_G(x) > x and increasing (the paper's "C_G(x) ~ x + ln x" is loose: C_G(1e4)
        # - 1e4 = 5.18, not ln(1e4) = 9.21)
        xs = np.linspace(0.0, 50.0, 101)
        values = np.asarray(glr.c_gaussian(xs))
        assert np.all(values > xs) and np.all(np.diff(values) > 0)


def test_c_gaussian_float32_jit_vmap():
    xs = jnp.array([0.0, 0.5, 1.0, 5.0, 20.0, 100.0], jnp.float32)
    got = jax.jit(jax.vmap(glr.c_gaussian))(xs)
    assert got.dtype == jnp.float32
    with jax.enable_x64(True):
        want = np.asarray(glr.c_gaussian(np.asarray(xs, np.float64)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6)


@pytest.mark.seconds(65)  # its call on 2 idle cores, 2026-12-06
def test_stops_crosses_the_threshold():
    """Two Gaussian arms with N each: Z = N gap^2 / (4 sigma^2) crosses beta at the
    first N where it exceeds the threshold; stops() says so, and constant= agrees."""
    gap, sigma, delta = 0.5, 1.0, 0.05
    mask = jnp.ones(2, bool)
    const = glr.threshold_constant("kk21", delta, 2, "gaussian")
    seen = []
    for n in range(1, 400):
        counts, means = jnp.array([n, n], float), jnp.array([gap, 0.0])
        stop, stat = glr.stops(
            "gaussian", counts, means, mask, 2 * n, delta, sigma, "kk21"
        )
        again, _ = glr.stops(
            "gaussian", counts, means, mask, 2 * n, delta, sigma, "kk21", constant=const
        )
        beta = float(glr.threshold("kk21", 2 * n, delta, 2, "gaussian"))
        assert float(stat.value) == pytest.approx(n * gap**2 / (4 * sigma**2), rel=1e-6)
        assert bool(stop) == (float(stat.value) > beta) == bool(again)
        seen.append(bool(stop))
    first = seen.index(True)
    assert not any(seen[:first]) and all(seen[first:]) and 10 < first < 399
