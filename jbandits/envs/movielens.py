"""MovieLens ratings bandit (data-driven, non-Gaussian rewards).

Pipeline of Lalitha, Kalantari, Ma, Deoras and Kveton, "Fixed-Budget Best-Arm
Identification with Heterogeneous Reward Variances", UAI 2023, Section 5.2:

1. :func:`load_ratings` reads a MovieLens ratings file (1M or 100K).
2. :func:`complete` fills the user x movie matrix by rank-5 regularised ALS.
   Both are the data side, in :mod:`jbandits.envs.movielens_data` (importable from
   here too).
3. :func:`select_movies` maps synthetic targets ``(mu~_i, sigma~_i^2)`` (drawn as in
   the paper's Section 5.1 for every run) to the movie minimising ``(mu_j - mu~_i)^2 + (s2_j - sigma~_i^2)^2``
   where ``mu_j, s2_j`` are the mean and variance over users of completed column j.
4. Rewards: pulling arm i draws a uniformly random user ``u`` and returns
   ``matrix[u, movie_i]`` (reward stack: the user of the j-th pull of arm i is a
   function of (replication key, i, j)). The arm's true mean and variance are the
   column's mean and (population) variance over users.

The params hold the whole completed matrix (shared by every instance; pass it as an
unbatched leaf when vmapping instances) and the selected movie ids per arm.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core.types import Array, ArrayLike, Bandit, Key
from jbandits.envs import common as _common
from jbandits.envs.movielens_data import (  # noqa: F401  (re-exported)
    ENV_VAR,
    FILES,
    HOW_TO_GET,
    Completed,
    Ratings,
    complete,
    find_file,
    load_completed,
    load_ratings,
)


class MovieLensParams(NamedTuple):
    matrix: Array  # [U, M] completed ratings (shared by all instances)
    movies: Array  # [K] int32 column of the movie of each arm
    means: Array  # [K] true mean rating of each arm (column mean over users)
    stds: Array  # [K] true standard deviation (column, population)
    arm_mask: Array  # [K] bool


def select_movies(
    col_means, col_vars, target_means, target_vars, *, distinct: bool = True
) -> np.ndarray:
    """Movie ids minimising ``(mu_j - mu~_i)^2 + (s2_j - s2~_i)^2`` for each arm i.

    ``target_*`` are ``[..., K]``. With ``distinct=True`` arms are matched in index
    order and a movie already taken in the same instance is skipped (the next nearest
    is used), so that no two arms share a movie (equal means would make the best arm
    non-unique and oracle gaps 0); ``distinct=False`` is the literal nearest movie.
    """
    col_means = np.asarray(col_means, np.float64)
    col_vars = np.asarray(col_vars, np.float64)
    tm = np.asarray(target_means, np.float64)
    tv = np.asarray(target_vars, np.float64)
    if tm.shape != tv.shape:
        raise ValueError(
            f"target_vars shape {tv.shape} != target_means shape {tm.shape}"
        )
    num_arms = tm.shape[-1]
    if distinct and num_arms > col_means.size:
        raise ValueError(
            f"cannot pick {num_arms} distinct movies out of {col_means.size}"
        )
    flat_m, flat_v = tm.reshape(-1, num_arms), tv.reshape(-1, num_arms)
    out = np.empty(flat_m.shape, np.int32)
    # one instance at a time: the distances are [K, M] (the whole [N, K, M] array
    # took 8.6 GB for N = 5000, K = 128 and the 1682 MovieLens-100K movies)
    for n in range(flat_m.shape[0]):
        dist = (col_means - flat_m[n][:, None]) ** 2 + (
            col_vars - flat_v[n][:, None]
        ) ** 2  # [K, M]
        if not distinct:
            out[n] = np.argmin(dist, axis=-1)
            continue
        taken = np.zeros(col_means.size, bool)
        for i in range(num_arms):
            j = int(np.argmin(np.where(taken, np.inf, dist[i])))
            out[n, i] = j
            taken[j] = True
    return out.reshape(tm.shape)


def _sample(params: MovieLensParams, key: Key, arm: ArrayLike, pull_index: ArrayLike):
    num_users = params.matrix.shape[0]
    user = jax.random.randint(_common.stack_key(key, arm, pull_index), (), 0, num_users)
    return params.matrix[user, params.movies[arm]]


MOVIELENS = _common.family("movielens", MovieLensParams, _sample)


def movielens(matrix, movies, *, arm_mask=None) -> tuple[Bandit, MovieLensParams]:
    """MovieLens bandit over the completed ``matrix [U, M]`` and arms ``movies [..., K]``.

    Pulling arm ``i`` draws a uniformly random user ``u`` (a function of the
    replication key, ``i`` and the pull index: the reward-stack model) and returns
    ``matrix[u, movies[i]]``. An arm's true mean and standard deviation are those of
    its column over all users (population, ``ddof=0``). The rewards are bounded but
    neither Bernoulli nor Gaussian (Lalitha et al., UAI 2023, Section 5.2).

    Args:
      matrix: completed ratings ``[U, M]`` (e.g. ``load_completed(path).matrix``),
        shared by every instance (an unbatched leaf when vmapping instances).
      movies: integer column ids ``[K]``, or ``[N, K]`` for a stack of instances
        (e.g. from :func:`select_movies`).
      arm_mask: optional boolean array of the shape of ``movies``; False marks a
        padded arm. Default: all arms real.

    Returns:
      ``(MOVIELENS, MovieLensParams)``. :func:`jbandits.envs.pad_arms` does not
      apply to these params (the shared ``matrix`` is not per arm).

    Raises:
      ValueError: if ``matrix`` is not 2-D or not finite, ``movies`` is not an
        integer array with an arm axis, a movie id is outside ``[0, M)``, K < 2, or
        on a bad ``arm_mask`` (not boolean, wrong shape, fewer than 2 real arms).

    Example::

        data = jbandits.envs.movielens.load_completed()   # reads $JBANDITS_DATA
        bandit, params = jbandits.envs.movielens.movielens(data.matrix, [10, 20, 30])
        res = jbandits.simulate(jbandits.make("shvar", num_arms=3, variances=
                                params.stds**2, budget=300), bandit, params,
                                jax.random.key(0), budget=300, num_reps=100)
    """
    matrix = _common.as_float_array("matrix", matrix)
    if matrix.ndim != 2:
        raise ValueError(f"matrix must have shape [users, movies], got {matrix.shape}")
    movies = np.asarray(movies)
    if movies.ndim < 1 or not np.issubdtype(movies.dtype, np.integer):
        raise ValueError(
            f"movies must be an integer array [..., K], got {movies.dtype}"
        )
    if np.any((movies < 0) | (movies >= matrix.shape[1])):
        raise ValueError(f"movies must lie in [0, {matrix.shape[1]}), got {movies}")
    _common.check_num_arms("movies", movies)
    mask = _common.make_mask(arm_mask, movies.shape)
    means, stds = _column_stats(np.asarray(matrix), movies)
    return MOVIELENS, MovieLensParams(
        matrix=matrix,
        movies=jnp.asarray(movies, jnp.int32),
        means=jnp.asarray(means),
        stds=jnp.asarray(stds),
        arm_mask=mask,
    )


def _column_stats(matrix: np.ndarray, movies: np.ndarray, chunk_bytes=64 << 20):
    """Mean and population std over users of ``matrix[:, movies]`` ``[..., K]``.

    Computed over blocks of instances, so the gathered ratings never exceed
    ``chunk_bytes`` (the whole ``[U, N, K]`` gather is 2.4 GB for the paper's N = 5000
    instances of K = 128 movies); each column's reduction is the same as on the whole
    gather, so the numbers are identical."""
    flat = movies.reshape(-1, movies.shape[-1])
    per_row = matrix.shape[0] * flat.shape[1] * matrix.itemsize
    step = max(1, chunk_bytes // per_row)
    means = np.empty(flat.shape, matrix.dtype)
    stds = np.empty(flat.shape, matrix.dtype)
    for start in range(0, flat.shape[0], step):
        cols = matrix[:, flat[start : start + step]]  # [U, n, K]
        means[start : start + step] = cols.mean(axis=0)
        stds[start : start + step] = cols.std(axis=0)
    return means.reshape(movies.shape), stds.reshape(movies.shape)


def instances(
    data: Completed, num_arms: int, num_instances: int, *, seed: int = 0, distinct=True
) -> tuple[Bandit, MovieLensParams]:
    """``num_instances`` MovieLens instances, new movies per run (Lalitha et al. 2023).

    Each instance draws synthetic targets ``(mu~_i, sigma~_i^2)`` from the perturbed
    Gaussian bandit of the paper's Section 5.1
    (:func:`jbandits.envs.problems.shvar_gaussian` with ``seed``) and maps every target to
    the nearest movie (:func:`select_movies`), as in its Section 5.2.

    Args:
      data: a completed matrix (:func:`load_completed` or :func:`complete`).
      num_arms: K, the arms per instance (>= 2).
      num_instances: N, the number of instances (one per run in the paper).
      seed: seed of the synthetic targets.
      distinct: no two arms of an instance share a movie (default; see
        :func:`select_movies`).

    Returns:
      ``(MOVIELENS, MovieLensParams)`` with ``movies``, ``means`` and ``stds``
      ``[N, K]`` (a stack for :func:`jbandits.simulate`).

    Raises:
      ValueError: from :func:`jbandits.envs.problems.shvar_gaussian` on a bad ``num_arms``
        or ``num_instances``, or if ``distinct`` and K exceeds the number of movies.

    Example::

        data = jbandits.envs.movielens.load_completed()
        bandit, params = jbandits.envs.movielens.instances(data, 16, 100, seed=0)
        params.movies.shape   # (100, 16)
    """
    from jbandits.envs import problems

    target = problems.shvar_gaussian(num_arms, num_instances, seed=seed)
    movies = select_movies(
        data.col_means, data.col_vars, target.means, target.stds**2, distinct=distinct
    )
    return movielens(data.matrix, movies)


__all__ = [
    "ENV_VAR",
    "HOW_TO_GET",
    "MOVIELENS",
    "Completed",
    "MovieLensParams",
    "Ratings",
    "complete",
    "find_file",
    "instances",
    "load_completed",
    "load_ratings",
    "movielens",
    "select_movies",
]
