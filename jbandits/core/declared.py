"""The declared type of a policy's numbers and its optional numbers
(:mod:`jbandits.core.numbers` states the rule; this is its arithmetic).

A number is an integer when its factory default is an ``int`` or, without a numeric
default, when it counts pulls (:data:`COUNTS`); every other number is a float
(:func:`kind_of`). :func:`cast` turns a value into its declared type before it keys
a program or becomes a traced argument, so ``alpha=2`` and ``alpha=2.5`` are one
program. An *optional* number (a ``None`` default the policy declares with
``optional=`` at registration) is spelled :data:`NOT_GIVEN` when not given and
resolved by the factory with :func:`given`.
"""

from __future__ import annotations

import inspect
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

# Numbers without a numeric default that count pulls: integers (every other number
# without one is a float).
COUNTS = frozenset({"budget", "horizon"})

# The value of an optional number that was not given ("None", traced as a float).
NOT_GIVEN = float("nan")


def absent(value) -> bool:
    """Whether an optional number was not given: ``None`` or a concrete
    :data:`NOT_GIVEN` (a traced value is never absent: its lanes may differ)."""
    if value is None:
        return True
    if not _concrete(value) or np.ndim(value) != 0:
        return False
    return bool(np.isnan(np.asarray(value, float)))


def given(value, default, use=None):
    """``use`` (default: ``value``) where optional number ``value`` was given, else
    ``default``: on the host (``None`` or a concrete NaN) ``default`` itself, in a
    trace ``jnp.where(isnan(value), default, use)``. The factory's own derivation
    of ``default`` is unchanged, so the algorithm is the same for every lane."""
    use = value if use is None else use
    if absent(value):
        return default
    if _concrete(value):
        return use
    return jnp.where(jnp.isnan(value), default, use)


def given_on_host(value) -> bool:
    """Whether optional number ``value`` was given with a concrete value (the
    factory's host checks of given-only arguments: skipped in a trace)."""
    return _concrete(value) and not absent(value)


def kind_of(key: str, default: Any, optional: bool = False) -> str:
    """``"int"`` or ``"float"``: the declared type of number ``key`` (the rule above)
    from its factory default (``inspect.Parameter.empty`` when it has none)."""
    if optional:
        return "float"
    if isinstance(default, (int, np.integer)) and not isinstance(default, bool):
        return "int"
    if isinstance(default, (float, np.floating)):
        return "float"
    return "int" if key in COUNTS else "float"


def cast(key: str, value, kind: str):
    """Number ``key`` as its declared ``kind``: a Python int / float for a scalar, a
    NumPy or JAX array of the kind otherwise (traced values keep their integer /
    float dtype when it already is one). Raises ValueError on a non-integral value
    for an integer number, or on a value that is not a number."""
    if value is None:
        return NOT_GIVEN if kind == "float" else value
    if isinstance(value, (jax.Array, jax.core.Tracer)):
        want = jnp.integer if kind == "int" else jnp.floating
        if jnp.issubdtype(value.dtype, want):
            return value
        return value.astype(jnp.int32 if kind == "int" else jnp.result_type(float))
    arr = np.asarray(value)
    if arr.dtype.kind not in "iuf":
        return value  # not a number (a bool array, ...): the factory's checks name it
    if kind == "int":
        whole = arr.dtype.kind != "f" or np.all(
            np.isfinite(arr) & (arr == np.round(arr))
        )
        if not whole:
            raise ValueError(f"{key} must be an integer, got {value!r}")
        if arr.dtype.kind in "iu":
            return value
        arr = arr.astype(np.int64)
        return int(arr) if arr.ndim == 0 else arr
    if arr.dtype.kind == "f":
        return value
    arr = arr.astype(np.float64)
    return float(arr) if arr.ndim == 0 else arr


def cast_all(kinds: dict, params: dict) -> dict:
    """``params`` with every number of ``kinds`` (``{key: kind}``) cast (a new dict;
    other keys, e.g. host schedules, as they are)."""
    return {k: cast(k, v, kinds[k]) if k in kinds else v for k, v in params.items()}


def kinds_of(parameters, static, optional, is_static) -> tuple:
    """``((key, "int" | "float"), ...)`` of the numbers among a factory's
    ``parameters`` (not ``static``; a default that is not static, or ``optional``),
    sorted; ``is_static(key, default)``: the static rule."""
    out = []
    for key, param in parameters.items():
        if key in static or param.kind in _VARIADIC:
            continue
        default, opt = param.default, key in optional
        if opt or (default is not None and not is_static(key, default)):
            out.append((key, kind_of(key, default, opt)))
    return tuple(sorted(out))


_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def check_optional(name: str, parameters, optional) -> None:
    """Each optional number is a keyword of the factory with default None."""
    for key in optional:
        param = parameters.get(key)
        if param is None or param.default is not None:
            raise ValueError(
                f"register({name!r}, ...): optional number {key!r} must be a keyword "
                "argument of the factory with default None"
            )


def _concrete(value) -> bool:
    return not any(
        isinstance(x, jax.core.Tracer) for x in jax.tree_util.tree_leaves(value)
    )
