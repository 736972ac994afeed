"""Sequential Halving, two variants.

* ``variant="equal_stages"`` (default): Algorithm 1 with Algorithm 2 "SH" of Lalitha,
  Kalantari, Ma, Deoras, Kveton (UAI 2023).
  m = ceil(log2 K) stages of n_s = floor(T / m) pulls each; the c-th pull of a stage
  goes to the ((c - 1) mod |A_s|) + 1-th active arm in index order; after the stage
  the ceil(|A_s| / 2) arms with the largest stage-local means survive.
* ``variant="karnin"``: Karnin, Koren, Somekh (2013). Round r pulls each of its |S_r|
  arms exactly t_r = floor(T / (|S_r| ceil(log2 K))) times, then halves the same way.

Both run on one stage engine (:mod:`._halving`): the in-stage arm is the least pulled
(in this stage) active arm, lowest index on ties, which is index-order round robin; the
variants differ only in the host schedule (stage ends). The default is Lalitha et al.'s
form because this library reproduces their experiments (SH is its baseline and the
skeleton of SHVar/SHAdaVar); use ``variant="karnin"`` to reproduce Karnin et al. Means
are stage-local (the t_r samples of the stage, Karnin et al.); ties in the halving go to
the lowest index.
"""

from __future__ import annotations

import functools
from typing import Any

from jbandits.core import registry
from jbandits.core import validate as _validate
from jbandits.core.execution import Execution
from jbandits.core.types import ArrayLike, Policy
from jbandits.policies.blocks import arms, schedules
from jbandits.policies.blocks import phases as _phases
from jbandits.policies.identification import _halving

VARIANTS = ("equal_stages", "karnin")


def _variant(variant: str) -> str:
    return _validate.choice("variant", variant, VARIANTS)


def halving_schedule(
    num_real_arms: int,
    budget: int,
    size: int | None = None,
    variant: str = "equal_stages",
) -> schedules.StageSchedule:
    """Host-side exact stage schedule for ``num_real_arms`` real arms.

    ``size`` pads the stage arrays (use ``num_halving_stages(K_max)`` so that padded
    instances and budget sweeps stack with :func:`jbandits.policies.blocks.schedules.stack`).
    """
    return _builder(variant)(num_real_arms, budget, size)


def _builder(variant: str):
    variant = _variant(variant)
    return (
        schedules.halving_equal_stages
        if variant == "equal_stages"
        else schedules.halving_karnin
    )


def halving_schedule_by_k(
    num_arms: int, budget: int, variant: str = "equal_stages"
) -> schedules.StageSchedule:
    """Stage schedules for every real K = 0..num_arms, ``[num_arms + 1, S]`` with
    S = ceil(log2 num_arms). Rows with K < 2 or T < K ceil(log2 K) are idle."""
    return schedules.by_k(
        _builder(variant), num_arms, budget, **schedules.stage_rows(num_arms)
    )


def prepare(
    num_arms: int,
    num_real_arms: int,
    budget: int,
    *,
    variant: str = "equal_stages",
    **kwargs,
) -> dict:
    """Host-side keyword arguments for a factory call with a traced budget.

    Returns ``{"schedule": ...}``: the ``variant`` stage schedule of ``num_real_arms``
    real arms and budget ``budget``, padded to ceil(log2 num_arms) stages (the row of
    :func:`halving_schedule_by_k` for that K, idle if none exists). Other keyword
    arguments are ignored.
    """
    del kwargs
    build = _builder(variant)
    sched = schedules.for_k(
        build, num_real_arms, budget, **schedules.stage_rows(num_arms)
    )
    return {"schedule": sched}


def prepare_equal_stages(num_arms: int, num_real_arms: int, budget: int, **kwargs):
    """:func:`prepare` of the policies on Lalitha et al.'s equal stages (SHVar,
    SHAdaVar): ``variant="equal_stages"``; other keyword arguments are ignored."""
    del kwargs
    return prepare(num_arms, num_real_arms, budget, variant="equal_stages")


EQUAL_STAGES = _phases.schedule_arguments(
    "equal-stages halving (Lalitha et al.)",
    halving_schedule,
    halving_schedule_by_k,
    prepare_equal_stages,
    schedules.halving_min_budget,
)


@registry.policy(
    "sequential_halving", prepare=prepare, min_budget=schedules.halving_min_budget
)
def sequential_halving(
    num_arms: int,
    *,
    budget: ArrayLike | None = None,
    schedule: Any = None,
    variant: str = "equal_stages",
    execution: Execution | None = None,
) -> Policy:
    """Sequential Halving for fixed-budget best-arm identification.

    Args:
      num_arms: static K_max (including padded arms).
      budget: T; needed (concrete) only when ``schedule`` is None (then the
        schedules of every real K are built, :func:`halving_schedule_by_k`, and
        ``init`` runs that of ``arm_mask.sum()``).
      schedule: a :class:`jbandits.policies.blocks.schedules.StageSchedule` from
        :func:`halving_schedule` or :func:`prepare` for the real K (may be traced;
        another K makes the policy idle with output ``-1``), or a by-K table from
        :func:`halving_schedule_by_k`. It fixes the variant.
      variant: static, "equal_stages" or "karnin"; selects the schedule built from
        ``budget``.
      execution: how the step compiles (static); see :mod:`jbandits.policies`.

    Returns:
      A :class:`~jbandits.core.types.Policy` recommending one arm, ``[] int32`` (ties to
      the lowest index, :mod:`jbandits.policies`).

    References:
      Karnin, Koren, Somekh. Almost optimal exploration in multi-armed bandits.
      ICML 2013.
      Lalitha, Kalantari, Ma, Deoras, Kveton. Fixed-budget best-arm identification
      with heterogeneous reward variances. UAI 2023 (Algorithms 1 and 2).
    """
    num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
    execution = Execution.resolve(execution)
    variant = _variant(variant)
    table = _phases.resolve(
        "sequential_halving",
        functools.partial(halving_schedule_by_k, variant=variant),
        num_arms,
        budget,
        schedule,
    )

    def choose(local, active, c):
        del c
        # least pulled, lowest index on ties; the GPU form in one (value, index)
        # reduction (the same arm; one kernel less per step at K > 32)
        one_pass = execution.one_hot_arms
        return arms.argmin_masked(local.counts, active, one_pass=one_pass)

    return _halving.halving_policy(
        num_arms, table, choose, variance=False, execution=execution
    )
