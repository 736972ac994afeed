"""A policy's reward model, declared with the policy and checked against the bandit.

A fixed-confidence policy is delta-correct only for the rewards its confidence bounds
and stopping threshold assume: its GLR statistic and KL bounds are those of a family
(Garivier & Kaufmann, COLT 2016, Sec. 2-3). Every fixed-confidence factory of
:mod:`jbandits.policies.fixed_confidence` takes ``family`` ("bernoulli", the default,
or "gaussian") and ``sigma``; on rewards of another kind its runs err silently (at
delta = 0.1, uniform sampling with the Bernoulli GLR errs in about a third of its runs on
unit-variance Gaussian arms). The entry points (:func:`jbandits.simulate`,
:func:`jbandits.sweep`, :func:`jbandits.sweep_grid`, hence ``jbandits sweep``) compare
the model a policy declares (:func:`of_policy`) with what the bandit's rewards are known
to be (:class:`Rewards`, :func:`jbandits.envs.rewards.rewards_of`) and refuse a
mismatch (:func:`mismatch`), unless called with ``check_model=False``.

The rules (what a model accepts):

* ``RewardModel("bernoulli")``: rewards in ``[0, 1]``: Bernoulli arms, and any arms
  whose rewards are known to lie in ``[0, 1]`` (a replay table of such values). The
  Bernoulli KL bounds hold for them: a ``[0, 1]`` reward's moment generating function
  is at most that of the Bernoulli of the same mean (Hoeffding 1963, Sec. 4; the
  argument of KL-UCB for bounded rewards, Garivier & Cappe, COLT 2011, Sec. 2).
  Gaussian arms (unbounded) and rewards outside ``[0, 1]`` are refused.
* ``RewardModel("gaussian", sigma)``: rewards that are ``sigma``-sub-Gaussian: Gaussian
  arms of std at most ``sigma`` (a larger ``sigma`` is conservative: the bounds hold,
  the runs stop later), and rewards in a range ``[a, b]`` with ``(b - a) / 2 <= sigma``
  (Hoeffding's lemma): on Bernoulli arms ``sigma >= 1/2`` is accepted, a smaller one
  refused (a Bernoulli of mean 1/2 has std 1/2).
* A bandit whose rewards are not known (a family of one's own, a hand-built
  :class:`~jbandits.core.types.Bandit`) fits no model: pass ``check_model=False`` after
  checking it yourself.

Which policies declare: a registered policy whose factory takes ``family``
(``"bernoulli"`` or ``"gaussian"``) declares the model of that family, with ``sigma``
its number (nothing to write: the fixed-confidence policies, and a new one that takes
the same arguments); a factory may declare another with :func:`declare`. The regret
policies that assume a model (KL-UCB, DMED, Thompson sampling and Bayes-UCB with Beta
or Gaussian posteriors) declare none: a regret bound is not a confidence statement, a
mismatch shows in the regret measured, and running them on other rewards is a common
experiment. Hand-built policies (no ``spec``) declare none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from jbandits.core import registry
from jbandits.core import validate as _validate

MODELS = ("bernoulli", "gaussian")
# a float32 std of a float64 sigma (0.3 -> 0.30000001) is not a larger std
_RELATIVE = 1e-6


class RewardModel(NamedTuple):
    """The rewards a policy's bounds assume: ``family`` of :data:`MODELS`; ``sigma``
    the Gaussian std it assumes (None for "bernoulli": rewards in ``[0, 1]``)."""

    family: str
    sigma: float | None = None


class Rewards(NamedTuple):
    """What an instance's rewards are known to be: ``kind`` "bounded" (every reward in
    ``[low, high]``), "gaussian" (Gaussian arms, the largest std ``sigma``) or
    "unknown"; ``what`` describes them in messages."""

    kind: str
    what: str
    low: float | None = None
    high: float | None = None
    sigma: float | None = None


UNKNOWN = Rewards("unknown", "rewards of unknown kind")

_DECLARED: dict = {}  # factory -> model(kwargs) -> RewardModel | None


def declare(factory: Callable, model: Callable[[dict], RewardModel | None]) -> None:
    """Declare the reward model of the policies a registered ``factory`` builds:
    ``model(kwargs)`` of the keyword arguments they were built with (the numbers with
    the factory's defaults filled in) returns a :class:`RewardModel` or None. A factory
    that takes ``family`` needs none (its family and ``sigma`` declare it)."""
    if not callable(model):
        raise ValueError(f"declare: model must be callable, got {model!r}")
    _DECLARED[factory] = model


def declared(name: str, kwargs: dict) -> RewardModel | None:
    """The model of registered policy ``name`` built with ``kwargs``; None when it
    declares none, or when its ``sigma`` is not a concrete number (a tracer)."""
    factory = registry.raw_factory(name)
    if factory in _DECLARED:
        return _DECLARED[factory](dict(kwargs))
    takes = registry.parameters(factory)
    if "family" not in takes:
        return None
    full = {k: p.default for k, p in takes.items() if p.default is not p.empty}
    full.update(kwargs)
    family = full.get("family")
    if family not in MODELS:
        return None
    if family == "bernoulli":
        return RewardModel("bernoulli")
    sigma = full.get("sigma")
    if sigma is None or not _validate.is_concrete(sigma) or np.ndim(sigma) != 0:
        return None
    return RewardModel("gaussian", float(np.asarray(sigma)))


def of_policy(policy) -> RewardModel | None:
    """The model a built policy declares (None for a hand-built one)."""
    spec = getattr(policy, "spec", None)
    if spec is None:
        return None
    try:
        return declared(spec.name, dict(spec.kwargs))
    except ValueError:  # its name is no longer registered
        return None


def is_fixed_confidence(policy) -> bool:
    """A registered identification (or top-m) policy that takes a confidence
    ``delta``: it stops by itself, and a run that reaches its budget is capped."""
    spec = getattr(policy, "spec", None)
    if spec is None or policy.setting not in ("identification", "top_m"):
        return False
    try:
        return "delta" in registry.parameters(registry.raw_factory(spec.name))
    except ValueError:
        return False


def describe(model: RewardModel) -> str:
    """The model in words, as the policy's arguments say it."""
    if model.family == "bernoulli":
        return "rewards in [0, 1] (family='bernoulli')"
    return f"Gaussian rewards of std at most sigma={model.sigma:g} (family='gaussian')"


def mismatch(model: RewardModel, rewards: Rewards) -> str | None:
    """None when ``rewards`` fit ``model`` (module docstring), else the fix."""
    if rewards.kind == "unknown":
        return (
            "jbandits cannot tell whether its rewards fit (a family of your own "
            "declares no reward range)"
        )
    if model.family == "bernoulli":
        if rewards.kind == "bounded" and rewards.low >= 0.0 and rewards.high <= 1.0:
            return None
        if rewards.kind == "gaussian":
            return f"build it with family='gaussian', sigma={_round_up(rewards.sigma)}"
        width = _round_up((rewards.high - rewards.low) / 2.0)
        return (
            "rescale the rewards to [0, 1], or build it with family='gaussian', "
            f"sigma={width} (their range over 2, Hoeffding's lemma)"
        )
    need = rewards.sigma
    if rewards.kind == "bounded":
        need = (rewards.high - rewards.low) / 2.0  # Hoeffding's lemma
    if model.sigma >= need * (1.0 - _RELATIVE):
        return None
    return f"build it with sigma >= {_round_up(need)}"


def _round_up(value: float) -> str:
    """``value`` in at most 6 significant digits, never below it."""
    text = f"{value:.6g}"
    return text if float(text) >= value else f"{value:.17g}"
