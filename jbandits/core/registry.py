"""Policies by name: ``jbandits.make("apt", num_arms=K, threshold=0.5)``.

A policy registers itself in its own file (``@registry.policy("apt")``, :func:`policy`;
the family packages are imported at the first lookup); ``jbandits.make(name)``,
``jbandits.names()`` and ``jbandits.<name>`` come from here. A policy defined outside
the package registers the same way and is batched, swept and cached like a built-in.
A built policy is its *structure* (:func:`bind`: what fixes the program) plus its
*numbers* (``policy.params``, traced; :mod:`jbandits.core.numbers`), so ``make()`` +
``simulate`` in a loop over ε compiles once.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from jbandits.core import declared as _declared
from jbandits.core import validate as _validate
from jbandits.core.arguments import SharedArguments
from jbandits.core.numbers import NOT_GIVEN, STATIC_INTS, Structure
from jbandits.core.numbers import is_static as _is_static
from jbandits.core.types import Policy


@dataclass(frozen=True)
class Entry:
    """A registered policy: its factory, the host hook and the static numbers."""

    name: str
    factory: Callable[..., Policy]
    prepare: Callable[..., dict] | None = None
    static: frozenset = frozenset()
    min_budget: Callable[..., int] | None = None
    optional: frozenset = frozenset()


_ENTRIES: dict[str, Entry] = {}
_FOUND: list = []  # [True] once the built-in policies were imported


def _builtins() -> None:  # core is below policies: it finds them at run time
    """Import the built-in policies (they register themselves), once."""
    if not _FOUND:
        _FOUND.append(True)  # first: their own register calls come back here
        importlib.import_module("jbandits.policies")


def register(
    name: str,
    factory: Callable[..., Policy],
    *,
    prepare: Callable[..., dict] | None = None,
    static: tuple[str, ...] | frozenset = (),
    min_budget: Callable[..., int] | None = None,
    optional: tuple[str, ...] | frozenset = (),
) -> None:
    """Register ``factory(num_arms, **params) -> Policy`` under ``name``.

    Args:
      name: the name :func:`make` takes (a non-empty string, not yet registered;
        registering the same function again, e.g. when its module is reloaded in a
        notebook, replaces the entry).
      factory: ``factory(num_arms, **params) -> Policy``.
      prepare: optional host hook ``prepare(num_arms, num_real_arms, budget,
        **kwargs) -> dict``: extra keyword arguments computed on the host for one
        cell of a sweep (exact phase schedules for the real number of arms and a
        concrete budget).
      static: names of integer arguments that fix shapes or loop counts (besides
        ``num_arms``; strings, bools and None are always static): they key the
        compile cache instead of being traced.
      min_budget: optional ``min_budget(num_real_arms[, **kwargs]) -> int``, the
        smallest budget the policy can run with that many real arms (its
        schedule's); the entry points refuse smaller ones (:func:`check_budgets`).
        Default: K, one pull per arm.
      optional: numbers whose default ``None`` is traced (:mod:`jbandits.core.declared`).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"policy name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(
            f"register({name!r}, ...): the factory must be callable "
            f"(factory(num_arms, **params) -> Policy), got {factory!r}"
        )
    _validate.static_names(f"register({name!r}, ...)", factory, static)
    _builtins()
    old = _ENTRIES.get(name)
    if old is not None and not _same_function(old.factory, factory):
        raise ValueError(
            f"policy name {name!r} is already registered (by {_qualname(old.factory)})"
        )
    _declared.check_optional(name, parameters(factory), optional)
    static, optional = frozenset(static), frozenset(optional)
    _ENTRIES[name] = Entry(name, factory, prepare, static, min_budget, optional)
    _WRAPPED.pop(name, None)


def unregister(name: str) -> None:
    """Remove ``name`` (a policy registered outside the package, e.g. in a test)."""
    _check_name(name)
    del _ENTRIES[name]
    _WRAPPED.pop(name, None)


