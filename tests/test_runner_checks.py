"""The runner checks a call's numbers on the host (jbandits.sim.runner.work._check_numbers):
once per distinct row of numbers and policy, not again on a repeated call."""

import jax
import numpy as np
import pytest

import jbandits


def _sweep(policy, epsilons, **also):
    bandit, params = jbandits.envs.bernoulli(np.array([0.2, 0.5, 0.8]))
    return jbandits.sweep(
        policy, bandit, params, jax.random.key(0), horizon=20, budget=20, num_reps=2,
        grid={"epsilon": epsilons, **also}, progress=False,
    )  # fmt: skip


def test_numbers_are_built_on_the_host_once_per_distinct_row():
    host = []

    def my_apt(epsilon):
        if not isinstance(epsilon, jax.core.Tracer):
            host.append(float(epsilon))
        return jbandits.apt(3, threshold=0.5, epsilon=epsilon)

    first = _sweep(my_apt, [0.01, 0.1])
    n1 = len(host)
    assert sorted(set(host)) == [0.01, 0.1]
    again = _sweep(my_apt, [0.01, 0.1])
    n2 = len(host) - n1
    # sweep's own checks build again, the runner's do not (before: n2 == n1)
    assert n2 < n1
    np.testing.assert_array_equal(first.regret, again.regret)
    _sweep(my_apt, [0.01, 0.2])
    n3 = len(host) - n1 - n2
    assert n3 > n2 and host.count(0.2) == n1 // 2  # the new row: every check


def test_a_bad_number_is_refused_after_good_ones():
    _sweep("apt", [0.1], threshold=[0.5])
    with pytest.raises(ValueError, match="epsilon"):
        _sweep(lambda epsilon: jbandits.apt(3, threshold=0.5, epsilon=epsilon), [-1.0])
    with pytest.raises(ValueError, match="epsilon"):
        _sweep("apt", [-1.0], threshold=[0.5])
