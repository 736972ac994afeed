"""The engine: one replication of a policy on one instance, as a pure function.

:func:`run` plays one replication. The budget is traced: ``horizon`` is a static
upper bound and steps past ``budget`` are no-ops, so a sweep over budgets compiles
once. Anytime metrics are read at ``num_checkpoints`` evenly spaced steps: the outer
loop runs over checkpoints; between two checkpoints a ``lax.while_loop`` runs segments
of ``segment`` steps (an inner ``lax.scan``) only while the replication still has
budget left and its policy is not idle. Under ``vmap`` the loop runs while *any* lane
is live, so a batch stops at its largest budget rather than at the static horizon;
memory is O(K + C) per replication, independent of the horizon.

:func:`start` sets a replication up (checks, keys, arm permutation, ``policy.init``)
and returns its :class:`Loop`; the loop over checkpoints is one ``lax.scan`` of
:func:`jbandits.sim.segments.checkpoint`, written by the caller (:func:`run`, and the
batched runner's lane program), so that the call path from :func:`jbandits.simulate`
to ``policy.step`` passes through one function per level of the compiled loop.

Every batch axis (replications, instances, grid points) is added by the one batched
runner, :mod:`jbandits.sim.runner` (``simulate``, ``sweep``, ``sweep_grid``).

The replication itself (keys, arm order, the pull, the read-outs) is
:mod:`jbandits.sim.replication`, shared with the fused backend.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.analysis import metrics
from jbandits.core import grad_guard as _grad_guard
from jbandits.core import prng as _prng
from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.types import Array, Bandit, Key, Policy, State
from jbandits.sim import checks as _checks
from jbandits.sim import contract as _contract
from jbandits.sim import replication
from jbandits.sim import segments as _segments
from jbandits.sim.compiler import _known_option, compiler_options  # noqa: F401
from jbandits.sim.segments import step_reads_key


class RunResult(NamedTuple):
    times: Array  # [C] int32: step count at each checkpoint (capped at the budget)
    metrics: dict  # name -> [C] metric of the output at each checkpoint
    regret: Array  # [C] cumulative pseudo-regret sum_t (mu* - mu_{A_t})
    reward: Array  # [C] cumulative realised reward
    pulls: Array  # [K] final pull counts (bandit numbering)
    num_pulls: Array  # [] pulls made (the stopping time of fixed-confidence policies)
    stopped: Array  # [] bool: the policy went idle (stopped) by itself
    output: Array  # final output of the policy (bandit numbering)
    arms: Any  # [T] pulled arm per step (-1: idle / past budget), or None
    state: State | None = None  # final policy state if return_state (policy numbering)
    perm: Any = None  # [K] policy arm a is bandit arm perm[a] (if return_state)
    segments: Any = None  # [C] int32 segments of the inner loop this lane needed
    diagnostics: Any = None  # {name: [C, ...]} policy.diagnostics at each checkpoint
    # [4] int32 contract violations of the policy (replication.VIOLATIONS); the
    # entry points raise when any is nonzero (contract.policy_contract)
    violations: Any = None

    @property
    def num_stopped(self) -> int:
        """Runs the policy stopped by itself (a fixed-confidence rule, a spent
        schedule), over every leading axis."""
        return int(np.sum(np.asarray(self.stopped)))

    @property
    def num_capped(self) -> int:
        """Runs that reached their budget without the policy stopping (every run of
        a regret policy; a capped fixed-confidence run counts at its budget)."""
        return int(np.size(self.stopped)) - self.num_stopped


def lane_varying(carry: Any, lane: Array) -> Any:
    """``carry`` with every leaf made to vary with the lane: ``where(lane, x, x)`` for
    a predicate ``lane`` that is True and batched like the replication's key and
    budget; the same values (XLA folds the select away; no step kernel changes).

    Under ``vmap`` a loop whose initial carry holds unbatched leaves (zero counts,
    ``t = 0``, a policy's zero statistics) is traced twice by JAX's batching rule:
    once to find that the body makes them batched, once more with them batched, and
    every loop nested in the body repeats this, so the engine's four nested levels
    (checkpoints, segments, the fast/guarded ``cond``, steps) were batched several
    times over. With every leaf batched from the start, each is batched once (about
    half the batching work and tracing time, the same results and step HLO; see
    benchmarks/notes_sim.md). PRNG key
    leaves are left as they are (they derive from the lane's key already).
    """

    def vary(x):
        if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return x
        return jnp.where(lane, x, x)

    return jax.tree_util.tree_map(vary, carry)


def _check_run(policy: Policy, bandit: Bandit, params, key, budget, horizon) -> None:
    """Host-side checks of a run's arguments (budget checks skipped when traced)."""
    _validate.bandit_params(bandit, params)
    _checks.policy_given(policy)
    mask = params.arm_mask
    b = _validate.concrete_int("budget", budget, minimum=1, maximum=_validate.INT32_MAX)
    if b is None:
        return
    if isinstance(horizon, int):
        _checks.within_horizon(b, horizon)
    spec = getattr(policy, "spec", None)
    if _validate.is_concrete(mask):
        real = int(np.sum(np.asarray(jax.device_get(mask))))
        _checks.one_pull_per_arm(b, real)
        if spec is not None:
            registry.check_budgets(spec.name, dict(spec.kwargs), [b], [real])
    _checks.built_budget(spec, b)


def run(
    policy: Policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    budget: Any,
    horizon: Any,
    num_checkpoints: int = 1,
    metric: Any = None,
    record_arms: bool = False,
    permute: bool = False,
    return_state: bool = False,
    segment: int | None = None,
    axis_name: str | None = None,
    diagnostics: bool = False,
    key_cache: Any = None,
) -> RunResult:
    """One replication of ``policy`` on one instance; pure and jittable.

    ``permute`` defaults to False here, so one replication plays the arms as numbered
    (what the trace-equivalence references assume). The batched entry points
    (:func:`jbandits.simulate`, :func:`jbandits.sweep`, :func:`jbandits.sweep_grid`)
    default to ``permute=True``: the papers break ties arbitrarily or at random, and
    the policies here break them toward the lowest index, which favours or penalises
    whichever arm a user lists first.

    Args:
      policy: a :class:`~jbandits.core.types.Policy`.
      bandit, params: the reward family and one instance (``params.arm_mask`` [K]).
      key: the replication key.
      budget: number of pulls (may be traced); must be <= ``horizon``.
      horizon: sets the checkpoint spacing: checkpoint ``c`` (1-based) is read after
        ``min(c * ceil(horizon / C), budget)`` pulls. May be traced (one compilation
        for every horizon), except with ``record_arms`` (then a static int).
      num_checkpoints: static number C of evenly spaced metric read-outs.
      metric: a callable ``(output, means, arm_mask) -> dict`` (see
        :mod:`jbandits.analysis.metrics`), or None for regret only.
      record_arms: also return the pulled arm of every step (small horizons only).
      permute: relabel the arms by a random permutation per replication, so that
        "first" tie-breaking is unbiased with respect to arm identity.
      return_state: also return the final policy state and the permutation (for
        diagnostics such as EUCBV's active set).
      segment: static steps per inner segment (default :func:`default_segment`); only
        the granularity at which a finished batch stops, never the result.
      diagnostics: also read ``policy.diagnostics`` at every checkpoint
        (``RunResult.diagnostics``: ``{name: [C, ...]}``, bandit numbering).
      axis_name: the name of an enclosing ``vmap`` axis over replications. The inner
        loop then continues while any lane of that axis is live (one predicate for
        the batch, reduced with ``psum``) instead of per lane, which spares XLA a
        select over the whole carry after every segment. Segments in which no lane
        can run out of budget run their steps without the per-step select over the
        carry (lanes already finished are restored by one select per segment, and
        the segment is redone step by step if a policy went idle inside it); results
        are identical.
      key_cache: a hashable name of the policy's structure (the batched runner passes
        its factory and static arguments): whether its step reads its key
        (:func:`step_reads_key`, one extra trace of the step) is then worked out once
        per name, number of arms and build, not once per compiled program.

    Returns:
      A :class:`RunResult`. Its ``violations`` count the policy's breaches of its
      contract (:data:`jbandits.sim.replication.VIOLATIONS`); called eagerly, ``run``
      raises when any is nonzero; under ``jit`` / ``vmap`` pass them to
      :func:`jbandits.sim.contract.policy_contract` after the call.

    Raises:
      ValueError: ``horizon``, ``num_checkpoints`` or ``segment`` not a positive int;
        ``diagnostics=True`` for a policy without a diagnostics channel; a key that
        is not one PRNG key (:func:`jbandits.core.prng.one_key`).
      PolicyError: (eager calls) the policy pulled or output an arm out of range.
    """
    options = RunOptions(
        num_checkpoints, metric, diagnostics, record_arms, return_state, permute,
        segment,
    )  # fmt: skip
    loop = start(
        policy, bandit, params, key, budget, horizon, options, axis_name, key_cache
    )
    try:
        carry, outs = jax.lax.scan(loop.checkpoint, loop.carry, loop.checkpoints)
    except _validate.PolicyError:
        raise
    except (TypeError, ValueError, IndexError, AttributeError) as err:
        raise _contract.policy_failure(err, loop.perm_size, *_rebuild(policy)) from err
    result = loop.result(carry, outs)
    if _validate.is_concrete(result.violations):  # an eager call: check it here
        _contract.policy_contract(
            result.violations, _contract.policy_name(policy), num_arms=loop.perm_size
        )
    return result


def _rebuild(policy: Policy) -> tuple:
    """``(policy_of, numbers)`` for :func:`jbandits.sim.contract.policy_failure`: a
    registered policy rebuilt from its spec with other numbers, else itself."""
    spec = policy.spec
    if spec is None:
        return (lambda numbers: policy), {}
    static = dict(spec.static)
    return (lambda numbers: registry.make(spec.name, **static, **numbers)), spec.params


class Loop(NamedTuple):
    """One replication set up for its loop over checkpoints (:func:`start`)::

        carry, outs = jax.lax.scan(loop.checkpoint, loop.carry, loop.checkpoints)
        result = loop.result(carry, outs)

    (:func:`run`, and the batched runner's lane program, which writes the loop
    where it builds the lane's policy.)
    """

    checkpoint: Any  # the scan body ``(carry, c) -> (carry, read-outs)``
    carry: tuple  # the loop carry before the first pull
    checkpoints: Array  # [C] int32: 0 .. C - 1
    play: replication.Play
    budget: Array
    inner: Any  # steps between checkpoints (traced with the horizon)
    horizon: Any
    return_state: bool
    policy: Policy  # the policy as given (its numbers guard the outputs)

    @property
    def perm_size(self) -> int:
        """K, the arms of the instance (padded ones included)."""
        return self.play.perm.shape[-1]

    def result(self, carry, outs) -> RunResult:
        """The :class:`RunResult` of the final carry and the checkpoints' read-outs."""
        return _result(
            self.play, self.policy, carry, outs, self.budget, self.inner,
            self.horizon, self.return_state,
        )  # fmt: skip


class RunOptions(NamedTuple):
    """The static options of a replication (see :func:`run`'s arguments): what is
    read, then how it is played."""

    num_checkpoints: int = 1
    metric: Any = None
    diagnostics: bool = False
    record_arms: bool = False
    return_state: bool = False
    permute: bool = False
    segment: int | None = None


def start(
    policy: Policy,
    bandit: Bandit,
    params,
    key: Key,
    budget,
    horizon,
    options: RunOptions,
    axis_name: str | None = None,
    key_cache=None,
) -> Loop:
    """:func:`run` up to its loop over checkpoints: the arguments checked, the keys
    split, the arms permuted, the policy initialised; its :class:`Loop`."""
    num_checkpoints, metric, diag, record_arms, return_state, permute, segment = options
    num_checkpoints = _validate.static_int(
        "num_checkpoints", num_checkpoints, minimum=1, maximum=_validate.INT32_MAX
    )
    horizon, inner, seg = _segments.spacing(
        horizon, num_checkpoints, segment, record_arms
    )
    if isinstance(horizon, int):
        _checks.checkpoint_times(num_checkpoints, horizon)
    key = _prng.one_key(key)  # legacy data wrapped: the same stream as simulate's
    _check_run(policy, bandit, params, key, budget, horizon)
    if diag:
        _segments.check_diagnostics(policy)
    metrics.check_setting(metric, policy)
    mask = params.arm_mask
    num_arms = mask.shape[-1]
    keys = replication.split_key(key)
    # True on every lane, and batched wherever the key or the budget is
    lane = (jax.random.key_data(key).reshape(-1)[0] >= 0) & (jnp.asarray(budget) >= 0)
    lane0 = replication.begin(policy, bandit, params, keys, permute)
    readout = _segments.Readout(metric, lane0.means, mask, lane0.gaps, diag)
    budget = jnp.asarray(budget, jnp.int32)
    play = replication.Play(
        policy, bandit, params, lane0.key_steps, lane0.key_env, lane0.perm,
        jnp.result_type(float),
    )  # fmt: skip
    state0 = lane0.state
    counts0 = jnp.zeros((num_arms,), jnp.int32)
    # only the fast segments (with axis_name) leave the counter out of a step
    keyed = axis_name is None or step_reads_key(
        policy,
        state0,
        replication.draw(play, state0, counts0),
        None if key_cache is None else (key_cache, num_arms),
    )
    kept = (
        ()
        if axis_name is None
        else _segments.kept_leaves(
            policy,
            state0,
            replication.draw(play, state0, counts0),
            None if key_cache is None else (key_cache, num_arms),
        )
    )
    plan = _segments.Plan(seg, record_arms, axis_name, keyed, kept)
    carry0 = lane_varying(_initial_carry(play, state0, counts0, budget), lane)
    block = functools.partial(_segments.checkpoint, play, plan, readout, budget, inner)
    checkpoints = jnp.arange(num_checkpoints, dtype=jnp.int32)
    return Loop(block, carry0, checkpoints, play, budget, inner, horizon,
                return_state, policy)  # fmt: skip


def _initial_carry(play: replication.Play, state0, counts0, budget) -> tuple:
    """The loop carry before the first pull (see :mod:`jbandits.sim.segments`)."""
    return (
        state0,
        counts0,
        jnp.zeros((), jnp.int32),
        jnp.zeros((), play.ftype),  # realised reward so far
        replication.draw(play, state0, counts0),  # the reward of the next pull
        # the unguarded step's count increment, 1, carried from a value XLA
        # cannot fold (a folded 1 is broadcast again in every step: a kernel)
        (budget >= 0).astype(jnp.int32),
    )


def _result(play: replication.Play, given, carry, outs, budget, inner, horizon,
            return_state):  # fmt: skip
    """The :class:`RunResult` of the final carry and the checkpoints' read-outs
    (guarded against ``jax.grad`` with respect to the numbers of ``given``)."""
    values, regret, total, arms, used, diag, outside = outs
    state = carry[0]
    reads = _grad_guard.guard_outputs((values, regret, total), given)
    return assemble(
        inner, budget, play.perm, play.params.arm_mask, state.arm, carry[1],
        carry[2], lambda: play.policy.output(state), (*reads, outside), used,
        arms=None if arms is None else arms.reshape(-1)[:horizon],
        state=state if return_state else None,
        perm=play.perm if return_state else None,
        diagnostics=diag,
    )  # fmt: skip


class _Arm(NamedTuple):
    arm: Array


def assemble(inner, budget, order, mask, arm, counts, t, output, reads, used,
             **extra) -> RunResult:  # fmt: skip
    """One lane's :class:`RunResult` from its final values, for both backends (the
    fused driver maps it over its lanes): checkpoint times, pulls and output in
    bandit numbering, stopped, the contract violations
    (:func:`jbandits.sim.replication.violations`).

    ``order``: ``perm`` (policy arm ``a`` is bandit arm ``order[a]``), ``arm``: the
    final ``state.arm`` (policy numbering; only its sign and ``< -1``
    are read), ``counts`` / ``t``: the final pull counts (policy numbering) and pull
    count, ``output()``: the policy's output (policy numbering), ``reads``: the
    checkpoints' ``(values, regret, total, outside)`` ``[C]``, ``used``: segments
    run per checkpoint; ``extra``: the optional fields (arms, state, perm,
    diagnostics).
    """
    values, regret, total, outside = reads
    num_checkpoints = regret.shape[0]
    times = jnp.minimum(jnp.arange(1, num_checkpoints + 1) * inner, budget)
    times = times.astype(jnp.int32)
    pulls = replication.to_bandit_numbering(counts, order)
    num_pulls = jnp.sum(counts)
    stopped = arm < 0
    out = replication.to_bandit_numbering(output(), order)
    bad = replication.violations(_Arm(arm), counts, t, pulls, mask, outside)
    fields = {"arms": None, "state": None, "perm": None, "diagnostics": None, **extra}
    return RunResult(
        times, values, regret, total, pulls, num_pulls, stopped, out,
        segments=used, violations=bad, **fields,
    )  # fmt: skip
