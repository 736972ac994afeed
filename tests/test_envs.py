"""Reward-family constructors: their checks on concrete input, and no compilation."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from tests.compile_log import count_compiles


@pytest.mark.parametrize(
    "means, match",
    [
        ([0.2, float("nan"), 0.6], "finite"),
        ([0.2, float("inf"), 0.6], "finite"),
        ([0.2, 1.5, 0.6], r"\[0, 1\]"),
        ([-0.1, 0.5, 0.6], r"\[0, 1\]"),
        ([[0.2, 0.5], [0.3, 1.01]], r"\[0, 1\]"),  # one bad instance of a stack
        ([0.5], "K >= 2"),
    ],
)
def test_bernoulli_rejects_bad_means(means, match):
    with pytest.raises(ValueError, match=match):
        jbandits.envs.bernoulli(np.asarray(means))


@pytest.mark.parametrize(
    "stds, match",
    [
        ([1.0, -0.5, 1.0], ">= 0"),
        (-1.0, ">= 0"),  # a scalar shared by every arm
        ([1.0, float("nan"), 1.0], "finite"),
        ([1.0, 1.0], "does not match"),
    ],
)
def test_gaussian_rejects_bad_stds(stds, match):
    with pytest.raises(ValueError, match=match):
        jbandits.envs.gaussian(np.asarray([0.1, 0.5, 0.9]), stds)


def test_float32_overflow_is_not_finite():
    """The check reads the values converted to the working dtype: 1e39 is inf in
    float32."""
    if jax.config.x64_enabled:
        pytest.skip("float64 holds 1e39")
    with pytest.raises(ValueError, match="finite"):
        jbandits.envs.gaussian(np.asarray([0.1, 1e39]), 1.0)


@pytest.mark.parametrize(
    "mask, match",
    [
        ([True, False, False], "at least 2 real arms"),
        ([1, 1, 0], "boolean"),
        ([True, True], "shape"),
    ],
)
def test_bad_arm_masks(mask, match):
    with pytest.raises(ValueError, match=match):
        jbandits.envs.bernoulli(np.asarray([0.1, 0.5, 0.9]), arm_mask=np.asarray(mask))


def test_stack_with_one_instance_short_of_real_arms():
    mask = np.asarray([[True, True, False], [False, True, False]])
    with pytest.raises(ValueError, match="at least 2 real arms"):
        jbandits.envs.bernoulli(np.full((2, 3), 0.5), arm_mask=mask)


def test_valid_input_builds_the_instance_as_given():
    _, params = jbandits.envs.gaussian(
        np.asarray([0.1, 0.5, 0.9]), 0.5, arm_mask=np.asarray([True, False, True])
    )
    dtype = jnp.result_type(float)
    assert params.means.dtype == dtype and params.stds.dtype == dtype
    np.testing.assert_array_equal(params.stds, np.full(3, 0.5, dtype))
    np.testing.assert_array_equal(params.means, np.asarray([0.1, 0.5, 0.9], dtype))
    np.testing.assert_array_equal(params.arm_mask, [True, False, True])
    _, params = jbandits.envs.bernoulli([0.25, 0.75])
    assert params.arm_mask.dtype == jnp.bool_ and bool(params.arm_mask.all())


def test_concrete_input_compiles_no_program():
    """The checks run in NumPy: building an instance compiles nothing (in jax.numpy
    each check compiled a small program per shape, every run of an experiment).
    Shapes no other test uses, so that a jit cache hit cannot hide a compilation."""
    with count_compiles(None) as counter:
        jbandits.envs.bernoulli(np.linspace(0.1, 0.9, 13))
        jbandits.envs.bernoulli(
            np.full((3, 11), 0.5), arm_mask=np.arange(11)[None].repeat(3, 0) < 7
        )
        jbandits.envs.gaussian(np.linspace(0.0, 1.0, 17), 0.5)
        jbandits.envs.gaussian(np.zeros(19), np.ones(19))
    assert counter.count == 0
