"""MovieLens ratings: loading and matrix completion (data for :mod:`jbandits.envs.movielens`).

Steps 1 and 2 of the pipeline of Lalitha, Kalantari, Ma, Deoras and Kveton,
"Fixed-Budget Best-Arm Identification with Heterogeneous Reward Variances", UAI 2023,
Section 5.2:

1. :func:`load_ratings` reads MovieLens ``ratings.dat`` (1M, ``user::movie::rating::
   time``) or ``u.data`` (100K, tab separated) from a path, a directory, or the
   ``JBANDITS_DATA`` environment variable. Data are never shipped with jbandits.
2. :func:`complete` fills the user x movie matrix by rank-5 regularised ALS
   (:mod:`jbandits.envs.als`). The paper does not clip the completed ratings; we do
   not either (``clip=(1, 5)`` is available). By default ratings are mapped to
   ``(r - 1) / 4`` so that they live on the [0, 1] scale of the synthetic targets
   (our decision: the paper does not say; on the raw 1-5 scale the nearest movies to
   targets in [0, 1] are all among the lowest rated).

Every name here is also importable from :mod:`jbandits.envs.movielens`.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import jax
import numpy as np

from jbandits.envs.als import als, rmse

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
