"""Arguments a family of policies shares, supplied by the registry decorator.

The fixed-schedule policies (SR, SAR, VBR, SHVar, SHAdaVar) take their paper's
arguments plus the same three of the library: ``budget`` and ``schedule`` (the exact
host schedule) and ``execution`` (how the step compiles). A policy file writes only
the paper's; it names the shared group when it registers, and receives what the group
resolves them to::

    @registry.policy("sar", static=("m",), shared=successive_rejects.SCHEDULE)
    def sar(num_arms: int, *, m: ArrayLike, table, execution: Execution) -> Policy:
        ...

The registry keeps the function that the group wraps around it: it takes
``(num_arms, *, m, budget=None, schedule=None, execution=None)``, its
``__signature__`` says so (``inspect.signature``, :func:`jbandits.make`'s argument
checks and the docs' argument tables read it) and its docstring's ``Args:`` lists the
group's arguments after the paper's. The group also gives the registration its
``prepare`` and ``min_budget`` hooks (:func:`jbandits.core.registry.register`).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

from jbandits.core import validate as _validate


@dataclass(frozen=True)
class SharedArguments:
    """A group of keyword arguments that several policies take the same way.

    Attributes:
      parameters: the public keyword-only parameters (with their defaults and
        annotations), appended to the paper function's.
      doc: their ``Args:`` entries (each starts at column 0), appended to its
        docstring's.
      provides: the paper function's parameters that :attr:`resolve` fills in (they
        are not part of the public signature).
      resolve: ``resolve(name, num_arms, **values) -> dict``: the :attr:`provides`
        keyword arguments, from the public ones' values; ``num_arms`` is the checked
        static K (an int >= 2).
      prepare, min_budget: the registration's hooks (see
        :func:`jbandits.core.registry.register`), unless the decorator names its own.
    """

    parameters: tuple[inspect.Parameter, ...]
    doc: str
    provides: tuple[str, ...]
    resolve: Callable[..., dict]
    prepare: Callable[..., dict] | None = None
    min_budget: Callable[..., int] | None = None

    def wrap(self, name: str, paper: Callable) -> Callable:
        """The public factory of policy ``name`` around ``paper`` (see the module)."""
        defaults = {p.name: p.default for p in self.parameters}
        hidden = set(self.provides) - set(defaults)

        def factory(num_arms, **kwargs):
            for key in hidden & set(kwargs):
                raise TypeError(f"{name}() got an unexpected keyword argument {key!r}")
            shared = {key: kwargs.pop(key, d) for key, d in defaults.items()}
            num_arms = _validate.static_int("num_arms", num_arms, minimum=2)
            return paper(num_arms, **kwargs, **self.resolve(name, num_arms, **shared))

        given = inspect.signature(paper)
        own = [p for p in given.parameters.values() if p.name not in self.provides]
        signature = given.replace(parameters=[*own, *self.parameters])
        factory.__signature__ = signature
        factory.__annotations__ = {
            **{p.name: p.annotation for p in signature.parameters.values()},
            "return": signature.return_annotation,
        }
        for attr in ("__module__", "__name__", "__qualname__"):
            setattr(factory, attr, getattr(paper, attr))
        factory.__doc__ = _with_args(paper.__doc__ or "", self.doc, name)
        return factory


def _with_args(doc: str, entries: str, name: str) -> str:
    """``doc`` with ``entries`` appended to its ``Args:`` section (same indentation;
    an entry starts at column 0 in ``entries``, and is wrapped again to 88 columns)."""
    lines = doc.splitlines()
    heads = [i for i, line in enumerate(lines) if line.strip() == "Args:"]
    if not heads:
        raise ValueError(f"{name}: the factory's docstring has no 'Args:' section")
    head = lines[heads[0]]
    indent = head[: len(head) - len(head.lstrip())] + "  "
    end = heads[0] + 1
    while end < len(lines) and lines[end].startswith(indent):
        end += 1
    added = []
    for entry in re.split(r"\n(?=\S)", textwrap.dedent(entries).strip()):
        text = " ".join(entry.split())
        added += textwrap.wrap(
            text,
            88,
            initial_indent=indent,
            subsequent_indent=indent + "  ",
            break_on_hyphens=False,
            break_long_words=False,
        )
    return "\n".join(lines[:end] + added + lines[end:])
