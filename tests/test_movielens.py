"""MovieLens bandit: parsing, ALS completion, movie selection, sampling, errors."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.envs import als, movielens


def _write(tmp_path, fmt):
    rows = [(10, 7, 4), (10, 9, 2), (31, 7, 5), (31, 12, 1), (55, 9, 3)]
    if fmt == "1m":
        path = tmp_path / "ratings.dat"
        path.write_text("".join(f"{u}::{m}::{r}::97830{u}\n" for u, m, r in rows))
    else:
        path = tmp_path / "u.data"
        path.write_text("".join(f"{u}\t{m}\t{r}\t8812{u}\n" for u, m, r in rows))
    return path, rows


@pytest.mark.parametrize("fmt", ["1m", "100k"])
def test_parse_both_formats(tmp_path, fmt):
    path, rows = _write(tmp_path, fmt)
    data = movielens.load_ratings(str(tmp_path))  # directory lookup
    assert data.path == str(path)
    assert (data.num_users, data.num_movies) == (3, 3)
    assert data.name == ("MovieLens-1M" if fmt == "1m" else "MovieLens-100K")
    users = {10: 0, 31: 1, 55: 2}
    movies = {7: 0, 9: 1, 12: 2}
    got = sorted(
        zip(
            data.users.tolist(),
            data.movies.tolist(),
            data.ratings.tolist(),
            strict=True,
        )
    )
    assert got == sorted((users[u], movies[m], float(r)) for u, m, r in rows)


def test_env_var_and_missing_message(tmp_path, monkeypatch):
    _write(tmp_path, "100k")
    monkeypatch.setenv(movielens.ENV_VAR, str(tmp_path))
    assert movielens.load_ratings().num_users == 3
    monkeypatch.delenv(movielens.ENV_VAR)
    with pytest.raises(FileNotFoundError, match="grouplens.org"):
        movielens.load_ratings()
    with pytest.raises(FileNotFoundError, match="JBANDITS_DATA"):
        movielens.load_ratings(str(tmp_path / "missing"))


def test_malformed_line_names_file_and_line(tmp_path):
    path = tmp_path / "u.data"
    path.write_text("1\t2\t3\t0\n1\tx\t3\t0\n")
    with pytest.raises(ValueError, match="u.data:2"):
        movielens.load_ratings(str(path))
    path.write_text("1\t2\t7\t0\n")
    with pytest.raises(ValueError, match=r"\[1, 5\]"):
        movielens.load_ratings(str(path))


def test_als_reconstructs_low_rank_matrix():
    key_u, key_v, key_m = jax.random.split(jax.random.key(1), 3)
    truth = jax.random.normal(key_u, (60, 3)) @ jax.random.normal(key_v, (40, 3)).T
    observed = jax.random.uniform(key_m, truth.shape) < 0.6
    rows, cols = als.als(truth, observed, rank=3, reg=1e-6, iterations=60)
    full = rows @ cols.T
    # held-out entries are recovered: a rank-3 matrix observed at 60% is identifiable
    err = jnp.abs(full - truth)[~observed]
    assert float(jnp.max(err)) < 1e-2
    assert als.rmse(truth, observed, rows, cols) < 1e-3


def test_als_validates_arguments():
    with pytest.raises(ValueError, match="rank"):
        als.als(jnp.zeros((3, 3)), jnp.ones((3, 3), bool), rank=0)
    with pytest.raises(ValueError, match="observed"):
        als.als(jnp.zeros((3, 3)), jnp.ones((3, 2), bool))


def test_selection_picks_nearest_and_distinct():
    means = np.array([0.1, 0.5, 0.52, 0.9])
    var = np.array([0.1, 0.2, 0.2, 0.1])
    picked = movielens.select_movies(
        means, var, [0.51, 0.88], [0.2, 0.12], distinct=False
    )
    # 0.51 is 0.01 from both middle movies: the first on ties
    assert picked.tolist() == [1, 3]
    same = movielens.select_movies(means, var, [0.5, 0.5], [0.2, 0.2], distinct=False)
    assert same.tolist() == [1, 1]
    distinct = movielens.select_movies(means, var, [0.5, 0.5], [0.2, 0.2])
    assert distinct.tolist() == [1, 2]


@pytest.mark.slow  # 6-30 s on a 2-core machine: CI runs it in the slow step
def test_sampling_draws_completed_ratings_of_valid_users():
    matrix = np.arange(12, dtype=float).reshape(4, 3)  # users x movies
    bandit, params = movielens.movielens(matrix, np.array([2, 0]))
    np.testing.assert_allclose(params.means, [matrix[:, 2].mean(), matrix[:, 0].mean()])
    key = jax.random.key(0)
    draws = np.array(
        [[bandit.sample(params, key, arm, j) for j in range(200)] for arm in (0, 1)]
    )
    assert set(draws[0]) <= set(matrix[:, 2]) and set(draws[1]) <= set(matrix[:, 0])
    assert len(set(draws[0])) == 4  # every user is drawn (200 uniform draws of 4)
    # reward stack: the same (key, arm, j) gives the same reward
    assert float(bandit.sample(params, key, 0, 7)) == draws[0, 7]


def test_movielens_validation():
    with pytest.raises(ValueError, match="movies"):
        movielens.movielens(np.zeros((3, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="matrix"):
        movielens.movielens(np.zeros(3), np.array([0, 1]))


@pytest.mark.parametrize("distinct", [True, False])
def test_selection_memory_is_per_instance_and_matches_the_whole_array_form(distinct):
    """select_movies never builds the [N, K, M] distance array (8.6 GB for the
    paper's N = 5000, K = 128 on MovieLens-100K) and picks what it would pick."""
    import tracemalloc

    rng = np.random.default_rng(1)
    n, k, m = 200, 32, 500
    col_means, col_vars = rng.uniform(0, 1, m), rng.uniform(0, 0.2, m)
    tm, tv = rng.uniform(0, 1, (2, n // 2, k)), rng.uniform(0, 0.2, (2, n // 2, k))
    tracemalloc.start()
    got = movielens.select_movies(col_means, col_vars, tm, tv, distinct=distinct)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < n * k * m * 8 / 10  # the whole array is 25.6 MB here
    dist = (col_means - tm[..., None]) ** 2 + (col_vars - tv[..., None]) ** 2
    if not distinct:
        np.testing.assert_array_equal(got, np.argmin(dist, axis=-1))
        return
    assert got.shape == (2, n // 2, k)
    for inst, row in zip(dist.reshape(n, k, m), got.reshape(n, k), strict=True):
        masked = inst.copy()
        for i, j in enumerate(row):  # greedy in arm order, taken movies excluded
            assert j == np.argmin(masked[i])
            masked[:, j] = np.inf


def test_arm_statistics_are_computed_in_blocks_with_the_same_numbers():
    """movielens() takes the arms' means and stds over blocks of instances (the whole
    [U, N, K] gather is 2.4 GB at N = 5000, K = 128), with the same float32 numbers."""
    import tracemalloc

    rng = np.random.default_rng(2)
    matrix = rng.uniform(0, 1, (60, 400)).astype(np.float32)
    movies = rng.integers(0, 400, (3, 100, 16))
    whole = matrix[:, movies]  # [U, 3, 100, 16], 1.15 MB
    tracemalloc.start()
    means, stds = movielens._column_stats(
        matrix, movies, chunk_bytes=whole.nbytes // 30
    )
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < whole.nbytes / 4
    np.testing.assert_array_equal(means, whole.mean(axis=0))
    np.testing.assert_array_equal(stds, whole.std(axis=0))
    _, params = movielens.movielens(matrix, movies[0])
    np.testing.assert_array_equal(params.means, whole[:, 0].mean(axis=0))
    np.testing.assert_array_equal(params.stds, whole[:, 0].std(axis=0))
