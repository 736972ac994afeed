"""Stage engine of the sequential-halving family (SH, SHVar, SHAdaVar).

Stage s ends at step ``ends[s]`` (host schedule, :func:`jbandits.policies.blocks.schedules.halving_equal_stages`
or :func:`jbandits.policies.blocks.schedules.halving_karnin`; a by-K table of them is reduced to the
row of the instance's real K at ``init``, see :mod:`._phases`). Each step updates the
cumulative and the stage-local statistics; at a stage end the ``keep[s]`` active arms
with the largest stage-local means survive (ties by index; means of the stage's own
samples, as in Karnin et al., ICML 2013) and the local
statistics reset.
Inside a stage the base algorithm ``choose(local, active, c, key)`` picks the arm, with
``c`` the number of pulls already made in the stage. Steps after the last stage idle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import jax.numpy as jnp

from jbandits.core.execution import Execution
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases


class HalvingState(NamedTuple):
    stats: arms.ArmStats  # cumulative per-arm statistics (current-guess read-out)
    local: arms.ArmStats  # stage-local per-arm statistics
    active: Array  # [K] bool: arms of the current stage
    stage: Array  # [] int32: current stage (0-based); num_stages = finished
    t: Array  # [] int32: pulls done
    arm: Array  # [] int32: next arm, -1 = idle
    sched: schedules.StageSchedule  # the schedule of this instance's real K


def halving_policy(
    num_arms: int,
    table,
    choose: Callable[[arms.ArmStats, Array, Array], Array],
    variance: bool = True,
    *,
    execution: Execution,
) -> Policy:
    """Policy running the stage schedule ``table`` (one schedule or a by-K table) with
    the in-stage rule ``choose(local, active, c)``; ``variance=False`` when ``choose``
    reads no variance (the statistics then keep no second moment); ``execution``: the
    form of the stage ends (:class:`jbandits.core.execution.Execution`)."""

    # both stage builders give every stage at least one pull, so one stage ends per
    # step at most (a traced schedule is assumed to come from them)
    bound = _phases.max_ends(table.ends, table.num_stages) or 1

    def stage_start(sched, stage):
        prev = sched.ends[jnp.clip(stage - 1, 0, sched.ends.shape[0] - 1)]
        return jnp.where(stage > 0, prev, 0)

    def init_fn(key, arm_mask):
        del key
        sched, active = _phases.start(table, arm_mask)
        local = arms.init_stats(num_arms, variance)
        zero = jnp.zeros((), jnp.int32)
        first = _phases.first_or_idle(choose(local, active, zero), active)
        return HalvingState(local, local, active, zero, zero, first, sched)

    def step_fn(state, key, reward):
        del key
        sched = state.sched
        hot = execution.one_hot_arms  # the GPU form (arms.update)
        stats = arms.update(state.stats, state.arm, reward, one_hot=hot)
        local = arms.update(state.local, state.arm, reward, one_hot=hot)
        t = state.t + 1

        def halve(s, carry):
            active, loc = carry
            score = jnp.where(loc.counts > 0, arms.mean(loc), -jnp.inf)
            return arms.keep_top(score, active, sched.keep[s]), arms.init_stats(
                num_arms, variance
            )

        stage, (active, local) = _phases.end_phases(
            state.stage,
            t,
            sched.ends,
            sched.num_stages,
            halve,
            (state.active, local),
            bound,
            execution=execution,
            sorts=True,
        )
        done = stage >= sched.num_stages
        arm = choose(local, active, t - stage_start(sched, stage))
        arm = jnp.where(done, -1, arm).astype(jnp.int32)
        return HalvingState(stats, local, active, stage, t, arm, sched)

    def output_fn(state):
        return _phases.current_best(state.stats, state.active)

    return Policy(init_fn, step_fn, output_fn, "identification")
