"""The GPU form of the XLA step (``Execution.one_hot_arms``) pulls the same arms as the
CPU form: one-hot reads and writes of the pulled arm instead of gathers and scatters
(``arms.update``), a "first" selection in one pass at
any K (issue 61, item 4). Both forms run here, on CPU, and are compared exactly."""

from __future__ import annotations

import jax
import jax.extend
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.core.execution import Execution
from jbandits.policies.blocks import arms

CPU = Execution(one_hot_arms=False)
GPU = Execution(one_hot_arms=True, kept_column=True)
KERNEL = Execution(one_hot_arms=True)  # as the fused kernel builds policies on a GPU


def test_gpu_platforms_get_the_one_hot_form_and_cpu_keeps_gathers():
    from jbandits.sim.runner import programs

    for platform in ("cuda", "cpu"):
        policy = jbandits.make("apt", num_arms=12, threshold=0.5)
        source, _ = programs.source_of(policy)
        ex = programs.execution_of(source, programs.Options(), platform)
        assert ex.one_hot_arms == (platform == "cuda")
        assert ex.kept_column == (platform == "cuda")
    assert Execution.for_platform("cuda").one_hot_arms
    assert Execution.for_platform("gpu").one_hot_arms
    assert not Execution.for_platform("cpu").one_hot_arms


@pytest.mark.parametrize("variance", [False, True])
@pytest.mark.parametrize("extra", [0, 1])
def test_one_hot_update_equals_gather_scatter(variance, extra):
    rng = np.random.default_rng(3)
    k = 7
    stats = arms.init_stats(k, variance, extra=extra)
    table = rng.normal(size=stats.table.shape).astype(np.float32)
    table[..., 2] = [np.inf, np.nan, -0.0, 5.0, 1.0, -np.inf][: table.shape[0]]
    stats = arms.ArmStats.from_table(jnp.asarray(table), variance)
    derive = (lambda col: 2.0 * col.sums + col.counts) if extra else None
    for arm in (-1, 0, 3, 6):
        for weight in (True, False):
            want = arms.update(stats, arm, 0.75, weight, derive)
            got = arms.update(stats, arm, 0.75, weight, derive, one_hot=True)
            np.testing.assert_array_equal(got.table, want.table)


def test_one_pass_selection_at_any_k_equals_the_default_forms():
    rng = np.random.default_rng(5)
    values = np.float32([0.0, -0.0, 0.25, 0.5, np.nan, -np.inf, np.inf])
    for k in (12, 40, 100):  # the tree (<= 64) and two-pass (> 64) forms
        score = jnp.asarray(rng.choice(values, size=(64, k)))
        ok = jnp.asarray(rng.random((64, k)) < 0.7)
        for select in (arms.argmin_masked, arms.argmax_masked):
            for tree in (False, True):
                want = jax.vmap(lambda s, e: select(s, e, tree=tree))(score, ok)
                got = jax.vmap(lambda s, e: select(s, e, tree=tree, one_pass=True))(
                    score, ok
                )
                np.testing.assert_array_equal(got, want)


def _step_primitives(policy, k):
    state = policy.init(jax.random.key(0), jnp.ones(k, bool))
    jaxpr = jax.make_jaxpr(lambda s: policy.step(s, jax.random.key(1), 1.0))(state)
    return {str(e.primitive) for e in jaxpr.jaxpr.eqns}


@pytest.mark.parametrize(
    ("name", "kw"),
    [("apt", {"threshold": 0.5}), ("ucb1", {}), ("thompson", {"posterior": "gauss"})],
)
def test_the_gpu_form_has_no_scatter_in_the_step(name, kw):
    cpu = _step_primitives(jbandits.make(name, num_arms=12, execution=CPU, **kw), 12)
    gpu = _step_primitives(jbandits.make(name, num_arms=12, execution=GPU, **kw), 12)
    assert "scatter" in cpu or "scatter-add" in cpu
    assert not any(p.startswith("scatter") for p in gpu)


CASES = [
    ("apt", 5, {"threshold": 0.5, "epsilon": 0.05}),  # one-pass either way
    ("apt", 12, {"threshold": 0.5, "epsilon": 0.05}),  # tree on CPU, one pass on GPU
    ("apt", 70, {"threshold": 0.5}),  # two passes on CPU
    ("ucb1", 12, {}),
    ("ucb1", 12, {"tie_break": "first"}),
    ("thompson", 12, {"posterior": "gauss"}),
    ("sequential_halving", 12, {"budget": 240}),
]


@pytest.mark.parametrize(("name", "k", "kw"), CASES)
def test_both_forms_pull_the_same_arms(name, k, kw):
    means = np.linspace(0.1, 0.9, k)
    bandit, params = jbandits.envs.bernoulli(means)
    for record in (True, False):  # guarded steps, and the unguarded fast segments
        runs = []
        for ex in (CPU, GPU):
            policy = jbandits.make(name, num_arms=k, execution=ex, **kw)
            res = jbandits.simulate(
                policy, bandit, params, jax.random.key(7), budget=240, num_reps=6,
                num_checkpoints=3, record_arms=record, progress=False, execution=ex,
            )  # fmt: skip
            runs.append(res)
        cpu, gpu = runs
        for field in ("pulls", "reward", "regret", "arms", "metrics"):
            a, b = getattr(cpu, field, None), getattr(gpu, field, None)
            leaves_a, leaves_b = (
                jax.tree_util.tree_leaves(a),
                jax.tree_util.tree_leaves(b),
            )
            assert len(leaves_a) == len(leaves_b)
            for x, y in zip(leaves_a, leaves_b, strict=True):
                np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
        assert np.asarray(cpu.pulls).sum() == 6 * 240


