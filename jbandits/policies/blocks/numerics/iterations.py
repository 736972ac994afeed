"""The floating dtype of the numerics' inputs and the iteration counts chosen from
it.

Iteration counts default to accuracy-driven values, chosen from the dtype
of the inputs: KL-UCB 24 (float32) / 50 (float64), Beta quantile 30 / 50. The
starting bracket has width <= 1, so after ``k`` halvings the midpoint is within
``2^-(k+1)`` of the root (KL-UCB: ``<= 3e-8`` at 24 iterations; Beta: ``<= 5e-10`` at
30 iterations, plus the accuracy of ``betainc``).
"""

from __future__ import annotations

import jax.numpy as jnp

from jbandits.core.types import ArrayLike

KLUCB_ITERS = {"float32": 24, "float64": 50}
BETA_ITERS = {"float32": 30, "float64": 50}
# warm-started Beta quantile (beta_sf / beta_quantile_newton): continued-fraction
# terms, Newton steps per call and the resolution 2^-bits of the final dyadic snap
BETA_CF_ITERS = {"float32": 24, "float64": 48}
BETA_NEWTON = {"float32": 2, "float64": 2}
BETA_GRID_BITS = {"float32": 20, "float64": 40}


def _float(*xs: ArrayLike) -> jnp.dtype:
    return jnp.result_type(float, *xs)


def _iters(table: dict, dtype, num_iters: int | None) -> int:
    if num_iters is not None:
        return int(num_iters)
    return table["float64" if jnp.dtype(dtype) == jnp.float64 else "float32"]
