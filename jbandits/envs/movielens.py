"""MovieLens ratings bandit (data-driven, non-Gaussian rewards).

Pipeline of Lalitha, Kalantari, Ma, Deoras and Kveton, "Fixed-Budget Best-Arm
Identification with Heterogeneous Reward Variances", UAI 2023, Section 5.2:

1. :func:`load_ratings` reads MovieLens ``ratings.dat`` (1M, ``user::movie::rating::
   time``) or ``u.data`` (100K, tab separated) from a path, a directory, or the
   ``JBANDITS_DATA`` environment variable. Data are never shipped with jbandits.
2. :func:`complete` fills the user x movie matrix by rank-5 regularised ALS
   (:mod:`jbandits.envs.als`). The paper does not clip the completed ratings; we do
   not either (``clip=(1, 5)`` is available). By default ratings are mapped to
   ``(r - 1) / 4`` so that they live on the [0, 1] scale of the synthetic targets
   (our decision: the paper does not say; on the raw 1-5 scale the nearest movies to
   targets in [0, 1] are all among the lowest rated).
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

import os
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.envs import _common
from jbandits.envs.als import als, rmse
from jbandits.types import Array, ArrayLike, Bandit, Key

ENV_VAR = "JBANDITS_DATA"
FILES = ("ratings.dat", "u.data")
HOW_TO_GET = (
    "Download MovieLens 1M (ml-1m.zip, ratings.dat) or 100K (ml-100k.zip, u.data) from "
    "https://grouplens.org/datasets/movielens/, unzip it anywhere, and pass the file or "
    f"its directory as `path`, or set the environment variable {ENV_VAR} to it (a "
    "directory is searched for ratings.dat, u.data, ml-1m/ratings.dat and "
    "ml-100k/u.data)."
)


class Ratings(NamedTuple):
    users: np.ndarray  # [R] int32 contiguous user index
    movies: np.ndarray  # [R] int32 contiguous movie index
    ratings: np.ndarray  # [R] float64
    num_users: int
    num_movies: int
    path: str
    name: str  # "MovieLens-1M" / "MovieLens-100K"


class MovieLensParams(NamedTuple):
    matrix: Array  # [U, M] completed ratings (shared by all instances)
    movies: Array  # [K] int32 column of the movie of each arm
    means: Array  # [K] true mean rating of each arm (column mean over users)
    stds: Array  # [K] true standard deviation (column, population)
    arm_mask: Array  # [K] bool


class Completed(NamedTuple):
    matrix: np.ndarray  # [U, M] completed ratings
    col_means: np.ndarray  # [M]
    col_vars: np.ndarray  # [M] population variance over users
    name: str
    path: str
    num_users: int
    num_movies: int
    num_ratings: int
    rank: int
    reg: float
    iterations: int
    rmse: float


def find_file(path: str | None = None) -> str:
    """Resolve ``path`` (file or directory) or ``$JBANDITS_DATA`` to a ratings file."""
    root = path if path is not None else os.environ.get(ENV_VAR)
    if root is None:
        raise FileNotFoundError(
            f"no MovieLens path given and {ENV_VAR} is not set. {HOW_TO_GET}"
        )
    if os.path.isfile(root):
        return root
    if os.path.isdir(root):
        for rel in (
            *FILES,
            "ml-1m/ratings.dat",
            "ml-100k/u.data",
            "movielens/ml-100k/u.data",
        ):
            cand = os.path.join(root, rel)
            if os.path.isfile(cand):
                return cand
    raise FileNotFoundError(
        f"no MovieLens ratings file found at {root!r}. {HOW_TO_GET}"
    )


def load_ratings(path: str | None = None) -> Ratings:
    """Parse ``ratings.dat`` (``::``) or ``u.data`` (tab); ids -> contiguous indices.

    Raises:
      FileNotFoundError: with download instructions when no file is found.
      ValueError: on malformed lines or ratings outside [1, 5].
    """
    file = find_file(path)
    rows = []
    sep = "::" if file.endswith(".dat") else "\t"
    with open(file, encoding="latin-1") as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            parts = line.split(sep) if sep == "::" else line.split()
            if len(parts) < 3:
                raise ValueError(
                    f"{file}:{number}: expected user{sep}movie{sep}rating, got {line!r}"
                )
            try:
                rows.append((int(parts[0]), int(parts[1]), float(parts[2])))
            except ValueError as exc:
                raise ValueError(f"{file}:{number}: malformed line {line!r}") from exc
    if not rows:
        raise ValueError(f"{file}: no ratings")
    data = np.asarray(rows)
    if np.any((data[:, 2] < 1) | (data[:, 2] > 5)):
        raise ValueError(f"{file}: ratings must lie in [1, 5]")
    user_ids, users = np.unique(data[:, 0].astype(np.int64), return_inverse=True)
    movie_ids, movies = np.unique(data[:, 1].astype(np.int64), return_inverse=True)
    name = "MovieLens-1M" if sep == "::" else "MovieLens-100K"
    return Ratings(
        users.astype(np.int32),
        movies.astype(np.int32),
        data[:, 2],
        int(user_ids.size),
        int(movie_ids.size),
        file,
        name,
    )


def complete(
    ratings: Ratings,
    *,
    rank: int = 5,
    reg: float = 0.1,
    iterations: int = 20,
    clip: tuple[float, float] | None = None,
    center: bool = True,
    scale: str = "unit",
    seed: int = 0,
) -> Completed:
    """Rank-``rank`` ALS completion of the user x movie matrix (Lalitha et al. 2023, §5.2).

    With ``center=True`` the global mean rating is subtracted before the factorisation
    and added back (the ridge penalty then shrinks sparse movies towards the global
    mean rather than towards 0). ``scale="unit"`` maps ratings to ``(r - 1) / 4`` (the
    [0, 1] scale of the paper's synthetic targets, which the movies are matched to);
    ``"raw"`` keeps the 1-5 scale (then every target mu~ in [0, 1] is nearest to the
    lowest-rated movies and the instance loses the structure of the paper's §5.1).
    """
    if scale not in ("unit", "raw"):
        raise ValueError(f"scale must be 'unit' or 'raw', got {scale!r}")
    shape = (ratings.num_users, ratings.num_movies)
    values = np.zeros(shape)
    observed = np.zeros(shape, bool)
    offset = float(ratings.ratings.mean()) if center else 0.0
    values[ratings.users, ratings.movies] = ratings.ratings - offset
    observed[ratings.users, ratings.movies] = True
    rows, cols = als(
        values,
        observed,
        rank=rank,
        reg=reg,
        iterations=iterations,
        key=jax.random.key(seed),
    )
    err = rmse(values, observed, rows, cols)
    matrix = np.asarray(rows @ cols.T + offset, np.float32)
    if clip is not None:
        matrix = np.clip(matrix, *clip)
    if scale == "unit":
        matrix = (matrix - np.float32(1.0)) / np.float32(4.0)
    return Completed(
        matrix,
        matrix.mean(axis=0, dtype=np.float64),
        matrix.var(axis=0, dtype=np.float64),
        ratings.name,
        ratings.path,
        ratings.num_users,
        ratings.num_movies,
        int(ratings.ratings.size),
        rank,
        reg,
        iterations,
        err,
    )


_COMPLETED: dict = {}


def load_completed(path: str | None = None, **kwargs) -> Completed:
    """:func:`load_ratings` + :func:`complete`, cached per (file, options)."""
    kwargs.pop("quick", None)
    file = find_file(path)
    key = (file, tuple(sorted(kwargs.items())))
    if key not in _COMPLETED:
        _COMPLETED[key] = complete(load_ratings(file), **kwargs)
    return _COMPLETED[key]


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


def _check(params: MovieLensParams, budget) -> None:
    _common.check_budget(budget)


MOVIELENS = Bandit(
    sample=_sample,
    means=lambda p: p.means,
    stds=lambda p: p.stds,
    check=_check,
    name="movielens",
    params_type=MovieLensParams,
)


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
    (:func:`jbandits.problems.shvar_gaussian` with ``seed``) and maps every target to
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
      ValueError: from :func:`jbandits.problems.shvar_gaussian` on a bad ``num_arms``
        or ``num_instances``, or if ``distinct`` and K exceeds the number of movies.

    Example::

        data = jbandits.envs.movielens.load_completed()
        bandit, params = jbandits.envs.movielens.instances(data, 16, 100, seed=0)
        params.movies.shape   # (100, 16)
    """
    from jbandits import problems

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
