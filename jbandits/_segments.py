"""The engine's inner loop: the pulls of one replication between two checkpoints.

:func:`segments` runs them as a ``lax.while_loop`` over segments of ``seg`` steps
(an inner ``lax.scan``), only while the replication still has budget left and its
policy is not idle. A *guarded* step keeps the carry of a lane past its limit or
idle (a select over the whole carry); under a named ``vmap`` axis a segment in
which no lane can run out of budget runs *unguarded* steps and restores the lanes
already finished by one select per segment (:func:`fast_segment`).

The carry of one replication is the tuple ``(state, counts, t, total, reward,
one)``: the policy state, pull counts (policy numbering), pulls made, realised
reward so far, the reward of the next pull (see :func:`draw`) and the unguarded
step's count increment 1.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from jbandits import _prng
from jbandits.types import Array, Bandit, Key, Policy, State

UNROLL = 1  # inner-scan unrolling (measured in benchmarks/throughput.py)


class Play(NamedTuple):
    """What every step of one replication reads; the same for the whole run."""

    policy: Policy
    bandit: Bandit
    params: Any  # the instance
    key_steps: Key  # step keys: fold_in(key_steps, t)
    key_env: Key  # the reward stacks
    perm: Array  # [K] policy arm a is bandit arm perm[a]
    ftype: Any  # float dtype of the reward total
    seg: int  # static steps per segment
    record_arms: bool  # guarded steps output the pulled arm (bandit numbering)
    axis_name: str | None  # the named vmap axis over replications, if any
    keyed: bool = True  # an unguarded step advances the step counter itself


def step_key(steps_key: Key, t: Any) -> Key:
    """Key passed to ``policy.step`` after pull ``t`` (0-based)."""
    return _prng.fold_in(steps_key, t)


_READS_KEY: dict = {}  # key_cache -> step_reads_key (see cached_reads_key)


def step_reads_key(policy: Policy, state: State, reward: Any) -> bool:
    """Whether ``policy.step`` reads its key (traced once, dead code removed).

    A step that never reads its key (APT, Sequential Halving, UCB1 with first ties)
    does not need the engine's per-lane step counter inside a segment, only at its
    end: one kernel less per step. Any failure to tell counts as reading it.
    """
    try:
        from jax._src.interpreters import partial_eval as pe

        closed = jax.make_jaxpr(lambda k: policy.step(state, k, reward))(
            jax.random.key(0)
        )
        _, used = pe.dce_jaxpr(closed.jaxpr, [True] * len(closed.jaxpr.outvars))
        return bool(used[0])
    except Exception:  # noqa: BLE001 - an internal API: keep the counter
        return True


def cached_reads_key(policy, state, reward, key_cache, num_arms: int) -> bool:
    """:func:`step_reads_key`, remembered per ``key_cache`` (see
    :func:`jbandits.engine.run`)."""
    if key_cache is None:
        return step_reads_key(policy, state, reward)
    cache = (key_cache, num_arms, jax.config.x64_enabled)
    if cache not in _READS_KEY:
        _READS_KEY[cache] = step_reads_key(policy, state, reward)
    return _READS_KEY[cache]


def draw(play: Play, state: State, counts: Array) -> Array:
    """The reward of the arm ``state`` pulls next: the ``counts[a]``-th of the
    reward stack of bandit arm ``perm[a]``, for policy arm ``a``. Drawn at the end
    of the step that chose the arm and carried into the next one, so that it is
    computed once, in a kernel of its own, and read from the carry by every
    statistic it updates (computed inside the step, XLA fused the hash into each
    consumer and repeated it there)."""
    a = jnp.maximum(state.arm, 0)
    return play.bandit.sample(play.params, play.key_env, play.perm[a], counts[a])


def guarded_step(play: Play, limit: Array):
    """One pull as a scan body: a lane past ``limit`` or idle keeps its carry (a
    select over the whole carry). Outputs the pulled arm if ``record_arms``."""

    def body(carry, _):
        state, counts, t, total, reward, one = carry
        a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
        new = play.policy.step(state, step_key(play.key_steps, t), reward)
        gained = jnp.asarray(reward).astype(play.ftype)
        live = (t < limit) & (state.arm >= 0)
        state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
        counts = counts.at[a].add(live.astype(jnp.int32))
        total = total + jnp.where(live, gained, 0.0)
        reward = jnp.where(live, draw(play, state, counts), reward)
        ys = None
        if play.record_arms:
            ys = jnp.where(live, play.perm[a], -1).astype(jnp.int32)
        return (state, counts, t + live.astype(jnp.int32), total, reward, one), ys

    return body


def unguarded_step(play: Play):
    """One pull as a scan body, for segments in which every lane is known to stay
    live: the step writes its results directly and marks the reward total NaN if
    it met an idle state after all."""

    def body(carry, _):
        state, counts, t, total, reward, one = carry
        a = jnp.maximum(state.arm, 0)  # counts are kept in policy numbering
        new = play.policy.step(state, step_key(play.key_steps, t), reward)
        gained = jnp.asarray(reward).astype(play.ftype)
        # an idle step (the policy stopped inside the segment) leaves NaN in the
        # reward total, which sends the segment to the guarded redo
        gained = jnp.where(state.arm < 0, jnp.nan, gained)
        counts = counts.at[a].add(one)
        ahead = draw(play, new, counts)
        # a policy that reads its key needs the step counter every step (step keys
        # from the segment's first step plus the scan index let XLA fuse the key's
        # hash into its consumers: UCB1 ran 15 % slower); for the others the
        # segment adds its length once (fast_segment)
        t = t + 1 if play.keyed else t
        return (new, counts, t, total + gained, ahead, one), None

    return body


def lanes_all(pred: Array, axis_name: str) -> Array:
    """``pred`` holds on every lane of ``axis_name`` (an unbatched predicate)."""
    missing = jax.lax.psum((~pred).astype(jnp.int32), axis_name)
    return missing == 0


def guarded_segment(play: Play, limit: Array, carry: tuple) -> tuple:
    """``seg`` guarded steps."""
    return jax.lax.scan(
        guarded_step(play, limit), carry, None, length=play.seg, unroll=UNROLL
    )[0]


def fast_segment(play: Play, limit: Array, carry: tuple, done: Array) -> tuple:
    """``seg`` unguarded steps, then one select that keeps the carry of the lanes
    that were already ``done``; redone guarded if a live lane met an idle state."""
    out = jax.lax.scan(
        unguarded_step(play), carry, None, length=play.seg, unroll=UNROLL
    )[0]
    if not play.keyed:  # every live lane made ``seg`` steps
        out = (*out[:2], out[2] + play.seg, *out[3:])

    def keep_done(c):
        return jax.tree_util.tree_map(lambda n, o: jnp.where(done, o, n), out, c)

    return jax.lax.cond(
        lanes_all(done | ~jnp.isnan(out[3]), play.axis_name),
        keep_done,
        lambda c: guarded_segment(play, limit, c),
        carry,
    )


def segments(play: Play, limit: Array, carry: tuple) -> tuple[tuple, Array]:
    """Segments of steps while the replication is live (under ``axis_name``: while
    any lane of the axis is); the carry after them and the segments run."""

    def live(loop):
        (state, _, t, *_), _ = loop
        pred = (t < limit) & (state.arm >= 0)
        if play.axis_name is None:
            return pred
        return jax.lax.psum(pred.astype(jnp.int32), play.axis_name) > 0

    def segment_(loop):
        inner_carry, n = loop
        if play.axis_name is None:
            return guarded_segment(play, limit, inner_carry), n + 1
        state, t = inner_carry[0], inner_carry[2]
        done = (t >= limit) | (state.arm < 0)
        clean = lanes_all(done | (t + play.seg <= limit), play.axis_name)
        inner_carry = jax.lax.cond(
            clean,
            lambda c: fast_segment(play, limit, c, done),
            lambda c: guarded_segment(play, limit, c),
            inner_carry,
        )
        return inner_carry, n + 1

    return jax.lax.while_loop(live, segment_, (carry, jnp.zeros((), jnp.int32)))


def recorded(play: Play, limit: Array, carry: tuple, inner: int):
    """``inner`` guarded steps as a fixed-length scan, so that every step has an
    output (``record_arms``); the carry, the arms and the segments (informational)."""
    carry, arms = jax.lax.scan(guarded_step(play, limit), carry, None, length=inner)
    used = jnp.asarray(-(-inner // play.seg), jnp.int32)  # informational
    return carry, arms, used
