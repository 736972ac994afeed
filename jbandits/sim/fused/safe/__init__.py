"""The kernel-safe rewrite: a function's program without gather, scatter or sort.

A GPU kernel written in Pallas runs a block of lanes with every array in registers,
and its lowerings have no gather, scatter, dynamic slice, sort or variadic
reduction (the Triton lowering; Mosaic GPU has no arg-min either), and no PRNG key
types. A policy's step is written for XLA, where those are the fast forms
(``counts.at[arm].add(1)``, ``perm[arm]``, ``jnp.argsort``), and another engineer
may change any policy at any time; so rather than keep a second, kernel-only copy of
every building block, :func:`kernel_safe` rewrites the *program* of a function:
it traces the function to a jaxpr and evaluates it again, equation by equation,
replacing each such operation by an equivalent one built from elementwise
operations, ``iota``, masks and ordinary reductions:

* a gather / dynamic slice / static slice is a one-hot masked sum over the indexed
  axis (``sum_i where(i == start + o, x_i, 0)``), clamped or filled as the
  operation's mode says; bools go through int32;
* a scatter (set, add, min, max) / dynamic update slice / pad / concatenate is a
  one-hot placement: each output position sums the updates whose index hits it;
* a sort (any number of operands and keys, stable or not) is a rank sort: the rank
  of element ``i`` is the number of elements ordered before it (an ``[n, n]``
  comparison), then one placement by rank: O(n^2), for the arm axis;
* ``argmin`` / ``argmax`` is ``min`` + ``where(x == min, iota, n)`` + ``min`` (NaN
  first, as ``jnp.argmin``); a variadic ``reduce`` (the arm selection's (value,
  index) reduction) is a tree of its own computation over halves (``lax.split``);
* ``reduce_and`` / ``reduce_or`` are ``reduce_min`` / ``reduce_max`` on int32;
  ``cumsum``-like scans are triangular masked reductions;
* PRNG keys become their ``uint32[..., 2]`` threefry data: ``fold_in``, ``split``,
  ``random_bits`` are the straight-line hash of :mod:`jbandits.core.prng` (the same bits
  as ``jax.random`` with ``jax_threefry_partitionable``, the default);
* ``jit``, ``custom_jvp`` / ``custom_vjp`` calls are inlined; ``cond``,
  ``while_loop`` and ``scan`` are rebuilt with rewritten bodies;
  ``optimization_barrier`` is dropped.

Every replacement computes the same values (one-hot sums add exact zeros; the one
difference: a gathered ``-0.0`` comes back as ``+0.0``), so the rewritten step picks
the same arms; ``tests/test_fused.py`` checks this against the XLA path for every
fused policy. Anything else is bound as it is; :func:`unsupported` lists what a
lowering would still refuse. The one-hot forms cost O(n) or O(n^2) where the
original is O(1) or O(n log n): meant for the arm axis (tens to a few hundred), not
for large tables.
"""

from __future__ import annotations

# the rule modules register their rules in core._RULES when imported
from jbandits.sim.fused.safe import control, indexing, keys, placement, reduce  # noqa: F401
from jbandits.sim.fused.safe.core import (
    MAX_CONSTANT,
    NotKernelSafe,
    evaluate,
    kernel_safe,
)
from jbandits.sim.fused.safe.padded import (
    evaluate_padded,
    pad_array,
    pow2,
    pow2_shape,
    unpad_array,
)
from jbandits.sim.fused.safe.triton import (
    TRITON_OK,
    kernel_bodies,
    primitives,
    unsupported,
)

__all__ = [
    "MAX_CONSTANT",
    "NotKernelSafe",
    "TRITON_OK",
    "evaluate",
    "kernel_bodies",
    "kernel_safe",
    "pad_array",
    "evaluate_padded",
    "pow2",
    "pow2_shape",
    "unpad_array",
    "primitives",
    "unsupported",
]
