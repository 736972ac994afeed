"""Reward families by name: the registry that ``jbandits sweep`` reads (``bandit =
"bernoulli"`` in a config), as :mod:`jbandits.core.registry` is for policies.

An entry is a *builder* ``build(means, **options) -> (bandit, params)``: one instance
of the family from its true means (``[K]``), with the family's own keyword options
(the Gaussian ``std``). Built in: ``"bernoulli"`` (means in [0, 1]) and ``"gaussian"``
(``std``, default 1, the same for every arm). A family defined outside the package
registers the same way, in its own module (define the family itself with
:func:`jbandits.envs.common.family`)::

    @jbandits.envs.register_family("exponential")
    def exponential(means):
        ...
        return EXPONENTIAL, ExponentialParams(means, mask)

    bandit, params = jbandits.envs.make_family("exponential", [0.5, 1.0, 2.0])

and a sweep config names that module in ``imports`` (:mod:`jbandits.cli.config`), so
``bandit = "exponential"`` resolves. An unknown name is refused with the known ones.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

import numpy as np

from jbandits.envs.bernoulli import bernoulli
from jbandits.envs.gaussian import gaussian

_BUILDERS: dict[str, Callable] = {}


def register_family(name: str, build: Callable | None = None):
    """Register ``build(means, **options) -> (bandit, params)`` under ``name``.

    Without ``build`` it is a decorator (``@register_family("exponential")``) that
    registers the function and returns it unchanged. Registering the same function
    again (its module reloaded in a notebook) replaces the entry; another function
    under a taken name raises ValueError.
    """
    if build is None:
        return lambda fn: register_family(name, fn)
    if not isinstance(name, str) or not name:
        raise ValueError(f"family name must be a non-empty string, got {name!r}")
    if not callable(build):
        raise TypeError(f"family {name!r}: build must be callable, got {build!r}")
    old = _BUILDERS.get(name)
    if old is not None and _ident(old) != _ident(build):
        raise ValueError(
            f"family name {name!r} is already registered (by {_qualname(old)})"
        )
    _BUILDERS[name] = build
    return build


def _qualname(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', fn)}"


def _ident(fn) -> tuple:
    """The same function defined again: its file and qualified name (a script run as
    ``__main__`` and then imported by a sweep config registers twice)."""
    code = getattr(fn, "__code__", None)
    where = code.co_filename if code is not None else getattr(fn, "__module__", "?")
    return where, getattr(fn, "__qualname__", repr(fn))


def unregister_family(name: str) -> None:
    """Remove ``name`` (a family registered outside the package, e.g. in a test)."""
    _builder(name)
    del _BUILDERS[name]


def family_names() -> list[str]:
    """Sorted registered family names."""
    return sorted(_BUILDERS)


def _builder(name: str) -> Callable:
    if name not in _BUILDERS:
        raise ValueError(
            f"unknown reward family {name!r}; known: {', '.join(family_names())}"
        )
    return _BUILDERS[name]


def family_options(name: str) -> tuple[str, ...]:
    """The keyword options the builder of ``name`` takes besides the means."""
    params = list(inspect.signature(_builder(name)).parameters.values())
    return tuple(p.name for p in params[1:] if p.kind is not p.VAR_POSITIONAL)


def make_family(name: str, means, **options):
    """``(bandit, params)`` of the family registered as ``name`` with true ``means``.

    Raises:
      ValueError: an unknown ``name`` (the message lists the known ones), an option
        the builder does not take, or what the builder refuses (e.g. Bernoulli
        means outside [0, 1]).
    """
    build = _builder(name)
    takes = family_options(name)
    for key in options:
        if key not in takes:
            known = ", ".join(takes) or "no options"
            raise ValueError(f"family {name!r} takes {known}, not {key!r}")
    return build(means, **options)


def _gaussian(means, *, std=1.0):
    """Gaussian arms of standard deviation ``std`` (> 0), the same for every arm."""
    return gaussian(means, np.full(np.shape(means), float(std)))


register_family("bernoulli", bernoulli)
register_family("gaussian", _gaussian)
