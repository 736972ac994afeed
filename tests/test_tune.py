"""ES gradient estimator: exact on smooth functions, and it tunes a real policy."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import jbandits
from jbandits import tune


def test_es_gradient_of_a_quadratic_is_unbiased():
    target = jnp.array([1.0, -2.0])
    loss = lambda th, key: jnp.sum((th - target) ** 2)
    theta = jnp.array([0.5, 0.5])
    grads = jax.vmap(
        lambda k: tune.es_value_and_grad(loss, theta, k, sigma=0.1, num_pairs=4)[1]
    )(jax.random.split(jax.random.key(0), 2000))
    exact = 2 * (theta - target)
    se = grads.std(0) / np.sqrt(grads.shape[0])
    assert np.all(np.abs(grads.mean(0) - exact) <= 5 * se + 1e-6)


@pytest.mark.slow  # statistical / full size: run by `pytest -m slow`
def test_tuning_apt_epsilon_reduces_error():
    """Start APT at a poor eps = 0.5 on a two-group instance; ES + adam lowers the loss."""
    means = np.r_[np.full(3, 0.45), np.full(3, 0.55)]
    bandit, params = jbandits.envs.bernoulli(means)
    metric = jbandits.metrics.thresholding(0.5)

    def loss(log_eps, key):
        policy = jbandits.apt(6, threshold=0.5, epsilon=jnp.exp(log_eps))
        res = jax.vmap(
            lambda k: jbandits.run(policy, bandit, params, k, budget=300, horizon=300,
                                   metric=metric)
        )(jax.random.split(key, 128))
        return res.metrics["misclassified"][:, -1].mean()

    theta, history = tune.tune(loss, jnp.log(2.0), optax.adam(0.3), num_steps=8,
                               key=jax.random.key(1), sigma=0.3, num_pairs=4)
    assert float(theta) < np.log(2.0)  # moved toward smaller eps
    assert np.mean(history[-3:]) < history[0]
