"""The spellings of :func:`~jbandits.tuning.tune` and
:func:`~jbandits.tuning.tune_budgets` before the option groups, translated.

``tune(policy, bandit, instance, space=..., budget=..., simulations=..., sigma=...,
evaluate=..., ...)`` is ``tune(Objective(policy, bandit, instance, budget=...),
space, search=Search(simulations=...), estimator=ES(sigma=...),
report=Report(evaluate=...))``; ``estimator="pg"`` is ``estimator=PG()``; the
oldest form ``tune(loss, theta0, optimizer, num_steps=...)`` is
:func:`~jbandits.tuning.minimize`. Each old call still runs, the same numbers for
the same inputs, and emits one DeprecationWarning that names its new form. A keyword
that no form knows raises TypeError.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import optax

from jbandits.tuning import estimators
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
_MINIMIZE = ("num_steps", "key", "sigma", "num_pairs", "verbose")


def old_tune_forms(new_tune):
    """``new_tune`` that also accepts the old spellings (with a warning)."""

    @functools.wraps(new_tune)
    def tune(*args, **kwargs):
        if _is_minimize(args, kwargs):
            _warn(
                "tune(loss, theta0, optimizer, ...) is deprecated: use "
                "jbandits.tuning.minimize(loss, theta0, optimizer, ...)"
            )
            return _minimize(args, kwargs)
        if _is_new(args, kwargs):
            return new_tune(*args, **kwargs)
        parts = _split("tune", kwargs)
        _warn(_message("tune", args, kwargs, parts))
        args, kwargs = _translate("tune", args, parts)
        return new_tune(*args, **kwargs)

    return tune


def old_tune_budgets_forms(new_tune_budgets):
    """``new_tune_budgets`` that also accepts the old spelling (with a warning)."""

    @functools.wraps(new_tune_budgets)
    def tune_budgets(*args, budgets, **kwargs):
        if _is_new(args, kwargs):
            return new_tune_budgets(*args, budgets=budgets, **kwargs)
        if "budget" in kwargs:
            raise TypeError("tune_budgets() takes budgets=[...], not budget=...")
        parts = _split("tune_budgets", kwargs)
        _warn(_message("tune_budgets", args, kwargs, parts, budgets=True))
        budgets = list(budgets)
        if not budgets:
            return {}
        if not isinstance(args[0] if args else kwargs.get("objective"), Objective):
            parts["objective"]["budget"] = budgets[0]  # replaced by each budget
        args, kwargs = _translate("tune_budgets", args, parts)
        return new_tune_budgets(*args, budgets=budgets, **kwargs)

    return tune_budgets


def _warn(message: str) -> None:
    warnings.warn(message, DeprecationWarning, stacklevel=3)


def _is_new(args, kwargs) -> bool:
    first = args[0] if args else kwargs.get("objective")
    return (
        isinstance(first, Objective)
        and len(args) <= 2
        and set(kwargs) <= set(_NEW)
        and not isinstance(kwargs.get("estimator"), str)
    )


def _is_minimize(args, kwargs) -> bool:
    third = args[2] if len(args) > 2 else kwargs.get("instance")
    return isinstance(third, optax.GradientTransformation)


def _minimize(args, kwargs):
    """``tune(loss, theta0, optimizer, ...)``: :func:`estimators.minimize` with the
    old defaults (``sigma`` 0.1, ``num_pairs`` 8)."""
    kwargs = dict(kwargs)
    names = ("policy", "bandit", "instance")  # where the old signature put them
    first = [*args[:3], *(kwargs.pop(n) for n in names[len(args) :] if n in kwargs)]
    unknown = sorted(set(kwargs) - set(_MINIMIZE))
    if unknown:
        raise TypeError(f"tune(loss, theta0, optimizer, ...) takes no {unknown}")
    sigma, num_pairs = kwargs.pop("sigma", None), kwargs.pop("num_pairs", None)
    return estimators.minimize(
        *first,
        *args[3:],
        key=kwargs.pop("key", 0),
        sigma=0.1 if sigma is None else sigma,
        num_pairs=num_pairs or 8,
        verbose=kwargs.pop("verbose", False),
        **kwargs,
    )


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


def _message(name, args, kwargs, parts, *, budgets: bool = False) -> str:
    """``"NAME(old form) is deprecated: use NAME(new form)"`` (values as ``...``)."""
    call = parts["call"]
    objective = isinstance(args[0] if args else call.get("objective"), Objective)
    old = ["objective" if objective else "policy, bandit, instance"]
    old += ["space"] if objective and len(args) > 1 else []
    old += ["budgets=..."] if budgets else []
    skip = ("objective", "policy", "bandit", "instance")
    old += [f"{k}=..." for k in kwargs if k not in skip]
    names = [*(["budget"] if budgets else []), *parts["objective"]]
    head = ", ".join(["policy, bandit, instance", *([_kw(names)] if names else [])])
    new = ["objective" if objective else f"Objective({head})", "space"]
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
    return f"{name}({', '.join(old)}) is deprecated: use {name}({', '.join(new)}){note}"


def _group(group: str, cls: str, keys: dict, call: dict) -> list:
    """How the new form spells a group: ``[]``, ``search=...`` (the caller's own),
    ``search=Search(k=...)``, or ``search=dataclasses.replace(search, k=...)``."""
    if not keys:
        return [f"{group}=..."] if group in call else []
    if group in call:
        return [f"{group}=dataclasses.replace({group}, {_kw(keys)})"]
    return [f"{group}={cls}({_kw(keys)})"]


def _translate(name: str, args, parts) -> tuple[tuple, dict]:
    """The grouped call's ``(args, kwargs)`` for an old call."""
    call, rest = parts["call"], list(args[1:])
    first = args[0] if args else call.get("objective", call.get("policy"))
    if isinstance(first, Objective):
        if parts["objective"]:
            raise TypeError(f"{sorted(parts['objective'])} belong to the Objective")
        objective = first
    else:
        bandit = rest.pop(0) if rest else call.get("bandit")
        instance = rest.pop(0) if rest else call.get("instance")
        if rest:
            raise TypeError(f"{name}() got unexpected positional arguments {rest}")
        if "space" not in call or "budget" not in parts["objective"]:
            raise ValueError(f"{name} needs space={{...}} and budget=...")
        objective = Objective(first, bandit, instance, **parts["objective"])
    space = rest.pop(0) if rest else call.get("space")
    if rest or space is None:
        raise TypeError(f"{name}(objective, space, ...) takes one space")
    groups = {}
    for group, cls in (("search", Search), ("report", Report)):
        groups[group] = call.get(group, cls())
        if parts[group]:
            groups[group] = dataclasses.replace(groups[group], **parts[group])
    groups["estimator"] = _estimator(call.get("estimator", ES()), parts)
    return (objective, space), {**groups, "key": call.get("key", 0)}


def _estimator(estimator, parts):
    """``estimator="es" / "pg"`` and ``sigma=``, ``temperature=``... as ES / PG."""
    if isinstance(estimator, str):
        if estimator not in ("es", "pg"):
            raise ValueError(
                "estimator must be ES(...) or PG(...) ('es' or 'pg' in the old "
                f"spelling), got {estimator!r}"
            )
        estimator = PG() if estimator == "pg" else ES()
    ES(**parts["es"])  # sigma is checked, as before, even where PG ignores it
    own = parts["pg"] if isinstance(estimator, PG) else parts["es"]
    if own and isinstance(estimator, (ES, PG)):
        estimator = dataclasses.replace(estimator, **own)
    return estimator
