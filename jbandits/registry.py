"""Policies by name: ``jbandits.make("apt", num_arms=K, threshold=0.5)``.

Every registered name joins the shared contract and trace-equivalence tests (each name
must have a trace case in ``tests/cases``; a test fails otherwise).

A policy built by :func:`make` (or by the top-level factories such as
``jbandits.apt``) remembers its name and keyword arguments in ``policy.spec``. The
batched runner (:mod:`jbandits.runner`) splits them with :func:`split_kwargs` into
*static* arguments, which fix shapes or control flow and key the compile cache, and
*numeric* ones (ε, α, ρ, budgets, horizons, schedules, ...), which it traces, so that
``make()`` + ``simulate`` in a loop over ε compiles once.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.types import Policy, PolicySpec

_POLICIES: dict[str, Callable[..., Policy]] = {}
_PREPARE: dict[str, Callable[..., dict]] = {}
_MIN_BUDGET: dict[str, Callable[..., int]] = {}

# Integer arguments that fix shapes or loop counts (all strings, bools and None are
# static too, and so is ``num_arms``); every other number is traced by the runner.
STATIC_INTS = frozenset({"num_arms", "m", "num_iters"})
# Per-policy arguments that size host-side round tables (kept static).
STATIC_BY_POLICY = {
    "eucbv": frozenset({"horizon"}),
    "ucb_improved": frozenset({"horizon"}),
}


def register(
    name: str,
    factory: Callable[..., Policy],
    *,
    prepare: Callable[..., dict] | None = None,
    min_budget: Callable[..., int] | None = None,
) -> None:
    """Register ``factory(num_arms, **params) -> Policy`` under ``name``.

    ``prepare(num_arms, num_real_arms, budget, **kwargs) -> dict`` (optional) returns
    extra keyword arguments computed on the host for one cell of a sweep (exact phase
    schedules for the real number of arms and a concrete budget).
    ``min_budget(num_real_arms, **kwargs) -> int`` (optional) is the smallest budget
    the policy can run with that many real arms (its schedule's); the entry points
    refuse smaller ones (:func:`check_budgets`). Default: K, one pull per arm.
    """
    if not isinstance(name, str) or not name or name in _POLICIES:
        raise ValueError(f"invalid or duplicate policy name {name!r}")
    _POLICIES[name] = factory
    if prepare is not None:
        _PREPARE[name] = prepare
    if min_budget is not None:
        _MIN_BUDGET[name] = min_budget


def _check_name(name: str) -> None:
    if name not in _POLICIES:
        raise ValueError(f"unknown policy {name!r}; known: {sorted(_POLICIES)}")


def make(name: str, **params) -> Policy:
    """Build the policy registered as ``name`` (``num_arms`` is a keyword).

    The policy remembers ``name`` and ``params`` in ``policy.spec``, so that
    :func:`jbandits.simulate`, :func:`jbandits.sweep` and :func:`jbandits.sweep_grid`
    can rebuild it with its numeric arguments traced (one compilation for a loop over,
    say, epsilon).

    Args:
      name: a registered name (:func:`names`).
      **params: the factory's keyword arguments: ``num_arms`` (K, including padded
        arms) and the policy's own (see its factory's docstring, e.g.
        ``help(jbandits.apt)``). Fixed-budget policies take ``budget`` (the pull
        count they are built for); some regret policies take ``horizon`` (the T of
        their index formulas).

    Returns:
      A :class:`~jbandits.types.Policy` with ``spec`` set.

    Raises:
      ValueError: unknown ``name`` (the message lists the known ones), or a bad
        argument (the policy's factory names it).

    Example::

        policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
        policy.spec.name   # "apt"
    """
    check_kwargs(name, params)
    policy = _POLICIES[name](**params)
    spec = PolicySpec(name, tuple(sorted(params.items())))
    init = _mask_checked_init(policy.init, params.get("num_arms"))
    return policy._replace(init=init, spec=spec)


def _mask_checked_init(init, num_arms):
    """``init`` that also takes a list or NumPy array as ``arm_mask`` (a direct
    call, outside the engine) and refuses a mask that is not boolean ``[K]``."""

    @functools.wraps(init)
    def init_fn(key, arm_mask):
        if not isinstance(arm_mask, jax.Array):  # a list, a tuple, a NumPy array
            host = np.asarray(arm_mask)
            if host.dtype != np.bool_:
                raise ValueError(
                    f"arm_mask must be a boolean array [K], got {arm_mask!r}"
                )
            if isinstance(num_arms, int) and host.shape != (num_arms,):
                raise ValueError(
                    f"arm_mask must have shape ({num_arms},) (num_arms), got "
                    f"shape {host.shape}"
                )
            arm_mask = jnp.asarray(host)
        return init(key, arm_mask)

    return init_fn


def names() -> list[str]:
    """Sorted registered policy names.

    Returns:
      A new list of the names :func:`make` accepts (the built-in thresholding,
      identification and regret policies, plus any added with :func:`register`).

    Example::

        "successive_rejects" in jbandits.names()   # True
    """
    return sorted(_POLICIES)


def factory(name: str) -> Callable[..., Policy]:
    """The factory of ``name``, wrapped so that the policies it builds carry a spec.

    The wrapper takes ``num_arms`` positionally or as a keyword and carries the
    registered factory's name and docstring; the top-level factories such as
    ``jbandits.apt`` are built by it (each call returns a new wrapper).

    Args:
      name: a registered name (:func:`names`).

    Returns:
      ``build(num_arms=None, /, **params) -> Policy``, equivalent to
      ``make(name, num_arms=num_arms, **params)``.

    Raises:
      ValueError: unknown ``name`` (the message lists the known ones).

    Example::

        build_apt = jbandits.factory("apt")
        policy = build_apt(4, threshold=0.5)
    """
    _check_name(name)
    if name not in _WRAPPED:
        _WRAPPED[name] = _wrap(name)
    return _WRAPPED[name]


_WRAPPED: dict[str, Callable[..., Policy]] = {}


def _wrap(name: str) -> Callable[..., Policy]:
    raw = _POLICIES[name]

    @functools.wraps(raw)
    def build(num_arms=None, /, **params):
        if num_arms is not None:
            params["num_arms"] = num_arms
        return make(name, **params)

    return build


def raw_factory(name: str) -> Callable[..., Policy]:
    """The registered factory itself (no spec attached)."""
    _check_name(name)
    return _POLICIES[name]


def prepare_hook(name: str) -> Callable[..., dict] | None:
    """The host-side per-cell ``prepare`` of ``name``, or None."""
    _check_name(name)
    return _PREPARE.get(name)


def min_budget(name: str, num_real_arms: int, kwargs: dict | None = None) -> int:
    """The smallest budget policy ``name`` (built with ``kwargs``) can run on an
    instance of ``num_real_arms`` real arms: its ``min_budget`` hook's, at least K."""
    _check_name(name)
    hook = _MIN_BUDGET.get(name)
    k = int(num_real_arms)
    if hook is None:
        return k
    return max(k, int(hook(k, **dict(kwargs or {}))))


def check_budgets(name: str, kwargs: dict | None, budgets, num_real_arms) -> None:
    """Raise ValueError if a budget is below what policy ``name`` needs (host side).

    ``budgets`` and ``num_real_arms`` are matching 1-D sequences (one per cell). A
    fixed-budget policy given a budget below its schedule's minimum would otherwise
    pull nothing and output -1 (every metric an error) without a word.
    """
    seen = {}
    pairs = zip(
        np.ravel(budgets).tolist(), np.ravel(num_real_arms).tolist(), strict=True
    )
    for b, k in pairs:
        if k not in seen:
            seen[k] = min_budget(name, k, kwargs)
        if b < seen[k]:
            raise ValueError(
                f"budget {b} is too small for {name} with K={k} arms: it needs "
                f"budget >= {seen[k]} (below that its schedule does not exist)"
            )


def _numeric_annotation(annotation) -> bool:
    """Whether a factory parameter's annotation admits numbers but no strings."""
    text = annotation if isinstance(annotation, str) else repr(annotation)
    if annotation is inspect.Parameter.empty or "str" in text or "Any" in text:
        return False
    return any(word in text for word in ("ArrayLike", "int", "float", "bool"))


def check_kwargs(name: str, kwargs: dict) -> None:
    """Raise ValueError on a keyword argument that policy ``name`` does not take, or
    a string where it takes a number (``epsilon="0.05"``), before anything is built
    or compiled. ``num_arms`` may be left out (the sweeps fill it in)."""
    _check_name(name)
    params = inspect.signature(_POLICIES[name]).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        known = None
    else:
        known = sorted(k for k in params if k != "num_arms")
    for key, value in kwargs.items():
        if known is not None and key not in params:
            raise ValueError(
                f"{name}: unknown argument {key!r}; it takes {', '.join(known)}"
            )
        param = params.get(key)
        numeric = param is not None and _numeric_annotation(param.annotation)
        if numeric and isinstance(value, (str, bytes)):
            raise ValueError(f"{name}: {key} must be a number, got {value!r}")


def is_static(key: str, value: Any, name: str = "") -> bool:
    """Whether a keyword argument of policy ``name`` fixes the program."""
    if key in STATIC_INTS or key in STATIC_BY_POLICY.get(name, ()):
        return True
    return value is None or isinstance(value, (str, bool, np.bool_))


def split_kwargs(kwargs: dict, name: str = "") -> tuple[dict, dict]:
    """``(static, numeric)`` parts of the keyword arguments of policy ``name``."""
    static, numeric = {}, {}
    for key, value in kwargs.items():
        (static if is_static(key, value, name) else numeric)[key] = value
    return static, numeric


def _register_builtins() -> None:
    """Each family package exposes ``POLICIES`` (and optionally ``PREPARE``) dicts."""
    from jbandits.policies import identification, regret, thresholding

    for family in (thresholding, identification, regret):
        hooks = getattr(family, "PREPARE", {})
        minimum = getattr(family, "MIN_BUDGET", {})
        for name, fn in family.POLICIES.items():
            register(name, fn, prepare=hooks.get(name), min_budget=minimum.get(name))


_register_builtins()
