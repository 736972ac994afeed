"""The author tier: the public building blocks the library's policies are made of, for
a user's own policy (which then imports nothing private).

=========================  ==========================================================
:mod:`~.arms`              per-arm statistics (:class:`~.arms.ArmStats`: counts,
                           compensated sums, Welford's M2; ``update``, means, variances),
                           masked arg-max / arg-min with tie rules, ranks, round robin
:mod:`~.index`             the index-policy skeleton: round robin, then the arg-max of an
                           index (:func:`~.index.index_policy`)
:mod:`~.phases`            phase ends and eliminations as masked fixed-shape updates
                           (Successive Rejects / Halving style schedules)
:mod:`~.rounds`            round counters (UCB-Improved / EUCBV style resets)
:mod:`~.schedules`         exact host-side schedules (int arrays, stacked per sweep cell)
:mod:`~.numerics`          KL divergences and KL-UCB bounds, Beta quantiles, special
                           functions, fixed iteration counts
:mod:`~.kl_bounds`         KL confidence intervals (upper and lower) per family
:mod:`~.glr`               the GLR (Chernoff) stopping rule and its thresholds
:mod:`~.fixed_confidence`  the fixed-confidence skeleton: state, argument checks,
                           observe-then-stop step, recommendation
                           (:func:`~.fixed_confidence.glr_policy`)
:mod:`~.tracking`          tracking rules' parts: forced exploration, ``w*`` on a grid,
                           rare work under ``vmap`` (:func:`~.tracking.when_any`)
:mod:`~.tstar`             the optimal weights w*(mu) and T*(mu), fixed-iteration
:mod:`~.posterior`         posterior samples and best-arm probabilities
:mod:`~.sampling`          the Beta sampler of the Thompson-type policies
:mod:`~.fuse`              materialise a value once (a kernel-count tool)
=========================  ==========================================================

The policy contract (:class:`jbandits.Policy`): ``init(key, arm_mask) -> state`` with
``state.arm`` the first arm to pull; ``step(state, key, reward) -> state``, where
``reward`` is the reward of ``state.arm`` and the new ``state.arm`` is the next arm to
pull (``-1``: stop; absorbing); ``output(state)`` the answer. Register a factory with
:func:`jbandits.core.registry.policy` so that its numbers are traced
(:mod:`jbandits.core.numbers`).
"""

from jbandits.policies.blocks import (
    arms,
    fixed_confidence,
    fuse,
    glr,
    index,
    kl_bounds,
    numerics,
    phases,
    posterior,
    rounds,
    sampling,
    schedules,
    tracking,
    tstar,
)

__all__ = [
    "arms",
    "fixed_confidence",
    "fuse",
    "glr",
    "index",
    "kl_bounds",
    "numerics",
    "phases",
    "posterior",
    "rounds",
    "sampling",
    "schedules",
    "tracking",
    "tstar",
]
