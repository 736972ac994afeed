"""One replication (one lane) of a policy on one instance, written once for every
backend: its set-up (:func:`begin`), its pull (:func:`pull`, :func:`draw`) and its
read-outs (:func:`read`, :func:`regret`).

The XLA engine (:mod:`jbandits.sim.engine`, whose loop is in
:mod:`jbandits.sim.segments`) and the fused kernel (:mod:`jbandits.sim.fused.lane`)
both call these functions; a backend differs only in the array primitives it hands
them, an :class:`Ops`: :data:`XLA` indexes and scatters, the fused kernel (which has
no gather or scatter) passes one-hot masked sums.

Randomness of one replication: its key splits into (init, steps, rewards,
permutation) keys (:func:`split_key`). The policy's step after pull ``t`` (0-based)
gets ``fold_in(steps_key, t)`` (:func:`step_key`); the ``j``-th reward of arm ``i``
comes from the reward stack of the rewards key, shared by every policy run with the
same key (common random numbers). It is drawn at the end of the step that chose arm
``i`` and carried to the next step (:func:`draw`); the rewards are the same as if
drawn at the pull. With ``permute``, policy arm ``a`` is bandit arm ``perm[a]``
(:func:`arm_order`): the policy sees a random relabelling of the arms, so that its
lowest-index tie-breaking is unbiased with respect to arm identity.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jbandits.core import prng as _prng
from jbandits.core.types import Array, Bandit, Key, Policy, State


# ------------------------------------------------------------------ keys and arms
def split_key(key: Key) -> tuple[Key, Key, Key, Key]:
    """(init, steps, rewards, permutation) keys of one replication."""
    k = jax.random.split(key, 4)
    return k[0], k[1], k[2], k[3]


def step_key(steps_key: Key, t: Any) -> Key:
    """Key passed to ``policy.step`` after pull ``t`` (0-based)."""
    return _prng.fold_in(steps_key, t)


def arm_order(key_perm: Key, num_arms: int, permute: bool) -> Array:
    """``perm`` [K]: policy arm ``a`` is bandit arm ``perm[a]`` (random if
    ``permute``, else the identity)."""
    if permute:
        return jax.random.permutation(key_perm, num_arms).astype(jnp.int32)
    return jnp.arange(num_arms, dtype=jnp.int32)


def to_bandit_numbering(out: Array, perm: Array) -> Array:
    """A policy output (an arm ``[]``, or per-arm values ``[K]``) in bandit
    numbering; a negative arm (none) stays as it is."""
    if out.ndim == 0:
        return jnp.where(out >= 0, perm[jnp.maximum(out, 0)], out).astype(out.dtype)
    return jnp.zeros_like(out).at[perm].set(out)


# ------------------------------------------------------------------ the backends
class Ops(NamedTuple):
    """The array primitives of a pull, as a backend provides them."""

    take: Callable  # (x [K], i []) -> x[i]
    add_at: Callable  # (x [K], i [], v []) -> x with v added at i
    to_bandit: Callable  # (out, perm) -> out in bandit numbering
    step_key: Callable  # (key_steps, t) -> the key of policy.step after pull t
    env_key: Callable  # key_env -> the key bandit.sample takes


def _take(x, i):
    return x[i]


def _add_at(x, i, v):
    return x.at[i].add(v)


def _same(key):
    return key


XLA = Ops(_take, _add_at, to_bandit_numbering, step_key, _same)
"""The XLA engine's primitives: gathers, scatters and typed keys."""


# ------------------------------------------------------------------ one lane
class Play(NamedTuple):
    """What every step of one replication reads; the same for the whole run."""

    policy: Policy
    bandit: Bandit
    params: Any  # the instance
    key_steps: Key  # step keys: fold_in(key_steps, t)
    key_env: Key  # the reward stacks
    perm: Array  # [K] policy arm a is bandit arm perm[a]
    ftype: Any  # float dtype of the reward total
    seg: int  # static steps per segment (the XLA engine's loop)
    record_arms: bool  # guarded steps output the pulled arm (bandit numbering)
    axis_name: str | None  # the named vmap axis over replications, if any
    keyed: bool = True  # an unguarded step advances the step counter itself
    ops: Ops = XLA


class Begin(NamedTuple):
    """A replication before its first pull (:func:`begin`)."""

    key_steps: Key
    key_env: Key
    perm: Array  # [K] int32
    means: Array  # [K] true means (bandit numbering)
    gaps: Array  # [K] mu* - mu_i (bandit numbering)
    state: State  # policy.init's state (policy numbering)


def begin(policy: Policy, bandit: Bandit, params, keys: tuple, permute: bool) -> Begin:
    """From the replication's :func:`split_key` keys: the arms ordered, the true
    means and gaps read, the policy initialised on the permuted arm mask."""
    key_init, key_steps, key_env, key_perm = keys
    mask = params.arm_mask
    perm = arm_order(key_perm, mask.shape[-1], permute)
    means = bandit.means(params)
    gaps = jnp.max(jnp.where(mask, means, -jnp.inf)) - means
    state = policy.init(key_init, mask[perm])
    return Begin(key_steps, key_env, perm, means, gaps, state)


def draw(play: Play, state: State, counts: Array) -> Array:
    """The reward of the arm ``state`` pulls next: the ``counts[a]``-th of the
    reward stack of bandit arm ``perm[a]``, for policy arm ``a``. Drawn at the end
    of the step that chose the arm and carried into the next one, so that it is
    computed once, in a kernel of its own, and read from the carry by every
    statistic it updates."""
    ops = play.ops
    a = jnp.maximum(state.arm, 0)
    key_env = ops.env_key(play.key_env)
    return play.bandit.sample(
        play.params, key_env, ops.take(play.perm, a), ops.take(counts, a)
    )


def pull(play: Play, limit, state, counts, t, total, reward) -> tuple:
    """One guarded pull: ``policy.step`` on the carried reward, then the next
    reward; a lane at ``limit`` pulls or idle (``state.arm < 0``) keeps its
    values. Returns ``(state, counts, t, total, reward, arm, live)`` (``arm``: the
    policy arm just pulled, ``live``: whether it was)."""
    ops = play.ops
    a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
    new = play.policy.step(state, ops.step_key(play.key_steps, t), reward)
    gained = jnp.asarray(reward).astype(play.ftype)
    live = (t < limit) & (state.arm >= 0)
    state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
    counts = ops.add_at(counts, a, live.astype(jnp.int32))
    total = total + jnp.where(live, gained, 0.0)
    reward = jnp.where(live, draw(play, state, counts), reward)
    return state, counts, t + live.astype(jnp.int32), total, reward, a, live


def regret(ftype, gaps: Array, counts: Array) -> Array:
    """Pseudo-regret ``sum_i n_i (mu* - mu_i)`` of the pull counts, ``gaps`` and
    ``counts`` in the same (policy) numbering: the per-step sum ``sum_t (mu* -
    mu_{A_t})`` regrouped by arm, read at checkpoints instead of every step."""
    pulled = counts > 0
    return jnp.sum(jnp.where(pulled, counts.astype(ftype) * gaps, 0.0))


def read(play: Play, metric, means: Array, mask: Array, state: State) -> dict:
    """The metric of the policy's output (bandit numbering) against the true means;
    ``{}`` without a metric."""
    out = play.ops.to_bandit(play.policy.output(state), play.perm)
    if metric is None:
        return {}
    return dict(metric(out, means, mask))
