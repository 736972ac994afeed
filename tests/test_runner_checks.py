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


def test_numbers_are_built_on_the_host_once_per_distinct_row(monkeypatch):
    # The host builds are counted where the runner makes them (Source.policy), not
    # in the factory: a factory that appends to a list it closes over is new code
    # at every call (jbandits.core.code_identity digests the values its code reads),
    # so the runner rightly builds it again.
    from jbandits.sim.runner import programs

    host = []
    real = programs.Source.policy

    def counted(self, numbers, *rest):
        leaves = jax.tree_util.tree_leaves(numbers)
        if leaves and not isinstance(leaves[0], jax.core.Tracer):
            host.append(float(np.asarray(leaves[0])))
        return real(self, numbers, *rest)

    monkeypatch.setattr(programs.Source, "policy", counted)

    def my_apt(epsilon):
        return jbandits.apt(3, threshold=0.5, epsilon=epsilon)

    first = _sweep(my_apt, [0.01, 0.1])
    assert sorted(host) == [0.01, 0.1]  # once per distinct row
    again = _sweep(my_apt, [0.01, 0.1])
    assert sorted(host) == [0.01, 0.1]  # not again (before: every row again)
    np.testing.assert_array_equal(first.regret, again.regret)
    _sweep(my_apt, [0.01, 0.2])
    assert sorted(host) == [0.01, 0.1, 0.2]  # the new row only


def test_a_bad_number_is_refused_after_good_ones():
    _sweep("apt", [0.1], threshold=[0.5])
    with pytest.raises(ValueError, match="epsilon"):
        _sweep(lambda epsilon: jbandits.apt(3, threshold=0.5, epsilon=epsilon), [-1.0])
    with pytest.raises(ValueError, match="epsilon"):
        _sweep("apt", [-1.0], threshold=[0.5])
