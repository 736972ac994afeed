"""Input validation that names the offending argument.

Numbers may be tracers (sweeps, gradients); checks run only on concrete values, so a
traced hyper-parameter is never forced to the host.
"""

from __future__ import annotations

import operator

import jax
import numpy as np


def is_concrete(value) -> bool:
    """True when ``value`` holds no tracer (it can be read on the host)."""
    leaves = jax.tree_util.tree_leaves(value)
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves)


def static_int(name: str, value, *, minimum: int | None = None) -> int:
    """A Python int that fixes shapes; fails loudly on tracers and floats."""
    try:
        value = operator.index(value)
    except TypeError as err:
        raise ValueError(
            f"{name} must be a Python int (static), got {value!r}"
        ) from err
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


def choice(name: str, value, options) -> str:
    if value not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {value!r}")
    return value


def _array(value):
    return np.asarray(jax.device_get(value), dtype=np.float64)


def finite(name: str, value) -> None:
    """Raise ValueError if a concrete ``value`` contains NaN or inf."""
    if value is None or not is_concrete(value):
        return
    arr = _array(value)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {value!r}")


def in_range(
    name: str,
    value,
    low: float | None = None,
    high: float | None = None,
    *,
    low_open: bool = False,
    high_open: bool = False,
) -> None:
    """Raise ValueError unless a concrete ``value`` is finite and within the bounds."""
    if value is None or not is_concrete(value):
        return
    finite(name, value)
    arr = _array(value)
    if low is not None and (np.any(arr <= low) if low_open else np.any(arr < low)):
        sign = ">" if low_open else ">="
        raise ValueError(f"{name} must be {sign} {low}, got {value!r}")
    if high is not None and (np.any(arr >= high) if high_open else np.any(arr > high)):
        sign = "<" if high_open else "<="
        raise ValueError(f"{name} must be {sign} {high}, got {value!r}")


def concrete_int(name: str, value, *, minimum: int | None = None) -> int | None:
    """Host int of a concrete scalar (e.g. a budget) or None when traced."""
    if value is None or not is_concrete(value):
        return None
    arr = np.asarray(jax.device_get(value))
    if arr.ndim != 0 or not np.isfinite(arr) or float(arr) != int(arr):
        raise ValueError(f"{name} must be an integer scalar, got {value!r}")
    out = int(arr)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    return out


def require_concrete(name: str, value, why: str):
    if not is_concrete(value):
        raise ValueError(
            f"{name} must be concrete here ({why}); compute host-side schedules outside "
            "jit/vmap and pass them in (see jbandits.schedules)"
        )
    return value
