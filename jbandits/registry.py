"""Policies by name: ``jbandits.make("apt", num_arms=K, threshold=0.5)``.

Every registered name joins the shared contract and trace-equivalence tests (each name
must have a trace case in ``tests/cases``; a test fails otherwise).
"""

from __future__ import annotations

from collections.abc import Callable

from jbandits.types import Policy

_POLICIES: dict[str, Callable[..., Policy]] = {}


def register(name: str, factory: Callable[..., Policy]) -> None:
    """Register ``factory(num_arms, **params) -> Policy`` under ``name``."""
    if not isinstance(name, str) or not name or name in _POLICIES:
        raise ValueError(f"invalid or duplicate policy name {name!r}")
    _POLICIES[name] = factory


def make(name: str, **params) -> Policy:
    """Build the policy registered as ``name`` (``num_arms`` is a keyword)."""
    if name not in _POLICIES:
        raise ValueError(f"unknown policy {name!r}; known: {sorted(_POLICIES)}")
    return _POLICIES[name](**params)


def names() -> list[str]:
    """Sorted registered policy names."""
    return sorted(_POLICIES)


def factory(name: str) -> Callable[..., Policy]:
    if name not in _POLICIES:
        raise ValueError(f"unknown policy {name!r}; known: {sorted(_POLICIES)}")
    return _POLICIES[name]


def _register_builtins() -> None:
    """Each family package exposes ``POLICIES: dict[name, factory]``."""
    from jbandits.policies import identification, regret, thresholding

    for family in (thresholding, identification, regret):
        for name, fn in family.POLICIES.items():
            register(name, fn)


_register_builtins()
