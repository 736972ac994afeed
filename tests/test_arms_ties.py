"""jbandits.policies.blocks.arms random tie-break: one 32-bit draw mapped to the rank of the chosen arm
among the tied ones (multiply-shift; Lemire, ACM TOMACS 2019)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jbandits.policies.blocks import arms

N = 600  # selections per arm count


def test_mulhi_is_the_exact_high_word():
    rng = np.random.default_rng(0)
    edge = [0, 1, 2**16 - 1, 2**16, 2**31, 2**32 - 1]
    a = np.concatenate([np.repeat(edge, len(edge)), rng.integers(0, 2**32, 4000)])
    b = np.concatenate([np.tile(edge, len(edge)), rng.integers(0, 2**32, 4000)])
    got = np.asarray(
        jax.jit(arms._mulhi)(jnp.asarray(a, jnp.uint32), jnp.asarray(b, jnp.uint32))
    )
    want = [(int(x) * int(y)) >> 32 for x, y in zip(a, b, strict=True)]
    assert got.astype(np.int64).tolist() == want


@pytest.mark.parametrize("num_arms", [7, 33, 100])  # one word, a boundary, 4 words
def test_random_pick_is_the_multiply_shift_rank(num_arms):
    """The pick is the floor(b n / 2^32)-th tied eligible arm, b = jax.random.bits."""
    rng = np.random.default_rng(num_arms)
    levels = rng.integers(1, 4, (N, 1))  # few distinct values: many ties
    score = rng.integers(0, levels + 1, (N, num_arms)).astype(np.float32)
    mask = rng.random((N, num_arms)) < 0.8
    mask[:5] = False  # no eligible arm: -1
    keys = jax.random.split(jax.random.key(num_arms), N)
    pick = jax.jit(
        jax.vmap(lambda s, m, k: arms.argmax_masked(s, m, key=k, tie_break="random"))
    )(score, mask, keys)
    b = jax.vmap(lambda k: jax.random.bits(k, (), jnp.uint32))(keys)
    want = []
    for s, m, bits in zip(score, mask, np.asarray(b), strict=True):
        tied = np.flatnonzero(m & (s == np.where(m, s, -np.inf).max()))
        want.append(int(tied[(int(bits) * tied.size) >> 32]) if tied.size else -1)
    assert np.asarray(pick).tolist() == want
    assert len({w for w in want if w >= 0}) > num_arms // 2  # many arms exercised


def test_random_ties_spanning_words_are_uniform():
    """Tied arms on both sides of the 32-arm word boundaries, 6000 draws."""
    tied_arms = [1, 31, 32, 63, 64, 69]
    score = jnp.zeros(70).at[jnp.asarray(tied_arms)].set(1.0)
    keys = jax.random.split(jax.random.key(7), 6000)
    pick = jax.jit(
        jax.vmap(lambda k: arms.argmin_masked(-score, key=k, tie_break="random"))
    )(keys)
    counts = np.bincount(np.asarray(pick), minlength=70)
    assert counts.sum() == counts[tied_arms].sum()
    se = np.sqrt(6000 * (1 / 6) * (5 / 6))
    assert np.all(np.abs(counts[tied_arms] - 1000) < 4.5 * se)


@pytest.mark.parametrize("size", [1, 7, 31, 32, 33, 64, 100, 130])
def test_lowest_set_lists_the_first_flags_in_order(size):
    # the count lowest flagged indices, then size: np.nonzero's first entries
    rng = np.random.default_rng(size)
    pick = jax.jit(arms.lowest_set, static_argnums=1)
    for density in (0.0, 0.03, 0.3, 1.0):
        for count in (1, 4, 9, 40):
            flags = rng.random(size) < density
            want = list(np.nonzero(flags)[0][:count])
            want += [size] * (count - len(want))
            got = np.asarray(pick(flags, count))
            assert got.dtype == np.int32
            assert list(got) == want, (density, count)


def test_pack_bits_puts_flag_j_of_word_w_at_bit_j():
    flags = np.zeros(70, bool)
    flags[[0, 5, 31, 32, 69]] = True
    packed = np.asarray(arms.pack_bits(jnp.asarray(flags)))
    assert packed.dtype == np.uint32
    assert list(packed) == [1 | 1 << 5 | 1 << 31, 1, 1 << 5]
