"""The spellings of :func:`~jbandits.tuning.tune` and
:func:`~jbandits.tuning.tune_budgets` removed in 0.2.0, rejected with their new form.

``tune(policy, bandit, instance, space=..., budget=..., simulations=..., sigma=...,
evaluate=..., ...)`` is now ``tune(Objective(policy, bandit, instance, budget=...),
space, search=Search(simulations=...), estimator=ES(sigma=...),
report=Report(evaluate=...))``; ``estimator="pg"`` is ``estimator=PG()``; the
oldest form ``tune(loss, theta0, optimizer, num_steps=...)`` is
:func:`~jbandits.tuning.minimize`. A call in an old spelling raises TypeError whose
message spells the same call in the new form (values shown as ``...``); nothing is
translated. A keyword that no form knows raises Python's usual TypeError.
"""

from __future__ import annotations

import dataclasses
import functools

import optax

from jbandits.tuning.objective import Objective
from jbandits.tuning.options import ES, PG, Report, Search

_OBJECTIVE = ("budget", "loss", "metric", "fixed", "permute")
_GROUPS = {  # where an old keyword goes now: a field of one of these
    "search": Search,
    "es": ES,
    "pg": PG,
    "report": Report,
}
_CALL = ("objective", "policy", "bandit", "instance", "space", "search", "estimator")
_CALL += ("report", "key")
_NEW = ("objective", "space", "search", "estimator", "report", "key")
_REMOVED = "was removed in 0.2.0: use"


def rejects_old_tune_forms(new_tune):
    """``new_tune``, which raises TypeError (naming the new form) for an old one."""

    @functools.wraps(new_tune)
    def tune(*args, **kwargs):
        if _is_minimize(args, kwargs):
            raise TypeError(
                f"tune(loss, theta0, optimizer, ...) {_REMOVED} "
                "jbandits.tuning.minimize(loss, theta0, optimizer, num_steps=..., "
                "key=...)"
            )
        if not _is_new(args, kwargs):
            raise TypeError(_message("tune", args, kwargs))
        return new_tune(*args, **kwargs)

    return tune


def rejects_old_tune_budgets_forms(new_tune_budgets):
    """``new_tune_budgets``, which raises TypeError (naming the new form) for the old
    one."""

    @functools.wraps(new_tune_budgets)
    def tune_budgets(*args, budgets, **kwargs):
        if "budget" in kwargs:
            raise TypeError("tune_budgets() takes budgets=[...], not budget=...")
        if not _is_new(args, kwargs):
            raise TypeError(_message("tune_budgets", args, kwargs, budgets=True))
        return new_tune_budgets(*args, budgets=budgets, **kwargs)

    return tune_budgets


def _is_new(args, kwargs) -> bool:
    first = args[0] if args else kwargs.get("objective")
    return (
        isinstance(first, Objective)
        and len(args) <= 2
        and set(kwargs) <= set(_NEW)
        and kwargs.get("estimator") not in ("es", "pg")
    )


def _is_minimize(args, kwargs) -> bool:
    third = args[2] if len(args) > 2 else kwargs.get("instance")
    return isinstance(third, optax.GradientTransformation)


def _split(name: str, kwargs: dict) -> dict:
    """The keywords by where they go now: ``"call"`` (the new call's own),
    ``"objective"`` (the Objective's) or a group of :data:`_GROUPS`."""
    parts: dict = {"call": {}, "objective": {}, **{g: {} for g in _GROUPS}}
    for k, v in kwargs.items():
        if k in _CALL:
            parts["call"][k] = v
        elif k in _OBJECTIVE:
            parts["objective"][k] = v
        else:
            group = [g for g, cls in _GROUPS.items() if k in _fields(cls)]
            if not group:
                raise TypeError(f"{name}() got an unexpected keyword argument {k!r}")
            parts[group[0]][k] = v
    return parts


def _fields(cls) -> tuple:
    return tuple(f.name for f in dataclasses.fields(cls))


def _kw(names) -> str:
    return ", ".join(f"{k}=..." for k in names)


def _message(name, args, kwargs, *, budgets: bool = False) -> str:
    """``"NAME(old form) was removed in 0.2.0: use NAME(new form)"`` (values as
    ``...``)."""
    parts = _split(name, kwargs)
    call = parts["call"]
    objective = isinstance(args[0] if args else call.get("objective"), Objective)
    if objective and parts["objective"]:
        raise TypeError(
            f"{name}(objective, ...) got {sorted(parts['objective'])}: they belong "
            "to the Objective(policy, bandit, instance, budget=..., ...)"
        )
    old = ["objective" if objective else "policy, bandit, instance"]
    old += ["space"] if objective and len(args) > 1 else []
    old += ["budgets=..."] if budgets else []
    skip = ("objective", "policy", "bandit", "instance")
    old += [f"{k}=..." for k in kwargs if k not in skip]
    names = ["budget", *(k for k in parts["objective"] if k != "budget")]
    head = f"Objective(policy, bandit, instance, {_kw(names)})"
    new = ["objective" if objective else head, "space"]
    new += ["budgets=..."] if budgets else []
    new += _group("search", "Search", parts["search"], call)
    estimator = call.get("estimator")
    cls, other = (
        ("pg", "es") if estimator == "pg" or isinstance(estimator, PG) else ("es", "pg")
    )
    if isinstance(estimator, str):
        new.append(f"estimator={cls.upper()}({_kw(parts[cls])})")
    else:
        new += _group("estimator", cls.upper(), parts[cls], call)
    new += _group("report", "Report", parts["report"], call)
    new += ["key=..."] if "key" in call else []
    note = (
        f" ({', '.join(parts[other])} had no effect with {cls.upper()}: drop it)"
        if parts[other]
        else ""
    )
    return f"{name}({', '.join(old)}) {_REMOVED} {name}({', '.join(new)}){note}"


def _group(group: str, cls: str, keys: dict, call: dict) -> list:
    """How the new form spells a group: ``[]``, ``search=...`` (the caller's own),
    ``search=Search(k=...)``, or ``search=dataclasses.replace(search, k=...)``."""
    if not keys:
        return [f"{group}=..."] if group in call else []
    if group in call:
        return [f"{group}=dataclasses.replace({group}, {_kw(keys)})"]
    return [f"{group}={cls}({_kw(keys)})"]