def policy(
    name: str,
    *,
    prepare: Callable[..., dict] | None = None,
    static: tuple[str, ...] = (),
    min_budget: Callable[..., int] | None = None,
    shared: SharedArguments | None = None,
    optional: tuple[str, ...] = (),
) -> Callable[[Callable[..., Policy]], Callable[..., Policy]]:
    """Decorator form of :func:`register`: ``@registry.policy("apt")`` over the
    factory registers it and returns :func:`factory` of the name (calling it is
    :func:`make`, as ``jbandits.apt`` is: every way to build a policy gives the same
    policy); with ``shared`` (a :class:`~jbandits.core.arguments.SharedArguments`
    group, e.g. the budget, schedule and execution of the fixed-schedule policies)
    the factory takes the group's arguments too, with the group's ``prepare`` and
    ``min_budget`` unless given here.

    Example::

        @jbandits.core.registry.policy("my_ucb", static=("window",))
        def my_ucb(num_arms, *, alpha=2.0, window=10) -> jbandits.Policy: ...

        jbandits.make("my_ucb", num_arms=5, alpha=1.0)
    """

    def decorate(fn: Callable[..., Policy]) -> Callable[..., Policy]:
        hooks = {"prepare": prepare, "min_budget": min_budget}
        if shared is not None:
            fn = shared.wrap(name, fn)
            hooks = {k: v or getattr(shared, k) for k, v in hooks.items()}
        register(name, fn, static=static, optional=optional, **hooks)
        return factory(name)

    return decorate


def _same_function(old, new) -> bool:
    """``new`` is ``old``, or ``old`` defined again by reloading its module (the same
    module and qualified name; not a ``functools.wraps`` wrapper, which copies both)."""
    return new is old or (
        not hasattr(new, "__wrapped__") and _qualname(new) == _qualname(old)
    )


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"


def parameters(fn: Callable) -> Any:
    """``inspect.signature(fn).parameters``, remembered per callable: the entry
    points read the signatures of a policy's factory and hooks on every call."""
    try:
        return _parameters(fn)
    except TypeError:  # an unhashable callable
        return inspect.signature(fn).parameters


@functools.lru_cache(maxsize=1024)
def _parameters(fn: Callable) -> Any:
    return inspect.signature(fn).parameters


def _check_name(name: str) -> None:
    _builtins()
    if name not in _ENTRIES:
        raise ValueError(f"unknown policy {name!r}; known: {sorted(_ENTRIES)}")


def make(name: str, **params) -> Policy:
    """Build the policy registered as ``name`` (``num_arms`` is a keyword).

    The arguments split into the policy's structure (``num_arms``, strings, bools,
    the integers it declares static) and its numbers, which become data: the
    policy's ``params`` (with the factory's numeric defaults filled in), put into its
    state by ``init`` (:mod:`jbandits.core.numbers`). :func:`jbandits.simulate`,
    :func:`jbandits.sweep` and :func:`jbandits.sweep_grid` batch the numbers like any
    other input, so a loop over, say, epsilon compiles once.

    Args:
      name: a registered name (:func:`names`).
      **params: the factory's keyword arguments: ``num_arms`` (K, including padded
        arms) and the policy's own (see its factory's docstring, e.g.
        ``help(jbandits.apt)``). Fixed-budget policies take ``budget`` (the pull
        count they are built for); some regret policies take ``horizon`` (the T of
        their index formulas).

    Returns:
      A :class:`~jbandits.core.types.Policy` with ``spec`` set (``policy.params`` its
      numbers).

    Raises:
      ValueError: unknown ``name`` (the message lists the known ones), or a bad
        argument (the policy's factory names it).

    Example::

        policy = jbandits.make("apt", num_arms=4, threshold=0.5, epsilon=0.05)
        policy.spec.name   # "apt"
        policy.params      # {"epsilon": 0.05, "threshold": 0.5}
    """
    check_kwargs(name, params)
    static, numeric = split_kwargs(params, name)
    return _structure(name, static).policy(numeric)  # checked above, split by kind


def bind(name: str, **static) -> Structure:
    """The :class:`~jbandits.core.numbers.Structure` of policy ``name`` with ``static``
    arguments (``num_arms`` among them): ``.policy(numbers)`` builds the policy with
    its numbers as data; the batched runner compiles one program per structure.

    Raises:
      ValueError: unknown ``name``, an argument the factory does not take, or a
        number among ``static`` (it belongs to ``.policy``'s numbers).
    """
    check_kwargs(name, static)
    for key, value in static.items():
        if not is_static(key, value, name):
            raise ValueError(
                f"{name}: {key}={value!r} is a number, not structure: give it to "
                ".policy(...) (or to make)"
            )
    return _structure(name, static)


def _structure(name: str, static: dict) -> Structure:
    """:func:`bind` without its checks (``static`` already checked and split)."""
    entry = _ENTRIES[name]
    items = tuple(sorted(static.items()))
    defaults = _numeric_defaults(entry, static)
    return Structure(name, entry.factory, items, defaults, kinds(name))


