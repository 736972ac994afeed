"""Schedule- and table-based policies on padded instances (by-K tables, ``prepare``).

A factory built for K_max = 8 arms with a concrete budget runs, on an instance whose
5 real arms sit at random positions, exactly what the same policy built for 5 arms
runs on the compact instance fed the same reward table (arm sequence mapped back,
same output). The ``prepare`` hook gives the same run from inside ``jit`` with a
traced budget, and its schedules of several cells stack under ``vmap``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.analysis import metrics
from jbandits.envs import REPLAY, ReplayParams
from jbandits.policies import identification, thresholding
from jbandits.policies.blocks import schedules

K_MAX, K_REAL = 8, 5


class Case(NamedTuple):
    name: str  # test id
    registered: str  # the registered name
    family: Any  # jbandits.policies.identification or .thresholding
    static: dict  # static keyword arguments (variant)
    traced: Any  # (rng, num_arms) -> dict of per-cell keyword arguments
    min_budget: Any  # K -> smallest budget with a schedule

    def factory(self):
        return jbandits.core.registry.raw_factory(self.registered)

    def prepare(self):
        return jbandits.core.registry.prepare_hook(self.registered)


def _none(rng, k):
    return {}


def _sr_min(k):
    return k + 1


def _sh_min(k):
    return k * schedules.num_halving_stages(k)


CASES = [
    Case("sr", "successive_rejects", identification, {}, _none, _sr_min),
    Case("sar", "sar", identification, {}, lambda rng, k: {"m": 2}, _sr_min),
    Case(
        "sh_equal_stages",
        "sequential_halving",
        identification,
        {"variant": "equal_stages"},
        _none,
        _sh_min,
    ),
    Case(
        "sh_karnin",
        "sequential_halving",
        identification,
        {"variant": "karnin"},
        _none,
        _sh_min,
    ),
    Case(
        "shvar",
        "shvar",
        identification,
        {},
        lambda rng, k: {"variances": rng.uniform(0.1, 2.0, k)},
        _sh_min,
    ),
    Case(
        "shadavar",
        "shadavar",
        identification,
        {},
        lambda rng, k: {"delta": 0.3},
        _sh_min,
    ),
    Case(
        "vbr",
        "vbr_provisional",
        identification,
        {},
        lambda rng, k: {"gamma": 1.0},
        _sr_min,
    ),
    Case(
        "csar",
        "csar",
        thresholding,
        {},
        lambda rng, k: {"threshold": 0.5},
        _sr_min,
    ),
    Case(
        "csar_authors",
        "csar",
        thresholding,
        {"variant": "authors_code"},
        lambda rng, k: {"threshold": 0.5},
        _sr_min,
    ),
    Case(
        "augucb",
        "augucb",
        thresholding,
        {},
        lambda rng, k: {"threshold": 0.5},
        _sr_min,
    ),
    Case(
        "augucb_authors",
        "augucb",
        thresholding,
        {"variant": "authors_code"},
        lambda rng, k: {"threshold": 0.5},
        _sr_min,
    ),
]
IDS = [c.name for c in CASES]


class Padded(NamedTuple):
    real: np.ndarray  # [K_REAL] positions of the real arms among K_MAX
    mask: np.ndarray  # [K_MAX] bool
    compact: np.ndarray  # [K_REAL, T] rewards
    table: np.ndarray  # [K_MAX, T] rewards, padded rows are decoys
    traced_compact: dict
    traced_padded: dict


def _embed(rng, compact: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(real positions, mask, table): ``compact``'s rows at random positions among
    K_MAX; padded rows pay 10, so a padded arm would look best if it were pulled."""
    real = np.sort(rng.choice(K_MAX, size=len(compact), replace=False))
    mask = np.zeros(K_MAX, bool)
    mask[real] = True
    table = np.full((K_MAX, compact.shape[1]), 10.0)
    table[real] = compact
    return real, mask, table


def _padded_instance(case: Case, seed: int, budget: int) -> Padded:
    rng = np.random.default_rng(seed)
    means = rng.uniform(0.2, 0.8, K_REAL)
    compact = means[:, None] + 0.5 * rng.standard_normal((K_REAL, budget))
    real, mask, table = _embed(rng, compact)
    traced = case.traced(rng, K_REAL)
    padded = {}
    for key, value in traced.items():  # per-arm arrays move to the real positions
        if np.ndim(value) == 1:
            full = np.ones(K_MAX)
            full[real] = value
            value = full
        padded[key] = value
    return Padded(real, mask, compact, table, traced, padded)


