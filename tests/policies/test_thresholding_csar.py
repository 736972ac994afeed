"""CSAR: TV-4 schedules, the authors' schedule, budget never exceeded, idle leftovers."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jbandits
from jbandits.envs import REPLAY, ReplayParams
from jbandits.policies.blocks import schedules
from jbandits.policies.thresholding import csar


def test_tv4_schedule():
    s = schedules.csar(5, 100)
    assert s.per_arm.tolist() == [9, 11, 14, 21, 42] and s.ends.tolist() == [
        45,
        53,
        62,
        76,
        97,
    ]
    s = schedules.csar(10, 1000)
    assert s.ends.tolist() == [340, 376, 416, 458, 506, 561, 629, 713, 827, 996]


def test_authors_code_schedule():
    s = schedules.csar_authors_code(100, 10_000)
    assert s.per_arm[:2].tolist() == [18, 18] and s.per_arm[-3:].tolist() == [
        436,
        581,
        871,
    ]


@pytest.mark.parametrize("variant", ["paper", "authors_code"])
def test_budget_respected_and_leftover_idle(variant):
    table = np.random.default_rng(0).random((5, 100))
    params = ReplayParams(
        table=jnp.asarray(table),
        means=jnp.asarray(table.mean(1)),
        stds=jnp.asarray(table.std(1)),
        arm_mask=jnp.ones(5, bool),
    )
    pol = csar(5, threshold=0.5, budget=100, variant=variant)
    res = jbandits.run(
        pol,
        REPLAY,
        params,
        jax.random.key(0),
        budget=100,
        horizon=100,
        record_arms=True,
    )
    used = int(res.num_pulls)
    assert used <= 100
    if variant == "paper":
        assert used == 97 and bool(res.stopped)  # TV-4: 3 idle steps
        assert sorted(np.asarray(res.pulls).tolist()) == [9, 11, 14, 21, 42]


def test_validation_names_argument():
    with pytest.raises(ValueError, match="budget"):
        csar(4, threshold=0.5)
    with pytest.raises(ValueError, match="budget"):
        schedules.csar(4, 4)
    with pytest.raises(ValueError, match="variant"):
        csar(4, threshold=0.5, budget=40, variant="x")
