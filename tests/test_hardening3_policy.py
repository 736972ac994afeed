"""Issue 54 (hardening, round 3), part 1: a policy is checked like input, a key means
one thing, factories and policy errors, and the accepted-without-notice inputs of
item 7 (static integers, settings, static names, counts, checkpoints).

Small K and budgets; the contract-breaking policy is one registered factory whose
bad arm and output are traced numbers, so its program is shared by most tests.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.core import registry
from jbandits.core.validate import PolicyError
from jbandits.envs import bernoulli, pad_arms

K = 4
BANDIT, PARAMS = bernoulli([0.1, 0.2, 0.3, 0.9])
KEY = jax.random.key(0)


class _S(NamedTuple):
    arm: jax.Array  # [] int32
    n: jax.Array  # [] int32 pulls made


def _bad(num_arms, *, bad_arm=0, after=1000, out=0):
    """Round robin over the arms, then arm ``bad_arm`` from pull ``after`` on;
    outputs ``out``. Every number is traced (one program for every test)."""

    def init_fn(key, arm_mask):
        del key, arm_mask
        return _S(jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

    def step_fn(state, key, reward):
        del key, reward
        n = state.n + 1
        arm = jnp.where(n >= after, bad_arm, n % num_arms).astype(jnp.int32)
        return _S(arm, n)

    def output_fn(state):
        del state
        return jnp.asarray(out, jnp.int32)

    return jbandits.Policy(init_fn, step_fn, output_fn, "identification")


@pytest.fixture(scope="module")
def bad():
    registry.register("hardening3_bad", _bad)
    yield "hardening3_bad"
    registry.unregister("hardening3_bad")


def _sim(policy, params=PARAMS, key=KEY, **kw):
    kw = {"budget": 40, "num_reps": 3, "progress": False, **kw}
    return jbandits.simulate(policy, BANDIT, params, key, **kw)


# ------------------------------------------------------------ items 1-3: the contract
def test_item1_output_out_of_range_raises(bad):
    pol = jbandits.make(bad, num_arms=K, out=11)
    with pytest.raises(
        PolicyError,
        match=r"'hardening3_bad'.*3 checkpoints whose "
        r"output is outside.*3 of 3 lane.*cell 0, replication 0",
    ):
        _sim(pol)
    assert _sim(jbandits.make(bad, num_arms=K, out=3)).output.shape == (3,)  # valid


def test_item1_output_of_a_padded_arm_raises(bad):
    padded = pad_arms(bernoulli([0.2, 0.5, 0.8])[1], K)
    with pytest.raises(PolicyError, match="output is outside"):
        _sim(jbandits.make(bad, num_arms=K, out=3), params=padded, permute=False)


@pytest.mark.parametrize(
    "arm, kind", [(K + 3, "pulls of an arm >= K"), (-2, "choices of an arm below -1")]
)
def test_item2_arm_out_of_range_raises_in_simulate(bad, arm, kind):
    pol = jbandits.make(bad, num_arms=K, bad_arm=arm, after=4)
    with pytest.raises(PolicyError, match=kind):
        _sim(pol)


def test_item2_run_raises_and_counts():
    pol = _bad(K, bad_arm=K + 3, after=4)
    with pytest.raises(PolicyError, match=r"36 pulls of an arm >= K.*in 0\.\.3"):
        jbandits.run(pol, BANDIT, PARAMS, KEY, budget=40, horizon=40)
    # under jit the counts come back: [>= K, below -1, masked, outputs]
    res = jax.jit(
        lambda k: jbandits.run(pol, BANDIT, PARAMS, k, budget=40, horizon=40)
    )(KEY)
    np.testing.assert_array_equal(res.violations, [36, 0, 0, 0])
    ok = jbandits.run(_bad(K), BANDIT, PARAMS, KEY, budget=40, horizon=40)
    np.testing.assert_array_equal(ok.violations, [0, 0, 0, 0])


def test_item3_padded_arm_pull_raises_in_simulate_and_sweep_grid(bad):
    small = bernoulli([0.2, 0.5, 0.8])[1]
    padded = pad_arms(small, K)
    pol = jbandits.make(bad, num_arms=K, bad_arm=3, after=3)
    with pytest.raises(PolicyError, match=r"37 pulls of a masked \(padded\) arm"):
        _sim(pol, params=padded, permute=False, num_reps=1)
    with pytest.raises(PolicyError, match="masked"):
        jbandits.sweep_grid(
            [(bad, {"bad_arm": 3, "after": 3})],
            BANDIT,
            [small, bernoulli([0.1, 0.2, 0.3, 0.4])[1]],
            KEY,
            budgets=[40],
            num_reps=2,
            progress=False,
        )


def test_item3_sweep_over_numbers_names_the_cell(bad):
    with pytest.raises(PolicyError, match=r"in 2 of 4 lane.*cell 1, replication 0"):
        jbandits.sweep(
            bad,
            BANDIT,
            PARAMS,
            KEY,
            grid={"bad_arm": [0, 9], "after": [4, 4]},
            budget=40,
            horizon=40,
            num_reps=2,
            progress=False,
        )


def test_thresholding_output_not_binary_or_on_padded_arm():
    def make(labels):
        def init_fn(key, mask):
            return _S(jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

        def step_fn(s, key, r):
            return _S(((s.n + 1) % 3).astype(jnp.int32), s.n + 1)

        return jbandits.Policy(init_fn, step_fn, lambda s: labels, "thresholding")

    padded = pad_arms(bernoulli([0.2, 0.5, 0.8])[1], K)
    for labels in (jnp.array([0, 2, 0, 0]), jnp.array([True, False, False, True])):
        with pytest.raises(PolicyError, match="output is outside"):
            _sim(make(labels), params=padded, metric=None, num_reps=1, budget=12)
    with pytest.raises(PolicyError, match=r"per arm, shape \(4,\)"):
        _sim(make(jnp.array([True, False])), metric=None, num_reps=1, budget=12)


# ------------------------------------------------------------ items 4 and 8: keys
def test_item4_legacy_and_typed_keys_give_the_same_pulls():
    pol = jbandits.ucb1(K)
    for entry in (
        lambda k: (
            jbandits.run(
                pol, BANDIT, PARAMS, k, budget=30, horizon=30, record_arms=True
            ).arms
        ),
        lambda k: _sim(pol, key=k, budget=30, num_reps=2).pulls,
    ):
        typed = entry(jax.random.key(3))
        np.testing.assert_array_equal(typed, entry(jax.random.PRNGKey(3)))
        np.testing.assert_array_equal(typed, entry(np.array([0, 3], np.uint32)))


BAD_KEYS = {
    "int": 3,
    "None": None,
    "list": [0, 3],
    "int32": jnp.array([0, 3], jnp.int32),
    "float32": jnp.array([0.0, 3.0]),
    "uint32[3]": jnp.array([0, 3, 1], jnp.uint32),
    "batch": jax.random.split(jax.random.key(0), 2),
    "rbg": jax.random.key(3, impl="rbg"),
    "string": "abc",
}


@pytest.mark.parametrize("form", sorted(BAD_KEYS))
def test_item8_other_keys_refused_everywhere_with_one_message(form):
    key = BAD_KEYS[form]
    calls = {
        "run": lambda: jbandits.run(
            jbandits.ucb1(K), BANDIT, PARAMS, key, budget=8, horizon=8
        ),
        "simulate": lambda: _sim(jbandits.ucb1(K), key=key),
        "sweep": lambda: jbandits.sweep(
            "ucb1",
            BANDIT,
            PARAMS,
            key,
            grid={"alpha": [1.0]},
            budget=8,
            horizon=8,
            num_reps=1,
        ),
        "sweep_grid": lambda: jbandits.sweep_grid(
            [("ucb1", {})], BANDIT, [PARAMS], key, budgets=[8], num_reps=1
        ),
    }
    if form == "batch":  # simulate takes batches of other shapes: it names them
        with pytest.raises(
            ValueError, match=r"PRNGKey.*a batch of them of shape \[3\]"
        ):
            calls.pop("simulate")()
    messages = set()
    for name, call in calls.items():
        with pytest.raises(ValueError, match=r"jax\.random\.key\(seed\).*PRNGKey") as e:
            call()
        messages.add(str(e.value))
        assert "got" in str(e.value), name
    assert len(messages) == 1, messages


# ------------------------------------------------------------ item 9: factories
def test_item9_register_refuses_a_non_callable():
    with pytest.raises(ValueError, match="must be callable"):
        registry.register("hardening3_none", None)
    assert "hardening3_none" not in registry.names()


@pytest.mark.parametrize("result", [{"a": 1}, None])
def test_item9_factory_returning_no_policy_fails_at_make(result):
    def factory(num_arms):
        return result

    registry.register("hardening3_nopolicy", factory)
    try:
        with pytest.raises(
            ValueError,
            match=r"factory of 'hardening3_nopolicy'.*"
            r"not a jbandits.Policy",
        ):
            jbandits.make("hardening3_nopolicy", num_arms=K)
    finally:
        registry.unregister("hardening3_nopolicy")

    def no_policy():  # a factory callable handed to simulate: (**numbers) -> Policy
        return result

    with pytest.raises(
        ValueError, match=r"factory 'no_policy' returned.*not a jbandits"
    ):
        _sim(no_policy)


# ------------------------------------------------------------ item 10: policy errors
def test_item10_python_if_on_a_traced_value_is_named():
    def init_fn(key, mask):
        return _S(jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

    def step_fn(s, key, r):
        if r > 0.5:  # a Python branch on the traced reward
            return _S(jnp.int32(1), s.n + 1)
        return _S(jnp.int32(0), s.n + 1)

    pol = jbandits.Policy(init_fn, step_fn, lambda s: s.arm, "identification")
    for call in (
        lambda: _sim(pol, num_reps=1),
        lambda: jbandits.run(pol, BANDIT, PARAMS, KEY, budget=8, horizon=8),
    ):
        with pytest.raises(PolicyError, match=r"Python `if`.*jnp\.where.*lax\.cond"):
            call()


def test_item10_state_that_changes_shape_is_named():
    class Grow(NamedTuple):
        arm: jax.Array
        history: jax.Array  # grows by one per step: not a state

    def init_fn(key, mask):
        return Grow(jnp.zeros((), jnp.int32), jnp.zeros((1,)))

    def step_fn(s, key, r):
        return Grow(jnp.int32(0), jnp.concatenate([s.history, r[None]]))

    pol = jbandits.Policy(init_fn, step_fn, lambda s: s.arm, "identification")
    with pytest.raises(
        PolicyError,
        match=r"state field \.history from "
        r"float32\[1\] to float32\[2\]",
    ):
        _sim(pol, num_reps=1)


def test_item10_array_number_where_a_scalar_is_taken():
    pol = jbandits.apt(K, threshold=np.array([0.5, 0.5]))
    with pytest.raises(
        PolicyError,
        match=r"threshold is an array of shape \(2,\) "
        "where the policy takes a scalar",
    ):
        _sim(pol, num_reps=1)


# ------------------------------------------------------------ item 7 (these parts)
def test_item7_float_for_a_static_integer_is_refused():
    def windowed(num_arms, *, window=10):
        return jbandits.ucb1(num_arms)

    registry.register("hardening3_window", windowed, static=("window",))
    try:
        with pytest.raises(ValueError, match=r"window is a static integer.*2\.5"):
            jbandits.make("hardening3_window", num_arms=K, window=2.5)
        with pytest.raises(ValueError, match="window is a static integer"):
            jbandits.make("hardening3_window", num_arms=K, window=True)
        jbandits.make("hardening3_window", num_arms=K, window=np.int64(3))
    finally:
        registry.unregister("hardening3_window")


def test_item7_bogus_setting_is_refused():
    def bogus(num_arms):
        return _bad(num_arms)._replace(setting="bogus")

    registry.register("hardening3_bogus", bogus)
    try:
        with pytest.raises(ValueError, match=r"setting must be one of.*'bogus'"):
            jbandits.make("hardening3_bogus", num_arms=K)
    finally:
        registry.unregister("hardening3_bogus")
    for call in (
        lambda: _sim(bogus(K)),
        lambda: jbandits.run(bogus(K), BANDIT, PARAMS, KEY, budget=8, horizon=8),
    ):
        with pytest.raises(ValueError, match="setting must be one of"):
            call()


def test_item7_static_name_the_factory_lacks_is_refused_at_register():
    with pytest.raises(ValueError, match=r"'nonexistent'.*does not take"):
        registry.register("hardening3_static", _bad, static=("nonexistent",))
    with pytest.raises(ValueError, match="tuple of parameter names"):
        registry.register("hardening3_static", _bad, static="after")
    assert "hardening3_static" not in registry.names()


@pytest.mark.parametrize("arg", ["num_reps", "num_checkpoints"])
def test_item7_bool_is_not_a_count(arg):
    with pytest.raises(ValueError, match=f"{arg} must be a Python int"):
        _sim(jbandits.ucb1(K), **{arg: True})
    with pytest.raises(ValueError, match="num_arms must be a Python int"):
        jbandits.ucb1(True)


def test_item7_repeated_checkpoint_times_are_refused():
    with pytest.raises(ValueError, match=r"num_checkpoints=1000 repeats.*at most 50"):
        _sim(jbandits.ucb1(K), budget=50, num_checkpoints=1000)
    with pytest.raises(ValueError, match=r"num_checkpoints=6 repeats.*at most 5"):
        jbandits.run(
            jbandits.ucb1(K),
            BANDIT,
            PARAMS,
            KEY,
            budget=10,
            horizon=10,
            num_checkpoints=6,
        )
    with pytest.raises(ValueError, match="repeats checkpoint times"):
        jbandits.sweep_grid(
            [("ucb1", {})],
            BANDIT,
            [PARAMS],
            KEY,
            budgets=[8],
            num_reps=1,
            num_checkpoints=9,
        )


def test_fused_backend_raises_the_same_error(bad):
    """The fused kernel (interpret mode on CPU) counts as the XLA engine does."""
    pol = jbandits.make(bad, num_arms=K, bad_arm=K + 3, after=4)
    fused = jbandits.Execution(backend="fused")
    with pytest.raises(PolicyError, match=r"72 pulls of an arm >= K in 2 of 2"):
        _sim(pol, num_reps=2, execution=fused)
    res = _sim(jbandits.make(bad, num_arms=K), num_reps=2, execution=fused)
    assert res.pulls.sum() == 80
