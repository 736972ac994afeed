"""Tie-breaking and read-out shared by the regret references (spec §1.5)."""

from __future__ import annotations

import jax
import jax.numpy as jnp


@jax.jit
def _bits(key):
    return jax.random.bits(key, (), jnp.uint32)


def random_tied(tied, key) -> int:
    """The ``floor(b * n / 2**32)``-th of the ``n`` tied arms in increasing index
    order, ``b`` = the 32 random bits ``jax.random.bits(key)`` (multiply-shift,
    Lemire, ACM TOMACS 2019)."""
    tied = sorted(tied)
    return tied[(int(_bits(key)) * len(tied)) >> 32]


def pick(candidates, score, tie_break, draws, t, best=max):
    """The candidate with the best ``score`` (``best`` = max or min).

    Ties: lowest index ("first") or :func:`random_tied` with the key of pull ``t``
    ("random"; real arms keep their order in padded numbering, so the rank among the
    tied real arms is the rank among the tied padded arms).
    """
    candidates = list(candidates)
    top = best(score[i] for i in candidates)
    tied = [i for i in candidates if score[i] == top]
    if tie_break == "first" or len(tied) == 1:
        return tied[0]
    return random_tied(tied, draws.key_for_pull(t))


def best_mean(arms, candidates):
    """Output: the pulled candidate with the largest empirical mean (first on ties)."""
    pulled = [i for i in candidates if arms[i].n > 0]
    return max(pulled, key=lambda i: arms[i].mean) if pulled else 0
