"""Per-arm statistics and masked selection helpers shared by every policy.

This package is the import point (``from jbandits import arms``; ``arms.update``,
``arms.argmax_masked``, ...); the code lives in modules with one job each:

* :mod:`jbandits.policies.blocks.arms.stats`: :class:`ArmStats` (counts, Kahan-compensated sums,
  Welford's M2), :func:`update` (and :func:`column_of`), means and variances, and the read-outs
  :func:`labels_above` and :func:`best_empirical`.
* :mod:`jbandits.policies.blocks.arms.selection`: :func:`argmax_masked` / :func:`argmin_masked` over
  the eligible arms (one-pass, knock-out tree and two-pass forms; ``"first"`` and
  ``"random"`` ties), :func:`rank` and :func:`keep_top`.
* :mod:`jbandits.policies.blocks.arms.sequence`: arms in order: :func:`round_robin`,
  :func:`forced_arm`, :func:`next_real`, :func:`last_real`, :func:`nth_active`,
  :func:`steps_ahead`, :func:`least_pulled`, :func:`one_hot`.
* :mod:`jbandits.policies.blocks.arms.bits`: bit-packed flags (:func:`pack_bits`, :func:`lowest_set`).

The selection thresholds :data:`ONE_PASS_MAX_ARMS` and :data:`TREE_MAX_ARMS` are read
by :mod:`jbandits.policies.blocks.arms.selection` from its own namespace: patch them there.
"""

from jbandits.policies.blocks.arms.bits import _mulhi as _mulhi
from jbandits.policies.blocks.arms.bits import lowest_set, pack_bits
from jbandits.policies.blocks.arms.selection import (
    ONE_PASS_MAX_ARMS,
    TIE_BREAKS,
    TREE_MAX_ARMS,
    argmax_masked,
    argmin_masked,
    keep_top,
    rank,
    uses_one_pass,
    uses_tree,
)
from jbandits.policies.blocks.arms.sequence import (
    forced_arm,
    last_real,
    least_pulled,
    next_real,
    nth_active,
    one_hot,
    round_robin,
    steps_ahead,
)
from jbandits.policies.blocks.arms.stats import (
    ArmStats,
    best_empirical,
    column_of,
    init_stats,
    labels_above,
    mean,
    update,
    var_biased,
    var_unbiased,
    with_extra,
)

__all__ = [
    "ONE_PASS_MAX_ARMS",
    "TIE_BREAKS",
    "TREE_MAX_ARMS",
    "ArmStats",
    "argmax_masked",
    "argmin_masked",
    "best_empirical",
    "column_of",
    "forced_arm",
    "init_stats",
    "keep_top",
    "labels_above",
    "last_real",
    "least_pulled",
    "lowest_set",
    "mean",
    "next_real",
    "nth_active",
    "one_hot",
    "pack_bits",
    "rank",
    "round_robin",
    "steps_ahead",
    "update",
    "uses_one_pass",
    "uses_tree",
    "var_biased",
    "var_unbiased",
    "with_extra",
]