def _params(table, mask, means=None):
    means = jnp.zeros(mask.shape) if means is None else means
    return ReplayParams(
        table=table, means=means, stds=jnp.zeros(mask.shape), arm_mask=mask
    )


def _run(policy, table, mask, budget, horizon=None, **kwargs):
    return jbandits.run(
        policy,
        REPLAY,
        _params(jnp.asarray(table), jnp.asarray(mask)),
        jax.random.key(0),
        budget=budget,
        horizon=budget if horizon is None else horizon,
        record_arms=True,
        **kwargs,
    )


def _play(case: Case, num_arms, table, mask, budget, **traced):
    policy = case.factory()(num_arms, budget=budget, **case.static, **traced)
    res = jax.jit(lambda: _run(policy, table, mask, budget))()
    return np.asarray(res.arms), np.asarray(res.output)


def _play_prepared(case: Case, table, mask, budget, k_real=None, **traced):
    """Factory called inside jit with a traced budget and ``prepare``'s kwargs (for
    ``k_real`` real arms; default: the mask's)."""
    k_real = int(mask.sum()) if k_real is None else k_real
    extra = case.prepare()(K_MAX, k_real, budget, **case.static, **traced)

    @jax.jit
    def go(b, extra, traced):
        policy = case.factory()(K_MAX, budget=b, **case.static, **traced, **extra)
        return _run(policy, table, mask, b, horizon=budget)

    res = go(jnp.int32(budget), extra, traced)
    return np.asarray(res.arms), np.asarray(res.output)


def _to_padded(real: np.ndarray, arms: np.ndarray) -> np.ndarray:
    return np.where(arms >= 0, real[np.maximum(arms, 0)], -1)


def _check_output(case: Case, inst: Padded, out, compact_out):
    if np.ndim(compact_out) == 0:  # best arm
        assert int(out) == int(_to_padded(inst.real, np.asarray(compact_out)))
        assert int(out) >= 0
    else:  # arm set / labels
        np.testing.assert_array_equal(out[inst.real], compact_out)
        assert not out[~inst.mask].any()


@pytest.mark.parametrize("case", CASES, ids=IDS)
@pytest.mark.parametrize("seed, budget", [(0, 57)])
def test_padded_run_equals_compact_run(case, seed, budget):
    inst = _padded_instance(case, seed, budget)
    ones = np.ones(K_REAL, bool)
    c_arms, c_out = _play(
        case, K_REAL, inst.compact, ones, budget, **inst.traced_compact
    )
    arms, out = _play(case, K_MAX, inst.table, inst.mask, budget, **inst.traced_padded)
    used = int((c_arms >= 0).sum())
    assert used >= budget // 2  # CSAR (authors' code) spends about half of it
    assert inst.mask[arms[arms >= 0]].all()  # real arms only
    np.testing.assert_array_equal(arms, _to_padded(inst.real, c_arms))
    _check_output(case, inst, out, c_out)

    p_arms, p_out = _play_prepared(
        case, inst.table, inst.mask, budget, **inst.traced_padded
    )
    np.testing.assert_array_equal(p_arms, arms)
    np.testing.assert_array_equal(p_out, out)


# One case per schedule family in the default suite, all of them in the slow set
# (each case compiles its own programs; the default suite must fit in 10 minutes).
DEFAULT_IDS = ("sr", "sh_karnin", "augucb")
SOME = [
    pytest.param(c, id=i, marks=() if i in DEFAULT_IDS else pytest.mark.slow)
    for c, i in zip(CASES, IDS, strict=True)
]


@pytest.mark.parametrize("case", SOME)
def test_budget_too_small_for_the_real_k_idles(case):
    budget = case.min_budget(K_REAL) - 1  # no schedule for 5 arms (K_max = 8 also)
    inst = _padded_instance(case, 2, budget)
    arms, out = _play(case, K_MAX, inst.table, inst.mask, budget, **inst.traced_padded)
    assert (arms == -1).all()
    p_arms, p_out = _play_prepared(
        case, inst.table, inst.mask, budget, **inst.traced_padded
    )
    assert (p_arms == -1).all()
    np.testing.assert_array_equal(p_out, out)
    if np.ndim(out) == 0:
        assert int(out) == -1


