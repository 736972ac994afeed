"""The pieces a reward family is made of (public: a user's own family uses them as
the built-in ones do): :func:`family` builds the :class:`~jbandits.core.types.Bandit`
record; :func:`reward_uniform` / :func:`reward_normal` / :func:`stack_key` give the
``j``-th reward of arm ``i`` of the reward stack (a deterministic function of the
replication key, ``i`` and ``j``: common random numbers and exact replay); the
remaining helpers validate and pad params.

A family's ``sample(params, key, arm, pull_index)`` must be a pure function of its
arguments; example (an exponential family with means ``params.means``)::

    class ExpParams(NamedTuple):
        means: jax.Array
        arm_mask: jax.Array

    def sample(params, key, arm, pull_index):
        u = common.reward_uniform(key, arm, pull_index, params.means.dtype)
        return -params.means[arm] * jnp.log1p(-u)

    EXPONENTIAL = common.family("exponential", ExpParams, sample,
                                stds=lambda p: p.means)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import prng as _prng
from jbandits.core.types import Array, ArrayLike, Bandit, Key
from jbandits.core.validate import instance_values, is_concrete


def means_leaf(params) -> Array:
    """``Bandit.means`` of a family whose params hold the true means (``means``)."""
    return params.means


def stds_leaf(params) -> Array:
    """``Bandit.stds`` of a family whose params hold the true standard deviations."""
    return params.stds


def check_budget_only(params, budget) -> None:
    """``Bandit.check`` of a family whose params put no bound on the budget."""
    del params
    check_budget(budget)


def family(
    name: str, params_type, sample, *, stds=stds_leaf, check=check_budget_only,
    arm_axes: dict | None = None,
) -> Bandit:  # fmt: skip
    """The :class:`~jbandits.core.types.Bandit` of a reward family.

    ``name``: shown in results and errors; ``params_type``: the family's params
    NamedTuple (with ``means`` and ``arm_mask`` leaves); ``sample(params, key, arm,
    pull_index) -> reward``.

    Its true means are the params' ``means`` leaf; its standard deviations the
    ``stds`` leaf unless ``stds`` computes them (Bernoulli); its ``check`` refuses a
    budget < 1 unless ``check`` adds the family's own bounds (replay).

    ``arm_axes``: ``{field: axis}``, the arm axis of the leaves of one instance
    whose arms are not on the last axis (a replay ``table`` ``[K, J]``: ``0``), or
    None for a leaf that is not per arm; every other leaf has its arms on its last
    axis. :func:`jbandits.envs.pad_arms` pads each leaf on that axis (so a sweep
    over K runs the family); a stack of instances ``[N, ...]`` shifts a
    non-negative axis by its leading axes. Declared per ``params_type``
    (:func:`arm_axes_of`).
    """
    _declare_arm_axes(name, params_type, arm_axes)
    return Bandit(sample, means_leaf, stds, check, name, params_type)


_ARM_AXES: dict = {}  # params_type -> {field: axis or None}, from family(arm_axes=)


def _declare_arm_axes(name: str, params_type, arm_axes: dict | None) -> None:
    if arm_axes is None:
        _ARM_AXES.pop(params_type, None)
        return
    fields = getattr(params_type, "_fields", ())
    for field, axis in dict(arm_axes).items():
        if field not in fields:
            raise ValueError(
                f"family {name!r}: arm_axes names {field!r}, not a field of "
                f"{getattr(params_type, '__name__', params_type)} {tuple(fields)}"
            )
        if field == "arm_mask" or not (
            axis is None or (isinstance(axis, int) and not isinstance(axis, bool))
        ):
            raise ValueError(
                f"family {name!r}: arm_axes[{field!r}] must be an int axis or None "
                f"(arm_mask is always [..., K]), got {axis!r}"
            )
    _ARM_AXES[params_type] = dict(arm_axes)


def arm_axes_of(params_type) -> dict:
    """``{field: axis or None}`` declared by :func:`family` for ``params_type``
    (fields not named there have their arms on the last axis, ``-1``)."""
    return dict(_ARM_AXES.get(params_type, {}))


def reward_uniform(key: Key, arm: ArrayLike, pull_index: ArrayLike, dtype) -> Array:
    """Uniform ``[0, 1)`` of the ``pull_index``-th reward of ``arm``: the reward stack.

    One threefry2x32 hash of the counter ``(arm, pull_index)`` under ``key``
    (:func:`jbandits.core.prng.counter_bits`), mapped to ``[0, 1)`` as
    :func:`jax.random.uniform` maps its bits.
    """
    dtype = jnp.dtype(dtype)
    return _prng.unit_from_bits(_prng.counter_bits(key, arm, pull_index, dtype), dtype)


def reward_normal(key: Key, arm: ArrayLike, pull_index: ArrayLike, dtype) -> Array:
    """Standard normal of the ``pull_index``-th reward of ``arm`` (one hash, as
    :func:`reward_uniform`), mapped as :func:`jax.random.normal` maps its bits."""
    dtype = jnp.dtype(dtype)
    return _prng.normal_from_bits(
        _prng.counter_bits(key, arm, pull_index, dtype), dtype
    )


def stack_key(key: Key, arm: ArrayLike, pull_index: ArrayLike) -> Key:
    """Key of the ``pull_index``-th reward of ``arm``: the reward-stack model.

    ``fold_in(fold_in(key, arm), pull_index)``, computed by :mod:`jbandits.core.prng`
    (the same bits as ``jax.random.fold_in``, in straight-line code). Three hashes
    per reward where :func:`reward_uniform` needs one: for rewards that need a key
    (MovieLens' ``randint``).
    """
    return _prng.fold_in(_prng.fold_in(key, arm), pull_index)


def host(value) -> np.ndarray | None:
    """``value`` as a NumPy array when it is concrete, else None (a tracer).

    The checks on concrete inputs run in NumPy, and concrete arrays reach the device
    by ``jax.device_put``: the same tests in ``jax.numpy`` each compiled a small XLA
    program (isfinite, a comparison, a reduction) per shape and dtype, and so did
    ``jnp.asarray`` of a NumPy array (a ``stage`` program), every run of an
    experiment (lsa-fig1 --quick: 37 of its 50 compiled programs).
    """
    return np.asarray(value) if is_concrete(value) else None


def as_float_array(name: str, value) -> Array:
    dtype = jnp.result_type(float)
    if is_concrete(value):  # converted on the host, put on the device as it is
        with np.errstate(over="ignore"):  # an overflow to inf is reported below
            values = np.asarray(value, dtype=dtype)
        arr = jax.device_put(values)
    else:
        arr = values = jnp.asarray(value, dtype=dtype)
    if arr.ndim < 1:
        raise ValueError(f"{name} must have an arm axis, got shape {arr.shape}")
    if isinstance(values, np.ndarray):
        instance_values(name, values)  # finite (the entry points call it too)
    return arr


def make_mask(arm_mask, shape: tuple[int, ...]) -> Array:
    if arm_mask is None:
        return jax.device_put(np.ones(shape, dtype=bool))
    real = host(arm_mask)  # checked here, put on the device once
    mask = arm_mask if real is None else jax.device_put(real)
    if mask.shape != shape:
        raise ValueError(f"arm_mask must have shape {shape}, got {mask.shape}")
    if mask.dtype != jnp.bool_:
        raise ValueError(f"arm_mask must be boolean, got dtype {mask.dtype}")
    if real is not None and np.any(np.sum(real, axis=-1) < 2):
        raise ValueError("arm_mask must leave at least 2 real arms (K >= 2)")
    return mask


def check_num_arms(name: str, arr: Array) -> None:
    """``arr`` is ``[K]`` or a batch of instances ``[N, K]`` with K >= 2."""
    if arr.ndim > 2:
        raise ValueError(
            f"{name} must be [K] or a batch of instances [N, K], got shape {arr.shape}"
        )
    if arr.shape[-1] < 2:
        raise ValueError(f"{name} must describe K >= 2 arms, got shape {arr.shape}")


def check_shapes(first: str, a: Array, second: str, b: Array) -> None:
    if a.shape != b.shape:
        raise ValueError(
            f"{second} shape {b.shape} does not match {first} shape {a.shape}"
        )


def check_budget(budget) -> None:
    if budget is None or not is_concrete(budget):
        return
    b = np.asarray(jax.device_get(budget))
    if np.any(b < 1):
        raise ValueError(f"budget must be >= 1, got {budget!r}")


def pad_last(x: Array, size: int, fill) -> Array:
    extra = size - x.shape[-1]
    if extra < 0:
        raise ValueError(f"cannot pad {x.shape[-1]} arms to {size}")
    widths = [(0, 0)] * (x.ndim - 1) + [(0, extra)]
    return jnp.pad(x, widths, constant_values=fill)
