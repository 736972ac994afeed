"""A policy checked like input: its contract counted after a run, its failures named.

:func:`policy_contract` turns the per-lane counts of
:func:`jbandits.sim.replication.violations` (pulls of an arm outside ``0..K-1``, of
a masked arm, outputs out of their setting's range) into one error after a run;
:func:`policy_failure` says what a policy whose program failed to trace did (a Python
branch on a traced value, a state that changes shape, an array where a scalar is
taken), tracing its functions alone on the host, and claims no more than that.
"""

from __future__ import annotations

import os
import traceback

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core import validate as _validate
from jbandits.sim.replication import VIOLATIONS


def policy_contract(violations, name: str, where=None, num_arms=None) -> None:
    """Raise :class:`~jbandits.core.validate.PolicyError` if any lane broke the
    policy contract: ``violations`` ``[lanes, 4]`` (or ``[4]``, one lane) counts per
    lane, in the order of :data:`jbandits.sim.replication.VIOLATIONS`; ``where(i)``
    names lane ``i`` (default ``replication i``). One error names the policy, each
    kind with its count, the lanes it occurred in and the first of them."""
    counts = np.asarray(violations).reshape(-1, len(VIOLATIONS))
    if not counts.any():
        return
    where = where or (lambda i: f"replication {i}")
    parts = []
    for kind, label in enumerate(VIOLATIONS):
        col = counts[:, kind]
        lanes = np.flatnonzero(col)
        if lanes.size:
            parts.append(
                f"{int(col.sum())} {label} in {lanes.size} of {col.size} lane(s), "
                f"first in {where(int(lanes[0]))}"
            )
    arms = f"0..{num_arms - 1}" if num_arms else "0..K-1"
    raise _validate.PolicyError(
        f"policy {name!r} broke its contract: " + "; ".join(parts) + ". A step must "
        f"set state.arm to a real (unmasked) arm in {arms}, or -1 to stop; output "
        "must be what its setting reads (one real arm or -1; per-arm 0/1 with 0 on "
        "masked arms). Nothing was returned or stored for this run"
    )


def policy_name(policy) -> str:
    """A policy's name for messages: its registered name, a factory's name, or
    ``"policy"`` (hand-built)."""
    spec = getattr(policy, "spec", None)
    if spec is not None:
        return spec.name
    if isinstance(policy, str):
        return policy
    name = getattr(policy, "__name__", "")
    return name if name and name != "<lambda>" else "policy"


# ------------------------------------------------------------ a policy that fails
_CONVERSION = (
    "converts a traced value to a Python bool or number (a Python `if`, `while`, "
    "`and` / `or`, `int()` or `float()` on an array) in its init, step or output"
)


def policy_failure(err: Exception, num_arms: int, policy_of=None, numbers=None):
    """The error to raise for a policy whose program failed to trace on an instance
    of ``num_arms`` arms: what is known about ``err``, no more. ``policy_of(numbers)``
    (optional) builds the policy on the host with ``numbers`` (a dict; ``{}`` for a
    hand-built one), which lets the diagnosis trace its functions alone: a Python
    branch on a traced value, a state that changes shape or dtype in ``step``
    (named by field), or an array-valued number where the policy takes a scalar
    (the policy traces with that number made a scalar)."""
    name = "the policy"
    if policy_of is not None:
        try:
            found = policy_name(policy_of(dict(numbers or {})))
            name = name if found == "policy" else f"policy {found!r}"
        except Exception:  # noqa: BLE001 - the diagnosis must not mask err
            policy_of = None
    if isinstance(err, jax.errors.ConcretizationTypeError):
        return _validate.PolicyError(_conversion(name, err))
    if policy_of is not None:
        found = _diagnosed(name, num_arms, policy_of, dict(numbers or {}))
        if found is not None:
            return _validate.PolicyError(found)
    first = (str(err).strip().splitlines() or [""])[0]
    return ValueError(
        f"{name} failed to trace on an instance with K={num_arms} arms "
        f"({type(err).__name__}: {first}); was it built with num_arms={num_arms}, "
        "and do its arguments match?"
    )


def _conversion(name: str, err: Exception) -> str:
    first = (str(err).strip().splitlines() or [""])[0]
    return (
        f"{name} {_CONVERSION}{_user_frame(err)}: inside the compiled loop every "
        "value is traced. Write the branch with jnp.where(cond, a, b) or "
        f"jax.lax.cond(cond, f, g, x). (JAX: {first})"
    )


