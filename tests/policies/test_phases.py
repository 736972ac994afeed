"""jbandits.policies.blocks.phases: phase ends as fixed-shape updates (no data-dependent loop)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _identification_util import ladder, play

import jbandits
from jbandits.core.execution import Execution
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases
from jbandits.policies.identification import sr_schedule_by_k, successive_rejects


def _drop_by_repeated_selection(score, eligible, count, largest):
    pick = arms.argmax_masked if largest else arms.argmin_masked
    left = np.asarray(eligible).copy()
    for _ in range(count):
        i = int(pick(jnp.asarray(score), jnp.asarray(left)))
        if i >= 0:
            left[i] = False
    return left


@pytest.mark.parametrize("largest", [False, True])
def test_drop_equals_repeated_arg_min_or_max(largest):
    rng = np.random.default_rng(3)
    n, k = 40, 6
    score = rng.choice(np.float32([0.0, 0.25, 0.5, np.nan, -np.inf]), size=(n, k))
    eligible = rng.random((n, k)) < 0.8
    count = rng.integers(0, 4, n)

    def run(bound, fixed=False):
        ex = Execution(fixed_phase_sorts=fixed)

        def fn(s, e, c):
            return _phases.drop(s, e, c, bound, execution=ex, largest=largest)

        return np.asarray(jax.jit(jax.vmap(fn))(score, eligible, count))

    unrolled = run(3)  # bound 3 <= UNROLL: unrolled arg-min/max
    ranked = run(None, fixed=True)  # unknown bound, fixed shape: one ranking
    looped = run(None)  # unknown bound, CPU default: while loop
    for i in range(n):
        want = _drop_by_repeated_selection(score[i], eligible[i], count[i], largest)
        np.testing.assert_array_equal(unrolled[i], want)
        np.testing.assert_array_equal(ranked[i], want)
        np.testing.assert_array_equal(looped[i], want)


def test_max_ends_counts_phases_ending_on_one_step():
    sched = schedules.successive_rejects(8, 10)  # every n_k = 1: 7 phases end at 8
    assert _phases.max_ends(sched.ends, sched.num_phases) == 7
    table = sr_schedule_by_k(100, 10_000)  # K = 100: four phases end at step 2200
    assert _phases.max_ends(table.ends, table.num_phases) >= 4
    sched = schedules.successive_rejects(5, 100)
    assert _phases.max_ends(sched.ends, sched.num_phases) == 1
    traced = jax.jit(lambda e: _phases.max_ends(e, sched.num_phases) is None)
    assert traced(sched.ends)  # unknown when traced


def test_end_phases_unrolled_matches_the_loop():
    ends = jnp.asarray([3, 3, 5, 9, 9, 9], jnp.int32)

    def run(t, bound):
        def end_fn(p, trail):
            return trail * 10 + p + 1

        return _phases.end_phases(
            jnp.int32(0), t, ends, 6, end_fn, jnp.int32(0), bound,
            execution=Execution(),
        )  # fmt: skip

    for t in range(11):
        want = run(jnp.int32(t), None)  # lax.while_loop
        got = jax.jit(lambda t: run(t, 6))(jnp.int32(t))
        assert [int(x) for x in got] == [int(x) for x in want], t


def test_sr_two_phases_end_on_one_step_concrete_schedule():
    # K = 4, T = 8: n = (1, 1, 2), phases 1 and 2 both end at step 4
    sched = schedules.successive_rejects(4, 8)
    np.testing.assert_array_equal(sched.ends, [4, 4, 6])
    arms_, out, pulls = play(successive_rejects(4, budget=8), ladder(4, 8), 8)
    # arms 0 and 1 (lowest means) go together at step 4; 2 and 3 race to 2 pulls
    np.testing.assert_array_equal(arms_, [0, 1, 2, 3, 2, 3, -1, -1])
    np.testing.assert_array_equal(pulls, [1, 1, 2, 2])
    assert int(out) == 3


def _whiles(policy, num_arms):
    mask = jnp.ones(num_arms, bool)
    state = policy.init(jax.random.key(0), mask)
    step = jax.jit(policy.step).lower(state, jax.random.key(1), jnp.float32(0.0))
    return len(re.findall(r"\bwhile\(%", step.compile().as_text()))


@pytest.mark.parametrize(
    ("name", "kwargs", "sorts"),
    [
        ("successive_rejects", {}, False),
        ("vbr_provisional", {}, False),
        ("csar", {"threshold": 0.5}, False),
        ("csar", {"threshold": 0.5, "variant": "authors_code"}, False),
        ("sar", {"m": 2}, True),
        ("sequential_halving", {}, True),
    ],
)
def test_no_while_loop_in_a_phase_policy_step(name, kwargs, sorts):
    # concrete schedules: no loop; updates that sort keep it on CPU unless forced
    policy = jbandits.make(name, num_arms=4, budget=40, **kwargs)
    assert _whiles(policy, 4) == int(sorts and jax.default_backend() == "cpu")
    fixed = Execution(fixed_phase_sorts=True)
    policy = jbandits.make(name, num_arms=4, budget=40, execution=fixed, **kwargs)
    assert _whiles(policy, 4) == 0
    # fixed_phase_sorts=False asks for the loop where an update sorts
    loop = Execution(fixed_phase_sorts=False)
    policy = jbandits.make(name, num_arms=4, budget=40, execution=loop, **kwargs)
    assert _whiles(policy, 4) == int(sorts)


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "successive_rejects",
        "sar",
        "sequential_halving_karnin",
        "shadavar",
        "vbr_provisional",
        "csar[paper]",
        "csar[authors_code]",
    ],
)
def test_fixed_shape_phase_ends_match_the_references(name):
    from cases import CASES
    from harness import check_case

    case = next(c for c in CASES if c.name == name)
    make = case.make_policy
    fixed = Execution(fixed_phase_sorts=True)
    case = case._replace(make_policy=lambda **hp: make(**hp, execution=fixed))
    assert check_case(case, seed=1, num_instances=100) >= 100


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("sequential_halving", {}),
        pytest.param("successive_rejects", {}, marks=pytest.mark.slow),
        pytest.param("sar", {"m": 2}, marks=pytest.mark.slow),
        pytest.param("csar", {"threshold": 0.5}, marks=pytest.mark.slow),
        pytest.param("vbr_provisional", {}, marks=pytest.mark.slow),
    ],
)
def test_every_phase_form_gives_the_same_runs_in_the_runner(name, kwargs):
    # the batched runner names its lanes axis, so the gate's lax.cond is a real branch
    # there (it is a select under a plain vmap): the fixed-shape form, gated or not,
    # and the CPU loop form must give the same arms at every step
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 8))

    def arms_of(execution):
        policy = jbandits.make(name, num_arms=8, budget=120, **kwargs)
        res = jbandits.simulate(
            policy, bandit, params, jax.random.key(3), budget=120, num_reps=12,
            progress=False, record_arms=True, execution=execution,
        )  # fmt: skip
        return np.asarray(res.arms), np.asarray(res.output)

    loop = arms_of(Execution(fixed_phase_sorts=False, gate=False))
    assert (loop[0][:, :60] >= 0).all()  # the runs played
    for execution in [
        Execution(fixed_phase_sorts=True, gate=True),
        Execution(fixed_phase_sorts=True, gate=False),
        None,  # the platform's default
    ]:
        got = arms_of(execution)
        np.testing.assert_array_equal(got[0], loop[0])
        np.testing.assert_array_equal(got[1], loop[1])


@pytest.mark.slow  # 10 s on a 2-core machine: CI runs it in the slow step
def test_gated_sort_runs_in_a_conditional_not_every_step():
    # fixed-shape halving: the sort sits inside the step's conditional branch
    from benchmarks import hlo

    bandit, params = jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 8))

    def sorts_per_step(gate):
        execution = Execution(fixed_phase_sorts=True, gate=gate)
        policy = jbandits.make(
            "sequential_halving", num_arms=8, budget=120, execution=execution
        )
        text = hlo.engine_program_text(policy, bandit, params, 120, lanes=4)
        body = hlo.step_kernels(text, 32)[0]
        every_step = body.get("sort", 0) + body.get("custom-call", 0)
        return every_step, body.get(hlo.BRANCH, 0)

    assert sorts_per_step(False)[0] >= 1  # ungated: a sort in every step
    sorts, in_branch = sorts_per_step(True)
    assert sorts == 0 and in_branch >= 1
