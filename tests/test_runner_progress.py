"""The runner's progress bar names the work (jbandits.sim.runner.execute)."""

import jax
import numpy as np

import jbandits


def _bar_text(capsys, policy, **kw):
    bandit, params = jbandits.envs.bernoulli(np.array([0.2, 0.5, 0.8]))
    jbandits.sweep(
        policy, bandit, params, jax.random.key(0), horizon=20, budget=20, num_reps=4,
        progress=True, **kw,
    )  # fmt: skip
    return capsys.readouterr().err


def test_a_lambda_factory_is_shown_by_the_policy_it_builds(capsys):
    err = _bar_text(
        capsys,
        lambda epsilon: jbandits.apt(3, threshold=0.5, epsilon=epsilon),
        grid={"epsilon": [0.01, 0.1]},
    )
    assert "apt:" in err and "<lambda>" not in err


def test_a_named_factory_keeps_its_name(capsys):
    def my_factory(epsilon):
        return jbandits.apt(3, threshold=0.5, epsilon=epsilon)

    err = _bar_text(capsys, my_factory, grid={"epsilon": [0.01, 0.1]})
    assert "my_factory:" in err