def _all_primitives(jaxpr) -> list[str]:
    out = []
    for e in jaxpr.eqns:
        out.append(str(e.primitive))
        for sub in jax.extend.core.jaxprs_in_params(e.params):
            out += _all_primitives(sub)
    return out


def test_the_gpu_form_of_apt_updates_without_a_reduction_over_the_arms():
    """The GPU step (``kept_column``) reads the pulled arm's column from the state
    (read where the arm was chosen), so its update is one select: no masked-sum
    reduction over the arms (a kernel of its own on a GPU); the CPU form gathers it
    and scatters it back, the fused kernel's form reads it as a masked sum."""
    k = 12
    prims = {}
    for ex in (GPU, CPU):
        policy = jbandits.make("apt", num_arms=k, threshold=0.5, execution=ex)
        state = policy.init(jax.random.key(0), jnp.ones(k, bool))
        jaxpr = jax.make_jaxpr(lambda s, p=policy: p.step(s, jax.random.key(1), 1.0))
        prims[ex] = _all_primitives(jaxpr(state).jaxpr)
    assert "reduce_sum" not in prims[GPU]
    assert not any(p.startswith("scatter") for p in prims[GPU])
    assert "scatter" in prims[CPU]
    policy = jbandits.make("apt", num_arms=k, threshold=0.5, execution=KERNEL)
    state = policy.init(jax.random.key(0), jnp.ones(k, bool))
    assert state.column is None and state.succ is None
    jaxpr = jax.make_jaxpr(lambda s: policy.step(s, jax.random.key(1), 1.0))(state)
    assert "reduce_sum" in _all_primitives(jaxpr.jaxpr)


@pytest.mark.parametrize(("name", "kw"), [("apt", {"threshold": 0.5}), ("ucb1", {})])
def test_the_gpu_state_keeps_the_next_arms_column_and_successor(name, kw):
    k = 9
    mask = jnp.asarray([True, True, False, True, True, True, False, True, True])
    policy = jbandits.make(name, num_arms=k, execution=GPU, **kw)
    state = policy.init(jax.random.key(0), mask)
    rng = np.random.default_rng(1)
    for t in range(40):
        want = arms.column_of(state.stats, state.arm)
        assert len(state.column) == len(want)
        for got, w in zip(state.column, want, strict=True):
            np.testing.assert_array_equal(got, w)
        if state.succ is not None:
            assert int(state.succ) == int(arms.next_real(state.arm, mask))
        if name == "ucb1":  # its index reads the pulls: the forced ones, kept
            assert int(state.forced_until) == int(mask.sum())
        state = policy.step(state, jax.random.key(t), float(rng.random() < 0.5))


@pytest.mark.parametrize("name", ["apt", "ucb1"])
def test_both_forms_pull_the_same_arms_with_padded_arms(name):
    """Padded arms (K = 100 padded to 128, as a GPU chunk runs it, and a hole in the
    middle): the forced round robin's successor and the last real arm."""
    means = np.linspace(0.1, 0.9, 128)
    mask = np.arange(128) < 100
    mask[37] = False
    bandit, params = jbandits.envs.bernoulli(means, arm_mask=mask)
    kw = {"threshold": 0.5, "epsilon": 0.05} if name == "apt" else {}
    runs = []
    for ex in (CPU, GPU, KERNEL):
        policy = jbandits.make(name, num_arms=128, execution=ex, **kw)
        res = jbandits.simulate(
            policy, bandit, params, jax.random.key(3), budget=300, num_reps=4,
            num_checkpoints=2, record_arms=True, progress=False, execution=ex,
        )  # fmt: skip
        runs.append(res)
    for other in runs[1:]:
        np.testing.assert_array_equal(np.asarray(runs[0].arms), np.asarray(other.arms))
        np.testing.assert_array_equal(
            np.asarray(runs[0].pulls), np.asarray(other.pulls)
        )
    assert np.asarray(runs[0].pulls)[..., 37].sum() == 0


def test_the_unrolled_random_tie_picks_the_same_arm():
    """``Execution.one_hot_arms``' random tie (prefix counts written out over the
    packed words) gives the arm of the scan form, over 1 to 7 words, sparse and
    dense tied sets and none."""
    from jbandits.policies.blocks.arms.selection import _random_tied

    rng = np.random.default_rng(11)
    for k in (12, 40, 100, 128, 200):
        for density in (0.0, 0.02, 0.3, 1.0):
            tied = jnp.asarray(rng.random((64, k)) < density)
            keys = jax.random.split(jax.random.key(k), 64)
            want = jax.vmap(_random_tied)(tied, keys)
            got = jax.vmap(lambda t, s: _random_tied(t, s, unrolled=True))(tied, keys)
            np.testing.assert_array_equal(got, want)
            if density == 0.0:
                assert np.all(np.asarray(got) == -1)
