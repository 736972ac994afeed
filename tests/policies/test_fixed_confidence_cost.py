"""Per-step cost of the fixed-confidence policies (issue 63): the rare work (TTTS's
fallback quadrature, lazy Track-and-Stop's ``w*``) runs under ``vmap`` only at the
steps where some lane needs it (:func:`jbandits.policies.blocks.tracking.
when_any`), with the values of the unbatched call. Calls are counted with a
``jax.debug.callback`` inside the counted function: a branch that is not taken does
not run it, a ``select`` over both branches (a plain ``lax.cond`` under ``vmap``) does.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms, posterior, tracking, tstar
from jbandits.policies.fixed_confidence.track_and_stop import track_and_stop
from jbandits.policies.fixed_confidence.ttts import ttts


def _counted(monkeypatch, module, name) -> list:
    """Patch ``module.name`` to log one entry per executed call."""
    calls, original = [], getattr(module, name)

    def wrapped(*args, **kwargs):
        jax.debug.callback(lambda: calls.append(1))
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, wrapped)
    return calls


def _expensive(x, y):
    jax.debug.callback(lambda: _expensive.calls.append(1))
    return {"a": 2.0 * x + y, "b": jnp.sum(x)}


def _cheap(x, y):
    del y
    return {"a": jnp.zeros_like(x), "b": jnp.zeros((), x.dtype)}


def test_when_any_runs_the_rare_branch_only_when_a_lane_needs_it():
    x = jnp.arange(12.0).reshape(4, 3)
    y = jnp.float32(1.0)
    fn = jax.jit(jax.vmap(lambda p, x: tracking.when_any(p, _expensive, _cheap, x, y)))
    _expensive.calls = []
    none = jax.block_until_ready(fn(jnp.zeros(4, bool), x))
    assert _expensive.calls == []  # a select over both branches would run it
    np.testing.assert_array_equal(none["a"], 0.0)
    one = jnp.array([False, True, False, False])
    got = jax.block_until_ready(fn(one, x))
    assert len(_expensive.calls) == 1
    for lane in range(4):
        want = (_expensive if one[lane] else _cheap)(x[lane], y)
        np.testing.assert_array_equal(got["a"][lane], want["a"])
        assert got["b"][lane] == want["b"]
    # nested vmap: one level's any-lane predicate is batched at the next
    _expensive.calls = []
    twice = jax.jit(jax.vmap(jax.vmap(lambda p, x: tracking.when_any(
        p, _expensive, _cheap, x, y))))  # fmt: skip
    out = jax.block_until_ready(twice(jnp.stack([one, one & False]), jnp.stack([x, x])))
    np.testing.assert_array_equal(out["a"][0], got["a"])
    np.testing.assert_array_equal(out["a"][1], 0.0)
    assert len(_expensive.calls) == 1


def _lanes(policy, num_arms, lanes, counts, sums):
    """``lanes`` states after the round robin, with the given statistics."""
    mask = jnp.ones((lanes, num_arms), bool)
    state = jax.vmap(policy.init)(jax.random.split(jax.random.key(0), lanes), mask)
    stats = arms.ArmStats(jnp.full((lanes, num_arms), counts, jnp.float32),
                          jnp.full((lanes, num_arms), sums, jnp.float32))  # fmt: skip
    t = jnp.full((lanes,), num_arms * counts - 1, jnp.int32)
    return state._replace(stats=stats, t=t, arm=jnp.zeros((lanes,), jnp.int32))


@pytest.mark.parametrize("cap, needed", [(16, False), (0, True)])
def test_ttts_quadrature_runs_only_when_some_lane_falls_back(monkeypatch, cap, needed):
    """Flat posteriors over 10 arms: 16 resamples all return the leader with
    probability 1e-16, so the fallback's quadrature never runs; with a cap of 0 every
    challenger step falls back and it runs."""
    calls = _counted(monkeypatch, posterior, "best_arm_probabilities")
    policy = ttts(10, delta=1e-12, max_resamples=cap)
    state = _lanes(policy, 10, 8, 2.0, 1.0)
    step = jax.jit(jax.vmap(policy.step))
    for n in range(6):
        keys = jax.random.split(jax.random.key(n + 1), 8)
        new = jax.block_until_ready(step(state, keys, jnp.full((8,), 0.5)))
        assert bool(jnp.all(new.arm >= 0))
    assert bool(calls) == needed


def test_lazy_track_and_stop_solves_at_the_geometric_times_only(monkeypatch):
    """Lanes in lockstep from t = K = 6: w* is solved at t = 6, 12, 24, 48 (laziness
    2) and at no other step, while the exact rule solves at every step."""
    calls = _counted(monkeypatch, tstar, "optimal_weights")
    solved = {}
    for lazy in (True, False):
        policy = track_and_stop(6, delta=1e-12, lazy=lazy)
        state = _lanes(policy, 6, 4, 1.0, 0.0)
        state = state._replace(t=state.t * 0 + 5)  # the round robin's last pull
        step = jax.jit(jax.vmap(policy.step))
        rewards = np.random.default_rng(0).random((60, 4)) < 0.5
        solved[lazy] = []
        for n in range(60):
            calls.clear()
            keys = jax.random.split(jax.random.key(n), 4)
            state = jax.block_until_ready(step(state, keys, rewards[n]))
            if calls:
                solved[lazy].append(int(state.t[0]))
        assert bool(jnp.all(state.arm >= 0))
    assert solved[True] == [6, 12, 24, 48]
    assert solved[False] == list(range(6, 66))
