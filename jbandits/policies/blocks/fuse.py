"""Materialise a value once instead of letting XLA recompute it in every consumer.

XLA's fusion passes copy a cheap producer into each fusion that reads it. For a
long chain of cheap operations, such as a threefry hash (~130 integer operations per
32-bit word), that repeats the chain once per consumer (the binarising hash of the
Beta policies' steps, for one). ``jax.lax.optimization_barrier`` does not prevent it
on XLA:CPU (the barrier is gone from the optimised HLO and the hash is fused into
each consumer). :func:`materialise` ends the chain in a reduction instead, which XLA
computes in one kernel whose consumers read its buffer: the maximum over a trailing
pair ``(x, lowest)``, exact for every value (``-0.0``, NaN and infinities included).

It pays for chains of cheap operations. XLA:CPU does not fuse an expensive operation
(``log``, ``exp``, a division) with several consumers into the reduction either, so
materialising a value computed through such operations can split its chain into more
kernels. Count the kernels (``benchmarks/hlo.py``) before and after; the cases
measured so far are in ``benchmarks/notes_policies.md``.
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core.types import Array, ArrayLike


def _lowest(dtype) -> Array:
    if dtype == jnp.bool_:
        return jnp.asarray(False)
    if jnp.issubdtype(dtype, jnp.floating):
        return jnp.asarray(-jnp.inf, dtype)
    return jnp.asarray(jnp.iinfo(dtype).min, dtype)


def materialise(*xs: ArrayLike) -> Array | tuple[Array, ...]:
    """Each ``x`` unchanged, computed in one kernel that its consumers read.

    Returns one array for one argument, else a tuple.
    """
    out = []
    for x in xs:
        x = jnp.asarray(x)
        pair = jnp.where(jnp.arange(2) == 0, x[..., None], _lowest(x.dtype))
        out.append(jnp.any(pair, -1) if x.dtype == jnp.bool_ else jnp.max(pair, -1))
    return out[0] if len(out) == 1 else tuple(out)


__all__ = ["materialise"]
