"""A guard against differentiating a bandit trajectory with ``jax.grad``.

The outputs of a run (metrics, regret, reward) are piecewise constant in the policy's
hyper-parameters: every arm choice is an arg-max and every reward a draw, so
``jax.grad`` of a run with respect to, say, APT's epsilon is exactly 0.0 almost
everywhere. That zero is true of the sampled trajectory and useless for tuning.
:func:`guard_outputs` wraps the outputs in an identity with a custom JVP; the JVP
rule raises :class:`TrajectoryGradientError` (pointing to :mod:`jbandits.tuning`) when a
hyper-parameter of the policy carries a tangent. Derivatives with respect to anything
else (the instance's means, say) are left untouched, and when the policy holds no
traced numbers nothing is inserted at all.
"""

from __future__ import annotations

import types

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

MESSAGE = (
    "jax.grad through a bandit trajectory is exactly 0 almost everywhere (arm choices "
    "are arg-maxes and rewards are draws), so it cannot tune {what}. Use a gradient "
    "estimator of a smoothed objective instead: jbandits.tuning.tune(...) (antithetic "
    "ES or the softmax policy-gradient estimator) or jbandits.tuning.grid_tune(...)."
)


class TrajectoryGradientError(ValueError):
    """Raised when ``jax.grad`` / ``jax.jvp`` reaches a run's hyper-parameters."""


def _closure_arrays(fn, depth: int, seen: set) -> list:
    """jax Tracers held by ``fn``'s closure (and nested closures, ``depth`` deep)."""
    found = []
    if depth < 0 or id(fn) in seen:
        return found
    seen.add(id(fn))
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, types.FunctionType):
            found += _closure_arrays(value, depth - 1, seen)
        else:
            found += [
                x
                for x in jax.tree_util.tree_leaves(value)
                if isinstance(x, jax.core.Tracer)
            ]
    return found


def hyperparameters(policy) -> list:
    """Traced floating-point numbers the policy was built from (spec and closures)."""
    leaves = []
    spec = getattr(policy, "spec", None)
    if spec is not None:
        leaves += jax.tree_util.tree_leaves(dict(spec.kwargs))
    seen: set = set()
    for fn in (policy.init, policy.step, policy.output):
        leaves += _closure_arrays(fn, 3, seen)
    out, ids = [], set()
    for x in leaves:
        if (
            isinstance(x, jax.core.Tracer)
            and jnp.issubdtype(x.dtype, jnp.floating)
            and id(x) not in ids
        ):
            ids.add(id(x))
            out.append(x)
    return out


@jax.custom_jvp
def _identity(outputs, hparams):
    del hparams
    return outputs


def _identity_jvp(primals, tangents):
    outputs, hparams = primals
    out_dot, hp_dot = tangents
    if any(not isinstance(t, SymbolicZero) for t in jax.tree_util.tree_leaves(hp_dot)):
        raise TrajectoryGradientError(MESSAGE.format(what="its hyper-parameters"))
    out_dot = jax.tree_util.tree_map(
        lambda t, x: jnp.zeros_like(x) if isinstance(t, SymbolicZero) else t,
        out_dot,
        outputs,
        is_leaf=lambda t: isinstance(t, SymbolicZero),
    )
    return outputs, out_dot


_identity.defjvp(_identity_jvp, symbolic_zeros=True)


def guard_outputs(outputs, policy):
    """``outputs`` unchanged; differentiating them w.r.t. the policy's numbers raises.

    Args:
      outputs: any pytree of arrays (a run's metrics, regret, reward).
      policy: the :class:`~jbandits.core.types.Policy` that produced them.

    Returns:
      ``outputs`` (the same values; an identity with a custom JVP when the policy
      holds traced numbers, else the very same objects).
    """
    hparams = hyperparameters(policy)
    if not hparams:
        return outputs
    return _identity(outputs, hparams)
