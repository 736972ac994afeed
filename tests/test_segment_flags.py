"""The engine's segment loop under a named lanes axis carries its flags.

Under ``axis_name`` the loop over segments (:class:`jbandits.sim.segments.Segments`)
works out "some lane is live" and "some lane can run out of budget in the next
segment" once per segment, at its end, in the same pass over the lanes as the redo
test, and carries them: the loop's condition reads a carried predicate (on a GPU no
kernel; it reduced over the lanes before, issue 61 item 4) and a segment starts with
no reduction over the lanes. Results: ``tests/test_engine_fast.py``.
"""

import jax
import numpy as np

import jbandits
from jbandits.sim import engine


def _segment_loop(jaxpr):
    """The while loop whose body holds the scan over a segment's steps."""
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "while":
            body = eqn.params["body_jaxpr"].jaxpr
            if any(e.primitive.name == "cond" for e in body.eqns):
                return eqn
        for sub in jax.core.jaxprs_in_params(eqn.params):
            found = _segment_loop(sub)
            if found is not None:
                return found
    return None


def _primitives(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn.primitive.name
        for sub in jax.core.jaxprs_in_params(eqn.params):
            yield from _primitives(sub)


def test_the_segment_loop_condition_reads_a_carried_flag():
    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.7, 5))
    policy = jbandits.make("apt", num_arms=5, threshold=0.5)

    def one(key, budget):
        return engine.run(
            policy, bandit, params, key, budget=budget, horizon=200,
            num_checkpoints=2, axis_name="lanes",
        ).regret  # fmt: skip

    keys = jax.random.split(jax.random.key(0), 4)
    budgets = np.array([200, 150, 200, 90], np.int32)
    closed = jax.make_jaxpr(jax.vmap(one, axis_name="lanes"))(keys, budgets)
    loop = _segment_loop(closed.jaxpr)
    assert loop is not None
    cond = list(_primitives(loop.params["cond_jaxpr"].jaxpr))
    assert not {"psum", "pmax", "pmin", "reduce_sum", "reduce_max", "reduce_or"} & set(
        cond
    ), cond
    # the body's first lane reduction comes after the segment's steps
    body = loop.params["body_jaxpr"].jaxpr
    first = [e.primitive.name for e in body.eqns]
    assert "cond" in first
    before = first[: first.index("cond")]
    assert not {"psum", "pmax", "pmin"} & set(before), before


def test_the_leaves_no_step_changes_are_recognised():
    """Sequential Halving's state carries its schedule, which its step returns as
    it is: the segment loop takes those leaves from its carry (no restoring
    select); every other leaf is restored."""
    from jbandits.sim import segments

    policy = jbandits.make("sequential_halving", num_arms=6, budget=256)
    state = policy.init(jax.random.key(0), np.ones(6, bool))
    kept = segments.kept_leaves(policy, state, np.float32(0.5))
    sched = len(jax.tree_util.tree_leaves(state.sched))
    assert len(kept) == len(jax.tree_util.tree_leaves(state))
    assert kept[-sched:] == (True,) * sched
    assert not any(kept[:-sched])


def test_sequential_halving_fast_segments_equal_guarded_steps():
    from test_engine_fast import BUDGETS, _runs

    bandit, params = jbandits.envs.bernoulli(np.linspace(0.2, 0.8, 6))
    policy = jbandits.make("sequential_halving", num_arms=6, budget=256)
    fast = _runs(policy, bandit, params, "lanes")
    slow = _runs(policy, bandit, params, None)
    for field in ("pulls", "num_pulls", "stopped", "output", "regret", "reward"):
        np.testing.assert_array_equal(
            np.asarray(getattr(fast, field)), np.asarray(getattr(slow, field)), field
        )
    assert int(np.asarray(fast.num_pulls).min()) == BUDGETS.min()
