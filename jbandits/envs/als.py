"""Regularised alternating least squares on the observed entries of a matrix (JAX).

Used by the MovieLens bandit (Lalitha et al., UAI 2023, Sec. 5.2: "We complete the
missing ratings using low-rank matrix factorization with rank 5, which is done using
alternating least squares"). Dense formulation: ``observed [U, M] bool`` and
``values [U, M]``; each half-step solves every row's ``r x r`` normal equations at once,

    u_a = (sum_{j in O_a} v_j v_j^T + lam I)^{-1} sum_{j in O_a} x_aj v_j,

and symmetrically for the columns; a fixed number of iterations (no convergence test).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.core import validate as _validate
from jbandits.core.types import Array, Key


def _solve_rows(values: Array, weights: Array, other: Array, reg: Array) -> Array:
    """Rows of the factor that minimise the weighted ridge objective, ``other`` fixed.

    The penalty of row a is ``reg * max(n_a, 1)`` (n_a = observed entries of the row:
    the weighted-lambda regularisation of Zhou et al. 2008), so that sparse rows do
    not over-fit.
    """
    rank = other.shape[-1]
    gram = jnp.einsum("uj,jk,jl->ukl", weights, other, other)
    rhs = (weights * values) @ other
    lam = reg * jnp.maximum(weights.sum(axis=1), 1.0)
    eye = jnp.eye(rank, dtype=values.dtype)
    return jnp.linalg.solve(gram + lam[:, None, None] * eye, rhs[..., None])[..., 0]


def als(
    values,
    observed,
    *,
    rank: int = 5,
    reg: float = 0.1,
    iterations: int = 20,
    key: Key | None = None,
) -> tuple[Array, Array]:
    """Factor ``values ~ U V^T`` on the ``observed`` entries by regularised ALS.

    Minimises ``sum_{(a,j) observed} (x_aj - u_a.v_j)^2 + reg (sum_a n_a |u_a|^2 +
    sum_j n_j |v_j|^2)``. The caller centres the values if it wants a mean offset.

    Args:
      values: ``[U, M]`` matrix (entries outside ``observed`` are ignored).
      observed: ``[U, M]`` bool mask of known entries.
      rank: static factor rank r >= 1.
      reg: ridge penalty lambda >= 0, multiplied by the number of observed entries
        of each row / column (weighted-lambda ALS); rows without observations stay 0.
      iterations: static number of (row, column) half-step pairs.
      key: initialisation key of the column factor (default ``key(0)``).

    Returns:
      ``(row_factor [U, r], col_factor [M, r])``; the completion is ``U @ V.T``.

    Raises:
      ValueError: on shape mismatches, rank < 1, iterations < 1 or reg < 0.
    """
    rank = _validate.static_int("rank", rank, minimum=1)
    iterations = _validate.static_int("iterations", iterations, minimum=1)
    _validate.in_range("reg", reg, 0.0)
    values = jnp.asarray(values, jnp.result_type(float))
    observed = jnp.asarray(observed)
    if values.ndim != 2 or observed.shape != values.shape:
        raise ValueError(
            f"values must be [U, M] and observed the same shape, got {values.shape} "
            f"and {observed.shape}"
        )
    weights = observed.astype(values.dtype)
    values = jnp.where(observed, values, 0.0)
    key = jax.random.key(0) if key is None else key
    cols = 0.1 * jax.random.normal(key, (values.shape[1], rank), values.dtype)
    reg = jnp.asarray(reg, values.dtype)

    @jax.jit
    def fit(cols):
        def body(_, carry):
            rows = _solve_rows(values, weights, carry[1], reg)
            cols = _solve_rows(values.T, weights.T, rows, reg)
            return rows, cols

        rows = jnp.zeros((values.shape[0], rank), values.dtype)
        return jax.lax.fori_loop(0, iterations, body, (rows, cols))

    return fit(cols)


def rmse(values, observed, rows, cols) -> float:
    """Root mean squared error of ``rows @ cols.T`` on the observed entries."""
    observed = jnp.asarray(observed)
    err = jnp.where(observed, rows @ cols.T - jnp.asarray(values), 0.0)
    return float(jnp.sqrt(jnp.sum(err**2) / jnp.maximum(jnp.sum(observed), 1)))
