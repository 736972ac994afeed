"""The regret index policies on the shared skeleton of policies/_index.py.

UCB1, UCB-V, MOSS, OCUCB and KL-UCB differ only in their index. Each pulls every real
arm once in index order (the initialisation of UCB1: Auer, Cesa-Bianchi, Fischer,
Machine Learning 47, 2002, Figure 1), then the arm with the largest index over the real
arms; exact ties go to a uniformly random maximiser (``tie_break="random"``, the
library default) or to the lowest index (``"first"``, the authors'
behaviour). The output is the real arm with the largest empirical mean.
"""

from __future__ import annotations

from collections.abc import Callable

import jax.numpy as jnp

from jbandits.core.execution import Execution
from jbandits.core.types import Array, Policy
from jbandits.policies.blocks import arms
from jbandits.policies.blocks.index import IndexState, best_arm_index_policy

__all__ = ["IndexFn", "IndexState", "counts_at_least_one", "index_policy"]

# (stats, n, num_real) -> [K] index; n = completed pulls (>= K_real where it matters),
# num_real = K_real = arm_mask.sum() (the "K" of the formulas)
IndexFn = Callable[[arms.ArmStats, Array, Array], Array]


def index_policy(
    num_arms: int,
    index_fn: IndexFn,
    tie_break: str,
    *,
    variance: bool = True,
    execution: Execution | None = None,
) -> Policy:
    """Policy that pulls each real arm once, then ``argmax index_fn(stats, n, K)``.

    ``n`` is the number of completed pulls (the sum of the counts; the step counter,
    so no reduction per step) as an int32 scalar. Output: the real arm with the
    largest empirical mean (lowest index on ties). ``variance=False``: the index reads
    no variance (the statistics keep no second moment). ``execution``: how the step
    compiles (:func:`jbandits.policies.blocks.index.index_policy`'s).
    """

    def index(stats, arm_mask, n):
        return index_fn(stats, n, jnp.sum(arm_mask))

    return best_arm_index_policy(
        num_arms,
        index,
        "regret",
        tie_break=tie_break,
        with_pulls=True,
        variance=variance,
        elementwise=True,  # each index is a function of the arm's own statistics
        execution=execution,
    )


def counts_at_least_one(stats: arms.ArmStats) -> Array:
    """``max(z, 1)``: every division by a count is guarded (an unpulled arm's index is
    never read: every arm is pulled once first)."""
    return jnp.maximum(stats.counts, 1.0)
