"""UCB-E (spec §5.1): index values, oracle a, hand-checked runs, validation."""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from harness import play_table

from jbandits.analysis.oracles import ucb_e_oracle_a
from jbandits.policies.blocks import arms
from jbandits.policies.identification.ucb_e import ucb_e, ucb_e_index


@pytest.fixture(autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def test_index_values():
    stats = arms.ArmStats(
        counts=jnp.asarray([0.0, 4.0, 1.0]),
        sums=jnp.asarray([0.0, 2.0, 0.25]),
        m2=jnp.zeros(3),
    )
    index = np.asarray(ucb_e_index(stats, 1.0))
    assert index[0] == np.inf  # unpulled arms first
    np.testing.assert_allclose(index[1:], [0.5 + 0.5, 0.25 + 1.0], rtol=1e-15)


def test_oracle_a():
    # BAI gaps [0.1, 0.1, 0.2] (best arm: smallest other gap) -> H1 = 225
    a = ucb_e_oracle_a([0.5, 0.4, 0.3], 100)
    assert abs(a - 97 / 225) <= 1e-15
    assert (
        abs(ucb_e_oracle_a([0.5, 0.4, 0.3], 100, c=25 / 36) - 25 / 36 * 97 / 225)
        < 1e-15
    )
    # padded arms are ignored
    masked = ucb_e_oracle_a(
        [0.5, 9.0, 0.4, 0.3], 100, arm_mask=[True, False, True, True]
    )
    assert masked == a
    with pytest.raises(ValueError, match="ucb_e"):
        ucb_e_oracle_a([0.5, 0.5, 0.3], 100)  # tied best arms: H1 infinite
    with pytest.raises(ValueError, match="budget"):
        ucb_e_oracle_a([0.5, 0.4, 0.3], 2)


def test_hand_checked_two_arms():
    # arm 0 pays 0.6, arm 1 pays 0.5 (deterministic), a = 0.01: after the forced pulls
    # B_0 = 0.6 + 0.1 / sqrt(n_0) > 0.6 = B_1, so arm 0 is pulled for ever
    table = np.stack([np.full(20, 0.6), np.full(20, 0.5)])
    res = play_table(ucb_e(2, a=0.01), table, 20)
    assert np.asarray(res.arms).tolist() == [0, 1] + [0] * 18
    assert int(res.output) == 0
    # a = 1: B_i = mu_i + 1 / sqrt(n_i); the expected sequence follows the index by hand
    seq, n = [0, 1], [1, 1]
    for _ in range(18):
        b = [0.6 + math.sqrt(1 / n[0]), 0.5 + math.sqrt(1 / n[1])]
        i = 0 if b[0] >= b[1] else 1
        seq.append(i)
        n[i] += 1
    res = play_table(ucb_e(2, a=1.0), table, 20)
    assert np.asarray(res.arms).tolist() == seq


def test_padding_never_pulled():
    table = np.random.default_rng(0).random((5, 30))
    mask = np.asarray([False, True, True, False, True])
    res = play_table(ucb_e(5, a=0.5), table, 30, arm_mask=mask)
    pulled = np.asarray(res.arms)
    assert set(pulled.tolist()) <= {1, 2, 4}
    assert pulled[:3].tolist() == [1, 2, 4]  # forced pulls over real arms, index order
    assert bool(mask[int(res.output)])


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(a=0.0), "a"),
        (dict(a=-1.0), "a"),
        (dict(a=float("inf")), "a"),
        (dict(a=1.0, tie_break="last"), "tie_break"),
    ],
)
def test_invalid_arguments(kwargs, name):
    with pytest.raises(ValueError, match=rf"^{name} "):
        ucb_e(4, **kwargs)
    with pytest.raises(ValueError, match="num_arms"):
        ucb_e(1, a=1.0)
