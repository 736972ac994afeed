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
from jbandits.core.validate import PolicyError


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
    """What every step of one replication reads, on any backend; the same for the
    whole run (the XLA engine's loop configuration is apart:
    :class:`jbandits.sim.segments.Plan`)."""

    policy: Policy
    bandit: Bandit
    params: Any  # the instance
    key_steps: Key  # step keys: fold_in(key_steps, t)
    key_env: Key  # the reward stacks
    perm: Array  # [K] policy arm a is bandit arm perm[a]
    ftype: Any  # float dtype of the reward total
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


def pull(play: Play, limit, carry: tuple, _=None, *, keyed=True, record=False):
    """One pull, as a ``lax.scan`` body over the carry ``(state, counts, t, total,
    reward, *rest)``: ``policy.step`` on the carried reward, then the next reward
    (:func:`draw`). Both backends' steps are this function.

    *Guarded* (``limit`` given): a lane at ``limit`` pulls or idle (``state.arm <
    0``) keeps its values. *Unguarded* (``limit`` None: the XLA engine's fast
    segments, in which every lane is known to stay live): the step writes its
    results directly, counts the carried increment ``rest[0]`` (a 1 XLA cannot fold)
    and marks the reward total NaN if it met an idle state after all (the segment is
    then redone guarded); ``t`` advances only if ``keyed`` (else the segment adds
    its length once). Returns ``(carry, arm)``: with ``record``, the pulled arm in
    bandit numbering (-1 if none was pulled), else None.
    """
    ops = play.ops
    state, counts, t, total, reward, *rest = carry
    a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
    new = play.policy.step(state, ops.step_key(play.key_steps, t), reward)
    gained = jnp.asarray(reward).astype(play.ftype)
    if limit is None:
        gained = jnp.where(state.arm < 0, jnp.nan, gained)
        counts = ops.add_at(counts, a, rest[0])
        ahead = draw(play, new, counts)
        t = t + 1 if keyed else t
        return (new, counts, t, total + gained, ahead, *rest), None
    live = (t < limit) & (state.arm >= 0)
    state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
    counts = ops.add_at(counts, a, live.astype(jnp.int32))
    total = total + jnp.where(live, gained, 0.0)
    reward = jnp.where(live, draw(play, state, counts), reward)
    arm = jnp.where(live, play.perm[a], -1).astype(jnp.int32) if record else None
    return (state, counts, t + live.astype(jnp.int32), total, reward, *rest), arm


def regret(ftype, gaps: Array, counts: Array) -> Array:
    """Pseudo-regret ``sum_i n_i (mu* - mu_i)`` of the pull counts, ``gaps`` and
    ``counts`` in the same (policy) numbering: the per-step sum ``sum_t (mu* -
    mu_{A_t})`` regrouped by arm, read at checkpoints instead of every step."""
    pulled = counts > 0
    return jnp.sum(jnp.where(pulled, counts.astype(ftype) * gaps, 0.0))


def read(play: Play, metric, means: Array, mask: Array, state: State) -> tuple:
    """The metric of the policy's output (bandit numbering) against the true means
    (``{}`` without a metric), and whether that output is outside its setting's
    range (:func:`output_outside`, an int32 0 or 1)."""
    raw = play.policy.output(state)
    output_form(play.policy.setting, raw, mask.shape[-1])
    out = play.ops.to_bandit(raw, play.perm)
    bad = output_outside(play.policy, raw, out, mask)
    if metric is None:
        return {}, bad
    return dict(metric(out, means, mask)), bad


# ------------------------------------------------------------ the policy, checked
VIOLATIONS = (
    "pulls of an arm >= K",
    "choices of an arm below -1 (the stop signal is -1)",
    "pulls of a masked (padded) arm",
    "checkpoints whose output is outside its setting's range",
)
"""What :func:`violations` counts per lane, in its order."""

_ONE_ARM = ("identification", "regret")  # output: one arm [] (or -1: none)
_ARM_SET = ("thresholding", "top_m")  # output: per-arm 0/1 [K]


def output_outside(policy: Policy, raw: Array, out: Array, mask: Array) -> Array:
    """1 (int32) if a policy's output is outside its setting's range, else 0:
    identification and regret, one arm ``[]``: a real arm or -1 (none);
    thresholding and top-m, per-arm 0/1 ``[K]`` with 0 on the masked arms. ``raw``
    is the output in policy numbering, ``out`` in bandit numbering (the range is
    read on ``raw``, which both backends number alike), ``mask`` in bandit
    numbering. A shape or dtype that does not fit the setting raises PolicyError
    (at trace time); a policy of another setting is not checked."""
    setting = policy.setting
    num_arms = mask.shape[-1]
    output_form(setting, raw, num_arms)
    if setting in _ONE_ARM:
        real = play_take(mask, jnp.clip(out, 0, num_arms - 1))
        good = (raw == -1) | ((raw >= 0) & (raw < num_arms) & real)
    elif setting in _ARM_SET:
        binary = (out == 0) | (out == 1) if out.dtype != jnp.bool_ else True
        good = jnp.all(binary & (mask | (out == 0)))
    else:
        return jnp.zeros((), jnp.int32)
    return (~good).astype(jnp.int32)


def output_form(setting: str, raw: Array, num_arms: int) -> None:
    """Raise PolicyError (at trace time) if an output's shape or dtype does not fit
    its setting: one integer arm ``[]``, or per-arm values ``[K]``."""
    if setting in _ONE_ARM:
        if jnp.shape(raw) != () or not jnp.issubdtype(
            jnp.result_type(raw), jnp.integer
        ):
            raise PolicyError(
                f"a {setting} policy's output must be one arm (an integer scalar), "
                f"got {jnp.result_type(raw)}{list(jnp.shape(raw))}"
            )
    elif setting in _ARM_SET and jnp.shape(raw) != (num_arms,):
        raise PolicyError(
            f"a {setting} policy's output must be per arm, shape ({num_arms},), "
            f"got shape {tuple(jnp.shape(raw))}"
        )


def play_take(x: Array, i: Array) -> Array:
    """``x[i]`` for a scalar ``i`` in range, as a masked sum (no gather: both
    backends)."""
    hit = jnp.arange(x.shape[-1]) == i
    return jnp.any(hit & x)


def violations(state: State, counts: Array, t: Array, pulls: Array, mask: Array,
               outside: Array) -> Array:  # fmt: skip
    """``[4]`` int32 counts of one lane's contract violations, in the order of
    :data:`VIOLATIONS`, from its final values: pulls of an arm >= K (the count
    scatter drops them, so they are the pulls made, ``t``, less the counted ones),
    an idle state below -1 (it ends the run, so 0 or 1), pulls of masked arms
    (``pulls`` and ``mask`` in bandit numbering) and checkpoints with an output
    out of range (``outside`` [C]). Read once per lane after its loop: the step
    itself is unchanged."""
    above = t - jnp.sum(counts)
    below = (state.arm < -1).astype(jnp.int32)
    masked = jnp.sum(jnp.where(mask, 0, pulls))
    bad = jnp.sum(outside)
    return jnp.stack([above, below, masked, bad]).astype(jnp.int32)
