"""AugUCB: TV-1 constants, authors' tables, elimination <=> g > 0, empty sets, checks."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms
from jbandits.policies.thresholding import augucb, augucb_tables


def test_tv1_paper_constants():
    tab = augucb_tables(100, 10_000)
    assert int(tab.last_round) == 5
    np.testing.assert_allclose(
        tab.psi[:4], [3.930404, 1.965202, 0.982601, 0.491300], atol=5e-7
    )
    assert tab.ell[:4].tolist() == [73, 67, 62, 57]
    coef = np.sqrt(tab.psi[0] * tab.log_term[0] / (3 * 4))  # rho = 1/3
    assert abs(coef - 1.736864) < 5e-7
    tab = augucb_tables(8, 1000)
    assert int(tab.last_round) == 4 and tab.ell[:2].tolist() == [84, 76]
    assert abs(tab.psi[0] - 6.037234) < 5e-7 and 8 * tab.ell[0] == 672
    tab = augucb_tables(4, 1000)
    assert abs(tab.psi[0] - 5149.040711) < 5e-6 and tab.ell[0] == 71_137
    tab = augucb_tables(5, 2000)
    assert abs(tab.psi[0] - 92.343104) < 5e-7 and tab.ell[0] == 1404


def test_authors_code_tables():
    tab = augucb_tables(100, 10_000, variant="authors_code")
    assert tab.ell.tolist() == [34, 63, 113, 204, 364, 638, 1098]
    np.testing.assert_allclose(tab.psi, 10_000 / np.log(100))
    # m = 0 width coefficient sqrt((2/3) ln(psi T) / 4) = 1.678 (thresholding-authors-code §1)
    assert abs(np.sqrt((2 / 3) * tab.log_term[0] / 4) - 1.678) < 5e-4


def _play(policy, table, mask, budget):
    state = policy.init(jax.random.key(0), mask)
    step = jax.jit(policy.step)
    counts = np.zeros(mask.shape[0], int)
    states = [state]
    for _ in range(budget):
        i = int(state.arm)
        if i < 0:
            break
        state = step(state, jax.random.key(1), table[i, counts[i]])
        counts[i] += 1
        states.append(state)
    return states


@pytest.mark.parametrize("variant", ["paper"])
def test_eliminated_iff_index_positive(variant):
    rng = np.random.default_rng(3)
    # 8 real arms (a2 = 1.29); tau far above the rewards so that arms do get dropped
    mask = jnp.asarray([True, True, False, True, True, True, True, True, True])
    means = np.array([0.05, 0.3, 0.5, 0.5, 0.8, 0.95, 0.6, 0.1, 0.4])
    table = (rng.random((9, 400)) < means[:, None]) * 3.0
    tau = 1.6
    with jax.enable_x64(True):
        pol = augucb(9, threshold=tau, budget=400, variant=variant)
        states = _play(pol, table, mask, 400)
        dropped_any = False
        for old, new in zip(states[:-1], states[1:], strict=True):
            if int(new.t) <= 8:
                assert bool(jnp.all(new.active == mask))
                continue
            n = jnp.maximum(new.stats.counts, 1.0)
            scale = (1 / 3) * old.psi[old.m] * old.log_term[old.m]
            s = jnp.sqrt(scale * ((arms.var_biased(new.stats) + 1) / (4 * n)))
            g = jnp.abs(arms.mean(new.stats) - tau) - 2 * s
            dropped = old.active & ~new.active
            assert bool(jnp.all(dropped == (old.active & (g > 0))))
            dropped_any |= bool(dropped.any())
        assert dropped_any  # the instance does exercise elimination


def test_empty_active_set_idle_vs_all():
    mask = jnp.ones(3, bool)
    table = np.repeat(np.array([[0.0], [1.0], [1.0]]), 200, axis=1)
    with jax.enable_x64(True):
        idle = _play(
            augucb(3, threshold=0.5, budget=200, on_empty="idle"), table, mask, 200
        )
        assert int(idle[-1].arm) == -1 and len(idle) < 201
        assert not bool(idle[-1].active.any())
        full = _play(augucb(3, threshold=0.5, budget=200), table, mask, 200)
        assert len(full) == 201 and not bool(full[-1].active.any())
        # B empty: "all" keeps pulling the arm with the smallest index g over all arms
        assert int(full[-1].arm) >= 0


def test_validation_names_argument():
    with pytest.raises(ValueError, match="budget"):
        augucb(4, threshold=0.5)
    with pytest.raises(ValueError, match="rho"):
        augucb(4, threshold=0.5, budget=100, rho=0.0)
    with pytest.raises(ValueError, match="variant"):
        augucb(4, threshold=0.5, budget=100, variant="nope")
    with pytest.raises(ValueError, match="on_empty"):
        augucb(4, threshold=0.5, budget=100, on_empty="nope")
    with pytest.raises(ValueError, match="budget"):
        augucb_tables(4, 4)
