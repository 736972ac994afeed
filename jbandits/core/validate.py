"""Input validation that names the offending argument.

Numbers may be tracers (sweeps, gradients); checks run only on concrete values, so a
traced hyper-parameter is never forced to the host.
"""

from __future__ import annotations

import inspect
import operator
import os
import sys
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core.types import SETTINGS, Policy

INT32_MAX = int(np.iinfo(np.int32).max)  # budgets, horizons and counts run as int32


def is_concrete(value) -> bool:
    """True when ``value`` holds no tracer (it can be read on the host)."""
    leaves = jax.tree_util.tree_leaves(value)
    return not any(isinstance(leaf, jax.core.Tracer) for leaf in leaves)


def static_int(
    name: str, value, *, minimum: int | None = None, maximum: int | None = None
) -> int:
    """A Python int that fixes shapes; fails loudly on tracers, floats and bools.

    ``maximum``: the largest value accepted (:data:`INT32_MAX` for a number the
    engine runs as int32, so that it is refused rather than wrapped).
    """
    if isinstance(value, (bool, np.bool_)):  # operator.index(True) is 1
        raise ValueError(f"{name} must be a Python int (static), got {value!r}")
    try:
        value = operator.index(value)
    except TypeError as err:
        raise ValueError(
            f"{name} must be a Python int (static), got {value!r}"
        ) from err
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value}")
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


def instance_values(
    name: str, value, *, low: float | None = None, high: float | None = None,
    why: str = "",
) -> None:  # fmt: skip
    """Raise ValueError unless a concrete instance array (means, stds, a replay
    table) is finite and within ``[low, high]``; one line that names the first
    offending entry (``means[2] = 1.5``), whatever the array's size. The family
    builders (:mod:`jbandits.envs`) and the entry points' instance checks
    (:func:`jbandits.sim.checks.bandit`) both call it; ``why`` ends the range's
    words (`` for Bernoulli arms``)."""
    if value is None or not is_concrete(value):
        return
    arr = np.asarray(jax.device_get(value))
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numbers, got dtype {arr.dtype}")
    rules = [(~np.isfinite(arr), "must be finite (no NaN/inf)")]
    bounds = ", ".join(f"{b:g}" for b in (low, high) if b is not None)
    if low is not None and high is not None:
        rules.append(((arr < low) | (arr > high), f"must lie in [{bounds}]{why}"))
    elif low is not None:
        rules.append((arr < low, f"must be >= {bounds}{why}"))
    elif high is not None:
        rules.append((arr > high, f"must be <= {bounds}{why}"))
    for bad, words in rules:
        if np.any(bad):
            where = np.unravel_index(int(np.argmax(bad)), arr.shape)
            index = "[" + ", ".join(str(int(i)) for i in where) + "]"
            raise ValueError(
                f"{name} {words}, got {name}{index} = {float(arr[where]):g}"
            )