@pytest.mark.parametrize("case", SOME)
def test_a_schedule_for_another_k_idles(case):
    """One padding convention (schedules.select): a schedule runs only on instances
    with the real K it was built for; on any other the policy is idle (-1)."""
    budget = 57
    inst = _padded_instance(case, 5, budget)
    for k in (K_REAL - 1, K_REAL + 1):
        arms, out = _play_prepared(
            case, inst.table, inst.mask, budget, k_real=k, **inst.traced_padded
        )
        assert (arms == -1).all()
        assert int(out) == -1 if np.ndim(out) == 0 else not out.any()


@pytest.mark.parametrize("case", SOME)
def test_prepared_cells_stack_under_vmap(case):
    """Cells with different (K_real, budget) share one compilation via prepare."""
    cells = [(3, 23), (8, 64), (2, 9), (5, 5)]  # (5, 5): no schedule
    horizon = max(b for _, b in cells)
    rng = np.random.default_rng(3)
    masks, tables, extras, traced, expect = [], [], [], [], []
    for k, budget in cells:
        mask = np.zeros(K_MAX, bool)
        mask[rng.choice(K_MAX, size=k, replace=False)] = True
        table = np.where(mask[:, None], rng.standard_normal((K_MAX, horizon)), 10.0)
        hp = case.traced(rng, K_MAX)
        extra = case.prepare()(K_MAX, k, budget, **case.static, **hp)
        masks.append(mask)
        tables.append(table)
        extras.append(extra)
        traced.append(hp)
        arms, out = _play(case, K_MAX, table[:, :budget], mask, budget, **hp)
        expect.append((arms, out))

    def stack(dicts):
        return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *dicts)

    def one(table, mask, b, extra, hp):
        policy = case.factory()(K_MAX, budget=b, **case.static, **hp, **extra)
        res = _run(policy, table, mask, b, horizon=horizon)
        return res.arms, res.output

    budgets = jnp.asarray([b for _, b in cells], jnp.int32)
    arms, out = jax.jit(jax.vmap(one))(
        jnp.asarray(np.stack(tables)),
        jnp.asarray(np.stack(masks)),
        budgets,
        stack(extras),
        stack(traced),
    )
    for i, (_, budget) in enumerate(cells):
        np.testing.assert_array_equal(np.asarray(arms[i, :budget]), expect[i][0])
        assert (np.asarray(arms[i, budget:]) == -1).all()
        np.testing.assert_array_equal(np.asarray(out[i]), expect[i][1])


def test_sar_reports_a_real_error_rate_when_padded():
    """SAR on padded instances: a top-m error rate strictly between 0 and 1, equal
    instance by instance to the compact runs' (same reward tables)."""
    budget, num = 40, 64
    rng = np.random.default_rng(4)
    means = np.linspace(0.6, 0.4, K_REAL)
    compact = means[:, None] + 0.5 * rng.standard_normal((num, K_REAL, budget))
    padded = [_embed(rng, c) for c in compact]

    def errors(num_arms, tables, masks, mean_rows):
        policy = jbandits.sar(num_arms, m=2, budget=budget)

        def one(table, mask, mu):
            res = jbandits.run(
                policy,
                REPLAY,
                _params(table, mask, mu),
                jax.random.key(0),
                budget=budget,
                horizon=budget,
                metric=metrics.top_m(2),
            )
            return res.metrics["error"][-1]

        return np.asarray(jax.jit(jax.vmap(one))(tables, masks, mean_rows))

    mean_rows = np.zeros((num, K_MAX))
    for i, (real, _, _) in enumerate(padded):
        mean_rows[i, real] = means
    err = errors(
        K_MAX,
        jnp.asarray(np.stack([table for _, _, table in padded])),
        jnp.asarray(np.stack([mask for _, mask, _ in padded])),
        jnp.asarray(mean_rows),
    )
    reference = errors(
        K_REAL,
        jnp.asarray(compact),
        jnp.ones((num, K_REAL), bool),
        jnp.asarray(np.tile(means, (num, 1))),
    )
    np.testing.assert_array_equal(err, reference)
    assert 0.0 < err.mean() < 1.0