def _user_frame(err: Exception) -> str:
    """`` at FILE:LINE`` of the innermost frame of ``err`` outside JAX and the
    engine (the policy's own code), or ``""``."""
    frames = traceback.extract_tb(err.__traceback__)
    skip = (os.sep + "jax" + os.sep, os.sep + "jaxlib" + os.sep, _ENGINE_DIRS)
    for frame in reversed(frames):
        path = frame.filename
        if not any(s in path for s in skip[:2]) and not path.startswith(skip[2]):
            return f" at {path}:{frame.lineno}"
    return ""


_ENGINE_DIRS = os.path.dirname(os.path.abspath(__file__))  # jbandits/sim


def _probe(policy, num_arms: int):
    """Trace ``policy``'s init, step and output alone; the state before and after
    a step (abstract)."""
    key = jax.random.key(0)
    mask = jax.ShapeDtypeStruct((num_arms,), jnp.bool_)
    reward = jax.ShapeDtypeStruct((), jnp.result_type(float))
    state = jax.eval_shape(policy.init, key, mask)
    if not hasattr(state, "arm"):
        raise _StateType(state, None)
    new = jax.eval_shape(policy.step, state, key, reward)
    if type(new) is not type(state):
        raise _StateType(state, new)
    jax.eval_shape(policy.output, new)
    return state, new


class _StateType(Exception):
    """init returns no state with an ``arm``, or step another type than init."""

    def __init__(self, state, new):
        super().__init__()
        self.state, self.new = state, new

    def words(self, name: str) -> str:
        kind = type(self.state).__name__
        if self.new is None:
            return (
                f"{name}'s init returns a {kind}, not a state with an arm field: "
                "init and step return the policy's state, a NamedTuple with arm ([] "
                "int32: the next arm to pull, -1 to stop) and its statistics"
            )
        return (
            f"{name}'s step returns a {type(self.new).__name__}, not the {kind} its "
            f"init returns: step must return {kind}(...) (the same state type, with "
            "new values)"
        )


def _diagnosed(name: str, num_arms: int, policy_of, numbers: dict) -> str | None:
    """What the policy's functions traced alone show, or None."""
    try:
        state, new = _probe(policy_of(numbers), num_arms)
    except _StateType as err:
        return err.words(name)
    except jax.errors.ConcretizationTypeError as err:
        return _conversion(name, err)
    except Exception:  # noqa: BLE001 - try the numbers
        return _array_number(name, num_arms, policy_of, numbers)
    return _state_change(name, state, new) or _array_number(
        name, num_arms, policy_of, numbers
    )


def _state_change(name: str, state, new) -> str | None:
    """The first field whose shape or dtype ``step`` changed, or None."""
    before = jax.tree_util.tree_flatten_with_path(state)
    after = jax.tree_util.tree_flatten_with_path(new)
    if before[1] != after[1]:
        return (
            f"{name}'s step returns a state of another structure than init's "
            f"({before[1]} -> {after[1]}): step must return the state it was given, "
            "with new values"
        )
    for (path, old), (_, out) in zip(before[0], after[0], strict=True):
        if old.shape != out.shape or old.dtype != out.dtype:
            field = jax.tree_util.keystr(path) or "state"
            return (
                f"{name}'s step changes the state field {field} from "
                f"{old.dtype}{list(old.shape)} to {out.dtype}{list(out.shape)}: a "
                "state keeps its shapes and dtypes from step to step (the loop "
                "carries it); pad to a fixed shape or cast with .astype"
            )
    return None


def _array_number(name: str, num_arms: int, policy_of, numbers: dict) -> str | None:
    """An array-valued number that the policy traces with once it is a scalar."""
    for key, value in numbers.items():
        if np.ndim(value) == 0 or not hasattr(value, "shape"):
            continue
        scalar = np.asarray(jax.device_get(value)).reshape(-1)[0]
        try:
            state, new = _probe(policy_of({**numbers, key: scalar}), num_arms)
        except Exception:  # noqa: BLE001 - not this number
            continue
        if _state_change(name, state, new) is None:
            return (
                f"{name}: {key} is an array of shape {tuple(np.shape(value))} where "
                "the policy takes a scalar (with a scalar it traces); for several "
                "values, sweep over them (jbandits.sweep, or a list in "
                "jbandits.sweep_grid)"
            )
    return None
