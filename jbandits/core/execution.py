"""How a policy's step is compiled, as an explicit option: never what it computes.

Some updates have several equivalent forms whose speed depends on the device: a phase
end of Sequential Halving can run as a ``lax.while_loop`` over the due phases or as a
fixed-shape masked update, unrolled; Bayes-UCB's Beta quantile as a Newton loop or as
a fixed number of bisection halvings; its Gaussian form's posterior means and scales
computed every step or kept per arm; and inside the batched runner a helper can ask
whether a condition holds on *any* lane of the batch (one predicate for all lanes, so
a ``lax.cond`` stays a real branch under ``vmap``) or pool work over the lanes (the
Beta sampler's stage 2). Every form gives the same arms; tests check each pair.

An :class:`Execution` names those choices. A factory whose policy has such forms
takes it as its static ``execution=`` argument (default: :meth:`Execution.default`,
the measured defaults of the current backend, no lanes axis). The batched runner
(:func:`jbandits.simulate`, :func:`jbandits.sweep`, :func:`jbandits.sweep_grid`)
chooses one per program, for the platform of the devices it runs on, with its lanes
axis named, and keys its compiled programs on it; pass ``execution=`` to
:func:`jbandits.simulate` to compare forms. No policy reads a module global or an
ambient context for these choices.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import jax

from jbandits.core import lanes as _lanes
from jbandits.core.types import Array


@dataclass(frozen=True)
class Execution:
    """The compiled form of a policy's step (hashable; part of a program's key).

    Attributes:
      fixed_phase_sorts: phase ends whose update sorts (the halving family's
        selection, a ranking rejection of Successive Rejects, VBR or CSAR) run as
        fixed-shape masked updates under a gate instead of a ``lax.while_loop`` over
        the due phases. Default: on off CPU (why:
        :mod:`jbandits.policies.blocks.phases`; timings:
        ``benchmarks/notes_policies.md``).
      fixed_bisection: Bayes-UCB's Beta quantile by a fixed number of bisection
        halvings instead of Newton steps in a ``lax.while_loop``. Default: off.
      gate: fixed-shape phase ends sit in a ``lax.cond`` on "a phase ends on some
        lane" (on), or run on every step as selects (off).
      lanes: the name of the ``vmap`` axis over the batch's lanes, or None outside a
        named batch: "any lane" predicates then read the lane's own value, and no
        work is pooled over lanes.
      gauss_kept_arms: from this many arms (``num_arms``) Bayes-UCB's Gaussian form
        keeps every arm's posterior mean and scale as two extra rows of its
        statistics, the pulled arm's recomputed with its column: one multiply-add
        per arm and step instead of a division and a square root (the same
        operations on the same numbers, so the same indices). Default 32: on CPU
        the saved per-arm work outweighs the longer gather and scatter from about 32
        arms, not below (``benchmarks/notes_policies.md``; not timed on GPU).
      backend: how the batched runner runs a chunk of lanes: ``"xla"`` (the
        engine's loop of XLA kernels), ``"fused"`` (a block of lanes plays its whole
        budget in one Pallas kernel, :mod:`jbandits.sim.fused`; interpret mode off a
        GPU) or ``"auto"`` (the default: XLA, but fused on a ``gpu``/``cuda``
        platform for the (policy, K) pairs a GPU run measured faster fused,
        ``jbandits.sim.fused.lowering.FUSED_FASTER``: none yet; see
        :mod:`jbandits.sim.fused.backend`). Under ``"auto"`` the
        first call of a fused program at each argument signature also runs the XLA
        program and compares every output exactly; a difference switches that
        program to XLA for good, and the call returns the XLA result. A fused
        program that cannot run (or, under ``"auto"``, differs) falls back to XLA
        with a one-line reason (a warning when ``"fused"`` was asked for, which
        runs unchecked; logged otherwise). Policies ignore it.
      one_hot_arms: the policy's step reads and writes the pulled arm's
        statistics as a one-hot masked sum and one select over the table instead
        of a gather, a concatenation and a scatter
        (:func:`jbandits.policies.blocks.arms.update` ``one_hot``), and a
        lowest-index ("first") selection is one (value, index) reduction at any K
        instead of the two-pass or knock-out tree form (index policies, Thompson
        sampling, the halving family). On a GPU each of those is a kernel of its
        own and the one-hot forms fuse into their neighbours (APT at K = 100: 9
        kernels per unguarded step before, 6 after, counted by
        ``benchmarks/gpu_compile.py``, ``benchmarks/notes_gpu_compile.md``); on CPU
        the gather and scatter are faster (``arms.update``'s docstring). The
        engine's own per-step count update and reward draw keep their gathers and
        scatter: one-hot there added a kernel on a GPU. The same arms either way.
        Default: on off CPU.
      kept_column: with ``one_hot_arms``, an index policy's state also keeps the
        next arm's column of its statistics (and its round-robin successor), read
        where the arm is chosen (a gather of one number per row, fused into the
        kernel that chooses the arm), so that the next update is one select that
        reads the table elementwise: no masked-sum reduction per step
        (:func:`jbandits.policies.blocks.index.index_policy`; APT at K = 100 on an
        H100: 6 kernels per unguarded step before, 5 after,
        ``benchmarks/notes_gpu_compile.md``). The fused kernel turns it off (its
        registers: UCB1 at K = 16, 220 before, 255 with it). The same arms either
        way. Default: on off CPU.
    """

    fixed_phase_sorts: bool = False
    fixed_bisection: bool = False
    gate: bool = True
    lanes: str | None = None
    backend: str = "auto"
    gauss_kept_arms: int = 32
    one_hot_arms: bool = False
    kept_column: bool = False

    def __post_init__(self):
        kept = self.gauss_kept_arms
        if isinstance(kept, bool) or not isinstance(kept, int) or kept < 2:
            raise ValueError(f"gauss_kept_arms must be an integer >= 2, got {kept!r}")
        if self.backend not in ("auto", "xla", "fused"):
            raise ValueError(
                f"backend must be 'auto', 'xla' or 'fused', got {self.backend!r}"
            )

    @classmethod
    def for_platform(cls, platform: str, *, lanes: str | None = None) -> Execution:
        """The measured defaults on ``platform`` ("cpu", "gpu", "cuda", "tpu", ...)."""
        off_cpu = platform != "cpu"
        return cls(
            fixed_phase_sorts=off_cpu,
            lanes=lanes,
            one_hot_arms=off_cpu,
            kept_column=off_cpu,
        )

    @classmethod
    def default(cls) -> Execution:
        """:meth:`for_platform` of JAX's default backend, without a lanes axis."""
        return cls.for_platform(jax.default_backend())

    @classmethod
    def resolve(cls, execution: Execution | None) -> Execution:
        """``execution``, or :meth:`default` for None; anything else is an error."""
        if execution is None:
            return cls.default()
        if not isinstance(execution, cls):
            raise TypeError(
                f"execution must be a jbandits.core.execution.Execution or None, got "
                f"{execution!r}"
            )
        return execution

    def with_lanes(self, lanes: str | None) -> Execution:
        """A copy whose lanes axis is ``lanes``."""
        return dataclasses.replace(self, lanes=lanes)

    def any_lane(self, pred: Array) -> Array:
        """``pred`` holds on some lane of :attr:`lanes` (or on this lane)."""
        return _lanes.any_lane(pred, self.lanes)


__all__ = ["Execution"]
