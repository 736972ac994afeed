"""simulate's per-cell inputs, which the experiments used to build as runner lanes:
a batch of keys (per instance, or per replication), per-instance numbers, fields
shared by every instance of a stack, and ``refill``. Each is checked against runs
of the one-key form that must give the same results in every field."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits

MEANS = np.array([[0.2, 0.45, 0.55, 0.8], [0.3, 0.4, 0.6, 0.7]])
RUN = dict(budget=60, num_reps=3, progress=False)


def _stack():
    return jbandits.envs.bernoulli(MEANS)


def _apt(**kw):
    return jbandits.make("apt", num_arms=4, threshold=0.5, **kw)


def _same(a, b) -> None:
    leaves_a, leaves_b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    for x, y in zip(leaves_a, leaves_b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _fold(key, n: int):
    return jax.vmap(lambda i: jax.random.fold_in(key, i))(jnp.arange(n))


def test_instance_keys_of_a_stack_are_the_folded_key():
    bandit, params = _stack()
    key = jax.random.key(3)
    one = jbandits.simulate(_apt(), bandit, params, key, **RUN)
    batch = jbandits.simulate(_apt(), bandit, params, _fold(key, 2), **RUN)
    _same(one, batch)
    other = jbandits.simulate(_apt(), bandit, params, _fold(key, 2)[::-1], **RUN)
    assert not np.array_equal(other.pulls, one.pulls)


def test_replication_keys_give_each_run_its_own_key():
    bandit, params = _stack()
    key = jax.random.key(4)
    one = jbandits.simulate(_apt(), bandit, params, key, **RUN)
    reps = jnp.stack([_fold(k, 3) for k in _fold(key, 2)])  # [N, R]
    _same(one, jbandits.simulate(_apt(), bandit, params, reps, **RUN))
    # one instance: [R] keys
    b1, p1 = jbandits.envs.bernoulli(MEANS[0])
    single = jbandits.simulate(_apt(), b1, p1, key, **RUN)
    _same(single, jbandits.simulate(_apt(), b1, p1, _fold(key, 3), **RUN))


def test_per_instance_numbers_run_as_separate_calls_in_one_program():
    bandit, params = _stack()
    key = jax.random.key(5)
    eps = np.array([0.05, 0.3])
    res = jbandits.simulate(
        _apt(epsilon=0.1), bandit, params, key, numbers={"epsilon": eps}, **RUN
    )
    for n in range(2):
        b, p = jbandits.envs.bernoulli(MEANS[n])
        alone = jbandits.simulate(
            _apt(epsilon=float(eps[n])), b, p, jax.random.fold_in(key, n), **RUN
        )
        _same(jax.tree_util.tree_map(lambda x, n=n: x[n], res), alone)
    assert not np.array_equal(res.pulls[0], res.pulls[1])


@pytest.mark.parametrize(
    "numbers, key_shape, match",
    [
        ({"alpha": [1.0, 2.0]}, None, "not numbers of the policy"),
        ({"epsilon": [0.1, 0.2, 0.3]}, None, r"shape \[2\]"),
        (None, (3,), r"shape \[2\] or \[2, 3\]"),
        (None, (2, 2), r"shape \[2\] or \[2, 3\]"),
    ],
)
def test_bad_numbers_and_key_batches_are_refused(numbers, key_shape, match):
    bandit, params = _stack()
    key = jax.random.key(0)
    if key_shape is not None:
        key = jax.random.split(key, int(np.prod(key_shape))).reshape(key_shape)
    with pytest.raises(ValueError, match=match):
        jbandits.simulate(_apt(), bandit, params, key, numbers=numbers, **RUN)


def test_numbers_need_a_stack():
    b1, p1 = jbandits.envs.bernoulli(MEANS[0])
    with pytest.raises(ValueError, match="per instance of a stack"):
        jbandits.simulate(
            _apt(), b1, p1, jax.random.key(0), numbers={"epsilon": [0.1]}, **RUN
        )


def test_a_shared_field_is_read_by_every_instance():
    stds = np.array([0.5, 1.0, 1.5, 2.0])
    bandit, stacked = jbandits.envs.gaussian(MEANS, np.stack([stds, stds]))
    shared = stacked._replace(stds=stds)
    pol = jbandits.make("ucb1", num_arms=4)
    key = jax.random.key(6)
    a = jbandits.simulate(pol, bandit, stacked, key, **RUN)
    b = jbandits.simulate(pol, bandit, shared, key, shared=("stds",), **RUN)
    _same(a, b)


def test_refill_gives_the_same_runs():
    bandit, params = _stack()
    pol = jbandits.make("lucb1", num_arms=4, delta=0.1)
    run = dict(budget=3000, num_reps=4, progress=False, metric=None)
    key = jax.random.key(7)
    a = jbandits.simulate(pol, bandit, params, key, refill=False, **run)
    b = jbandits.simulate(pol, bandit, params, key, refill=True, **run)
    _same(a, b)


def test_per_instance_schedules_may_be_pytrees():
    """A host schedule (a NamedTuple of arrays) per instance: the same runs as the
    schedules simulate prepares itself for each instance's budget."""
    prepare = jbandits.core.registry.prepare_hook("sequential_halving")
    bandit, params = _stack()
    budgets = np.array([40, 80])
    rows = [prepare(4, 4, int(b))["schedule"] for b in budgets]
    stacked = jax.tree_util.tree_map(lambda *x: np.stack(x), *rows)
    run = dict(budget=budgets, num_reps=3, progress=False)
    key = jax.random.key(8)
    sh = jbandits.make("sequential_halving", num_arms=4, budget=40)
    own = jbandits.simulate(sh, bandit, params, key, numbers={"budget": budgets}, **run)
    pol = jbandits.make("sequential_halving", num_arms=4, budget=40, schedule=rows[0])
    given = jbandits.simulate(
        pol, bandit, params, key, numbers={"budget": budgets, "schedule": stacked},
        **run,
    )  # fmt: skip
    _same(own, given)
    first = jax.tree_util.tree_map(lambda x: np.stack([x[0], x[0]]), stacked)
    other = jbandits.simulate(
        pol, bandit, params, key, numbers={"budget": budgets, "schedule": first},
        **run,
    )  # fmt: skip
    np.testing.assert_array_equal(other.pulls[0], own.pulls[0])
    assert not np.array_equal(other.pulls[1], own.pulls[1])