def concrete_int(
    name: str, value, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    """Host int of a concrete scalar (e.g. a budget) or None when traced."""
    if value is None or not is_concrete(value):
        return None
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be an integer scalar, got {value!r}")
    arr = np.asarray(jax.device_get(value))
    if arr.ndim != 0 or arr.dtype.kind not in "biuf" or not np.isfinite(arr):
        raise ValueError(f"{name} must be an integer scalar, got {value!r}")
    if arr.dtype.kind == "f" and float(arr) != int(arr):
        raise ValueError(f"{name} must be an integer scalar, got {value!r}")
    out = int(arr)
    if minimum is not None and out < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {out}")
    if maximum is not None and out > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {out}")
    return out


def bandit_params(bandit, params) -> None:
    """Raise ValueError unless ``params`` is an instance of ``bandit``'s family.

    A family that names its params type (``Bandit.params_type``, set by every family
    of :mod:`jbandits.envs`) refuses the params of another: a Gaussian instance on
    the Bernoulli family would run with its standard deviations ignored.
    """
    expected = getattr(bandit, "params_type", None)
    if expected is None or isinstance(params, expected):
        return
    raise ValueError(
        f"params are a {type(params).__name__} but the bandit is the "
        f"{getattr(bandit, 'name', '?')!r} family, which takes {expected.__name__}: "
        "pass the bandit and params returned together by one jbandits.envs constructor"
    )


def require_concrete(name: str, value, why: str):
    if not is_concrete(value):
        raise ValueError(
            f"{name} must be concrete here ({why}); compute host-side schedules outside "
            "jit/vmap and pass them in (see jbandits.policies.blocks.schedules)"
        )
    return value


def host_budget(budget, why: str) -> int:
    """``budget`` as a host int in ``[1, INT32_MAX]``, for host arithmetic (``why``,
    e.g. an exact phase schedule); ValueError when it is traced or out of range."""
    require_concrete("budget", budget, why)
    return concrete_int("budget", budget, minimum=1, maximum=INT32_MAX)


def check_traced(
    values: dict,
    *,
    positive=(),
    nonnegative=(),
    finite=(),
) -> dict:
    """Which hyper-parameters are invalid, as traced booleans (usable under jit/vmap).

    The host-side checks above skip tracers; a sweep that builds its policies inside
    ``vmap`` calls this instead and reports the flagged cells. Every entry of
    ``values`` is flagged when it contains NaN; names listed in ``positive`` also when
    some element is ``<= 0``, in ``nonnegative`` when ``< 0``, in ``finite`` when
    ``+-inf``. Array values are reduced with ``any``.

    Args:
      values: ``{name: scalar or array}``, concrete or traced.
      positive, nonnegative, finite: names (keys of ``values``) with that constraint.

    Returns:
      ``{name: [] bool}`` for every name in ``values``: True means invalid.

    Raises:
      ValueError: a constrained name is not a key of ``values`` (at trace time).
    """
    rules = {"positive": positive, "nonnegative": nonnegative, "finite": finite}
    for rule, names in rules.items():
        unknown = sorted(set(names) - set(values))
        if unknown:
            raise ValueError(f"check_traced: {rule} names {unknown} not in values")
    bad = {}
    for name, value in values.items():
        x = jnp.asarray(value)
        flag = jnp.isnan(x)
        if name in positive:
            flag = flag | ~(x > 0)
        if name in nonnegative:
            flag = flag | ~(x >= 0)
        if name in finite:
            flag = flag | ~jnp.isfinite(x)
        bad[name] = jnp.any(flag)
    return bad


# the jbandits package folder (this file is in jbandits/core/)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn(message: str, category: type[Warning] = UserWarning) -> None:
    """``warnings.warn`` attributed to the caller's code: the first frame outside the
    jbandits package (a policy's factory runs under ``make``, ``simulate``, sweeps or
    the tuner, so a fixed ``stacklevel`` would point into the library)."""
    level, frame = 2, sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    warnings.warn(message, category, stacklevel=level)


class PolicyError(ValueError):
    """A policy broke its contract (an arm or an output out of range, a state that
    changes shape, a Python ``if`` on a traced value): raised by the entry points
    with the policy's name and what it did."""


def policy_object(value, who: str):
    """``value`` (what ``who`` built or was given) is a usable Policy: a
    :class:`~jbandits.core.types.Policy` with callable ``init``, ``step`` and
    ``output`` and a ``setting`` of :data:`~jbandits.core.types.SETTINGS`. Raises
    :class:`PolicyError` naming ``who`` otherwise; returns ``value``."""
    if not isinstance(value, Policy):
        raise PolicyError(
            f"{who} returned {type(value).__name__} {value!r:.60}, not a "
            "jbandits.Policy (a factory must return Policy(init, step, output, "
            "setting))"
        )
    for field in ("init", "step", "output"):
        if not callable(getattr(value, field)):
            raise PolicyError(
                f"{who}: Policy.{field} must be callable, got "
                f"{type(getattr(value, field)).__name__}"
            )
    if value.setting not in SETTINGS:
        raise PolicyError(
            f"{who}: Policy.setting must be one of {SETTINGS}, got {value.setting!r}"
        )
    return value


def static_names(who: str, factory, static) -> None:
    """Every name declared ``static=`` at registration is a parameter of the
    factory (unless it takes ``**kwargs``)."""
    if isinstance(static, str):
        raise ValueError(
            f"{who}: static must be a tuple of parameter names, got the string "
            f"{static!r} (write static=({static!r},))"
        )
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    missing = [k for k in static if k not in params]
    if missing:
        qualname = getattr(factory, "__qualname__", repr(factory))
        raise ValueError(
            f"{who}: static names {', '.join(map(repr, missing))}, which "
            f"{qualname} does not take (it takes {', '.join(params)})"
        )


def declared_static_int(name: str, key: str, value) -> None:
    """A declared static integer of policy ``name`` is an int (not a float, a bool
    or an array)."""
    if not isinstance(value, (int, np.integer)) or isinstance(value, bool):
        raise ValueError(
            f"{name}: {key} is a static integer (it fixes shapes or loop counts: "
            f"declared static= at registration), got {value!r}; pass an int"
        )