def kinds(name: str) -> tuple:
    """``((key, "int" | "float"), ...)``: the declared type of each number of ``name``."""
    e = _ENTRIES[name]
    rule = functools.partial(_is_static, declared=e.static)
    return _declared.kinds_of(
        parameters(e.factory), e.static | STATIC_INTS, e.optional, rule
    )


def cast_numbers(name: str, numbers: dict) -> dict:
    """``numbers`` of ``name`` cast to their declared types (other keys as they are)."""
    _check_name(name)
    return _declared.cast_all(dict(kinds(name)), numbers)


def optional_numbers(name: str) -> frozenset:
    """The optional numbers of policy ``name`` (``register(..., optional=)``)."""
    _check_name(name)
    return _ENTRIES[name].optional


def _numeric_defaults(entry: Entry, static: dict) -> tuple:
    """The factory's numeric defaults (an optional number's: ``NOT_GIVEN``)."""
    params = parameters(entry.factory)
    return tuple(
        (k, NOT_GIVEN if k in entry.optional else params[k].default)
        for k, _ in kinds(entry.name)
        if k not in static and params[k].default is not inspect.Parameter.empty
    )


def names() -> list[str]:
    """A new sorted list of the names :func:`make` accepts (the built-in policies
    and those added with :func:`register`): ``"apt" in jbandits.names()``."""
    _builtins()
    return sorted(_ENTRIES)


def factory(name: str) -> Callable[..., Policy]:
    """The factory of ``name``, wrapped so that the policies it builds carry a spec:
    ``build(num_arms=None, /, **params) -> Policy``, ``make(name, num_arms=num_arms,
    **params)`` with the registered factory's name and docstring (``jbandits.apt`` is
    one): ``jbandits.factory("apt")(4, threshold=0.5)``. Raises ValueError on an
    unknown ``name``.
    """
    _check_name(name)
    if name not in _WRAPPED:
        _WRAPPED[name] = _wrap(name)
    return _WRAPPED[name]


_WRAPPED: dict[str, Callable[..., Policy]] = {}


def _wrap(name: str) -> Callable[..., Policy]:
    raw = _ENTRIES[name].factory

    @functools.wraps(raw)
    def build(num_arms=None, /, **params):
        if num_arms is not None:
            params["num_arms"] = num_arms
        return make(name, **params)

    return build


def raw_factory(name: str) -> Callable[..., Policy]:
    """The registered factory itself (no spec attached)."""
    _check_name(name)
    return _ENTRIES[name].factory


def prepare_hook(name: str) -> Callable[..., dict] | None:
    """The host-side per-cell ``prepare`` of ``name``, or None."""
    _check_name(name)
    return _ENTRIES[name].prepare


def min_budget(name: str, num_real_arms: int, kwargs: dict | None = None) -> int:
    """The smallest budget policy ``name`` (built with ``kwargs``) can run on an
    instance of ``num_real_arms`` real arms: its ``min_budget`` hook's, at least K."""
    _check_name(name)
    hook = _ENTRIES[name].min_budget
    k = int(num_real_arms)
    if hook is None:
        return k
    takes = parameters(hook).values()
    keywords = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in takes)
    return max(k, int(hook(k, **dict(kwargs or {})) if keywords else hook(k)))


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
    params = parameters(_ENTRIES[name].factory)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        known = None
    else:
        known = sorted(k for k in params if k != "num_arms")
    for key, value in kwargs.items():
        if known is not None and key not in params:
            raise ValueError(
                f"{name}: unknown argument {key!r}; it takes {', '.join(known)}"
            )
        if key in _ENTRIES[name].static and value is not None:
            _validate.declared_static_int(name, key, value)
        param = params.get(key)
        numeric = param is not None and _numeric_annotation(param.annotation)
        if numeric and isinstance(value, (str, bytes)):
            raise ValueError(f"{name}: {key} must be a number, got {value!r}")


def is_static(key: str, value: Any, name: str = "") -> bool:
    """Whether a keyword argument of policy ``name`` fixes the program (the rule of
    :mod:`jbandits.core.numbers`, with the integers ``name`` declared static)."""
    _builtins()
    entry = _ENTRIES.get(name)
    if entry is None:
        return _is_static(key, value)
    return _is_static(key, value, entry.static, entry.optional)


def split_kwargs(kwargs: dict, name: str = "") -> tuple[dict, dict]:
    """``(static, numeric)`` parts of the keyword arguments of policy ``name``."""
    static, numeric = {}, {}
    for key, value in kwargs.items():
        (static if is_static(key, value, name) else numeric)[key] = value
    return static, numeric
