"""The tuning objective: a policy's mean loss at ``theta``, evaluated by :func:`jbandits.sweep`.

:class:`Objective` turns (policy, bandit, instance or prior, budget, loss) into one
host call, :meth:`Objective.losses`, that evaluates a batch of ``P`` parameter points
on ``R`` replications each, with *common random numbers*: point ``p`` and point ``q``
see the same replication keys (and, under a prior, the same sampled instances), so
differences between points carry little of the bandit noise.

Every evaluation is one :func:`jbandits.sweep` over the ``P`` points with a fixed chunk
of lanes (``batch_size``, the work padded to at least one chunk: ``min_lanes``): the
program is compiled once per (policy, bandit, K, options) and cached by the runner;
new points, new keys, new starting values and new budgets reuse it.
"""

from __future__ import annotations

import copy
import warnings
import weakref
from collections.abc import Callable
from typing import Any

import jax
import numpy as np

from jbandits.core import prng, registry
from jbandits.core.types import Bandit, Policy
from jbandits.sim import checks
from jbandits.sim import entry as _entry
from jbandits.sim.runner.results import CappedRunsWarning
from jbandits.sim.sweep import sweep

# objective name -> what it reads; metric names need the matching ``metric``
LOSSES = ("regret", "misclassified", "error", "simple_regret", "reward")
_SAMPLERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _policy_parts(policy) -> tuple[Any, dict]:
    """(name or factory, keyword arguments fixed by the caller)."""
    if isinstance(policy, Policy):
        if policy.spec is None:
            raise ValueError(
                "a hand-built Policy has no numbers to tune; pass a registered name "
                "(e.g. 'lsa') or a factory (**theta) -> Policy"
            )
        return policy.spec.name, dict(policy.spec.kwargs)
    if isinstance(policy, str):
        registry.raw_factory(policy)  # unknown names raise with the known ones
        return policy, {}
    if callable(policy):
        return policy, {}
    raise ValueError(
        "policy must be a registered name, a factory (**theta) -> Policy or a Policy "
        f"built by jbandits.make, got {type(policy).__name__}"
    )


class Objective:
    """Mean loss of ``policy(**fixed, **theta)`` on an instance or a prior of instances.

    Args:
      policy: a registered name (``"lsa"``), a Policy from :func:`jbandits.make`
        (its arguments become ``fixed``; the tuned ones are replaced), or a factory
        ``(**kwargs) -> Policy`` traced inside the compiled program.
      bandit: the reward family (e.g. ``jbandits.envs.BERNOULLI`` or the first item of
        ``jbandits.envs.bernoulli(means)``).
      instance: an instance pytree (``params`` from :mod:`jbandits.envs`), or a
        prior: a function ``key -> params`` of one instance, traced (vmapped over
        replications) so each replication draws its own instance, e.g.
        ``lambda k: envs.bernoulli(jax.random.uniform(k, (K,), minval=.1,
        maxval=.9))[1]``.
      budget: the run's budget T (pulls).
      loss: ``"regret"`` (cumulative pseudo-regret), a metric name
        (``"misclassified"``, ``"error"``, ``"simple_regret"``; needs ``metric``),
        ``"reward"`` (maximised: its negative is minimised) or a function
        ``RunResult -> [...]`` of per-replication losses (leaves ``[cells, reps]``).
      metric: a :mod:`jbandits.analysis.metrics` metric for metric losses.
      fixed: keyword arguments of the policy that are not tuned (``threshold``,
        ``horizon``, ...). ``num_arms`` and, for fixed-budget policies, ``budget``
        are filled in.
      permute: random arm relabelling per replication (default True).
      relaxed: internal (the policy-gradient estimator's softmax policy source).

    Raises:
      ValueError: an unknown policy name or loss, a metric loss without ``metric``,
        or a bad budget / instance.
    """

    def __init__(
        self,
        policy,
        bandit: Bandit,
        instance,
        *,
        budget: int,
        loss: Any = "regret",
        metric: Any = None,
        fixed: dict | None = None,
        permute: bool = True,
        num_arms: int | None = None,
    ):
        if not isinstance(bandit, Bandit):
            raise ValueError(f"bandit must be a jbandits Bandit, got {bandit!r}")
        self.policy, own = _policy_parts(policy)
        if fixed is not None and not isinstance(fixed, dict):
            raise ValueError(
                f"fixed must be a dict of keyword arguments, got {fixed!r}"
            )
        self.given = dict(fixed or {})  # the caller's fixed (not a Policy's own)
        self.fixed = {**own, **self.given}
        self.bandit = bandit
        self.prior: Callable | None = None
        if callable(instance) and not hasattr(instance, "arm_mask"):
            self.prior = instance
            probe = jax.eval_shape(instance, jax.random.key(0))
            if not hasattr(probe, "arm_mask"):
                raise ValueError("a prior must return an instance pytree with arm_mask")
            self.num_arms = int(probe.arm_mask.shape[-1])
            if instance not in _SAMPLERS:  # one compiled sampler per prior
                _SAMPLERS[instance] = jax.jit(jax.vmap(instance))
            self._sampler = _SAMPLERS[instance]
        else:
            mask = checks.mask(instance)
            if mask.ndim != 1:
                raise ValueError(
                    "give one instance ([K]); for many instances give a prior "
                    "key -> instance"
                )
            self.num_arms = int(mask.shape[-1])
            self.instance = jax.tree_util.tree_map(np.asarray, instance)
        if num_arms is not None and num_arms != self.num_arms:
            raise ValueError(
                f"num_arms={num_arms} but the instance has {self.num_arms}"
            )
        self.budget = int(checks.budget_array("budget", budget))
        checks.metric(metric)
        if isinstance(loss, str):
            if loss not in LOSSES:
                raise ValueError(
                    f"unknown loss {loss!r}; known: {LOSSES} or a function"
                )
            if loss not in ("regret", "reward") and metric is None:
                raise ValueError(f"loss {loss!r} is a metric: pass metric=...")
        elif not callable(loss):
            raise ValueError(
                f"loss must be a name in {LOSSES} or a function, got {loss!r}"
            )
        if isinstance(loss, str) and loss not in ("regret", "reward"):
            outputs = _metric_outputs(metric, self.num_arms)
            if outputs is not None and loss not in outputs:
                raise ValueError(
                    f"loss {loss!r} is not an output of the metric {metric!r} (it "
                    f"gives {sorted(outputs)}); simple_regret is offered by the "
                    "identification and top-m metrics"
                )
        self.loss, self.metric, self.permute = loss, metric, permute
        # the program's policy source when it is not ``policy`` itself: the tuner's
        # relaxed (softmax) policies (:func:`jbandits.tuning.relaxed.source`)
        self.source = None

    def with_budget(self, budget: int) -> Objective:
        """The same objective at another budget (the program is shared: the budget
        is traced)."""
        out = copy.copy(self)
        out.budget = int(checks.budget_array("budget", budget))
        return out

    # ------------------------------------------------------------------ internals
    def numeric_fixed(self) -> dict:
        if isinstance(self.policy, str):
            _, numeric = registry.split_kwargs(self.fixed, self.policy)
            return numeric
        return dict(self.fixed)

    def _takes_budget(self) -> bool:
        if not isinstance(self.policy, str):
            return False
        return "budget" in _entry.accepted(self.policy)

    def check_names(self, names) -> None:
        """Tuned names must be numeric keyword arguments of the policy (registered
        ones) that the run does not set otherwise: not also in ``fixed``, not a
        static (structural) argument, not the ``budget`` the objective fills in."""
        both = [n for n in names if n in self.given]
        if both:
            raise ValueError(
                f"{', '.join(both)} is both in fixed and in the space: tune it or fix "
                "it, not both (remove it from one of them)"
            )
        if not isinstance(self.policy, str):
            return
        accepted = _entry.accepted(self.policy)
        unknown = [n for n in names if n not in accepted or n == "num_arms"]
        if unknown:
            known = [n for n in accepted if n != "num_arms"]
            raise ValueError(
                f"{self.policy} has no tunable parameter {unknown}; its arguments: "
                f"{known}"
            )
        for name in names:
            if name == "budget" and self._takes_budget():
                raise ValueError(
                    f"budget cannot be tuned: {self.policy} is run with the "
                    f"objective's budget={self.budget} (every replication's pull "
                    "budget), so the loss is the same at every point of the space; "
                    "to tune the policy for several budgets use tune_budgets"
                )
            if _structural(self.policy, name):
                raise ValueError(
                    f"{name} is a static (structural) argument of {self.policy} and "
                    "cannot be tuned (it changes the compiled program, not a "
                    f"number in it); fix it (fixed={{{name!r}: ...}}) and tune one "
                    "setting per call"
                )

    def instances(self, key, num: int):
        """``num`` instances (leaves ``[num, ...]``) drawn from the prior with ``key``."""
        keys = jax.random.split(key, num)
        return jax.tree_util.tree_map(np.asarray, self._sampler(keys))

    # ------------------------------------------------------------------ evaluation
    def run(
        self,
        theta: dict,
        key,
        num_reps: int,
        *,
        chunk: int,
        budget: int | None = None,
        return_state: bool = False,
    ):
        """RunResult with leaves ``[P, R, ...]`` for ``theta`` with ``[P]`` leaves.

        Every point uses the same replication keys (and the same prior draws).
        ``chunk`` lanes per compiled call: the cells are padded so that every call
        has this shape, and a program is compiled once per shape.
        """
        budget = self.budget if budget is None else int(budget)
        leaves = jax.tree_util.tree_leaves(theta)
        num_points = int(np.shape(leaves[0])[0]) if leaves else 1
        key = jax.random.key(0) if key is None else key
        grid = {k: np.asarray(v) for k, v in theta.items()}
        if self._takes_budget():  # a fixed-budget policy's own budget argument
            grid["budget"] = np.full(num_points, budget)
        if self.source is None:  # the policy (a name's static arguments from fixed)
            make, fixed = self.policy, self.fixed
        else:
            make, fixed = self.source, self.numeric_fixed()
        if self.prior is None:  # every point the replications fold_in(key, r)
            params, reps, run_key = self.instance, num_reps, key
        else:  # one instance per replication, the same draws for every point:
            k_inst, run_key = jax.random.split(key)  # fold_in(fold_in(k_run, n), 0)
            params, reps = self.instances(k_inst, num_reps), 1
        with warnings.catch_warnings():  # capped runs count at the budget here
            warnings.simplefilter("ignore", CappedRunsWarning)
            res = sweep(
                make, self.bandit, params, run_key, grid=grid, num_reps=reps,
                horizon=budget, budget=budget, metric=self.metric,
                permute=self.permute, progress=False, batch_size=chunk,
                check_model=False, fixed=fixed or None, return_state=return_state,
                min_lanes=chunk,
            )  # fmt: skip
        if self.prior is not None:  # [P, R, 1, ...] -> [P, R, ...]
            res = jax.tree_util.tree_map(
                lambda x: x.reshape(num_points, num_reps, *x.shape[3:]), res
            )
        return res

    def per_rep(self, res) -> np.ndarray:
        """``[P, R]`` losses of a RunResult from :meth:`run`."""
        if callable(self.loss):
            out = np.asarray(self.loss(res), np.float64)
        elif self.loss == "regret":
            out = np.asarray(res.regret[..., -1], np.float64)
        elif self.loss == "reward":
            out = -np.asarray(res.reward[..., -1], np.float64)
        else:
            out = np.asarray(res.metrics[self.loss][..., -1], np.float64)
        return out

    def losses(
        self, theta: dict, key, num_reps: int, *, chunk: int, **kw
    ) -> np.ndarray:
        """``[P, R]`` per-replication losses of the points ``theta`` (``[P]`` leaves)."""
        return self.per_rep(self.run(theta, key, num_reps, chunk=chunk, **kw))


def _metric_outputs(metric, num_arms: int) -> set | None:
    """The names a metric returns, traced on an arm index ``[]`` or a labelling
    ``[K]`` output (the two forms of :mod:`jbandits.analysis.metrics`); None when it
    takes neither (a user's metric: its names are then read at the first run)."""
    means = jax.ShapeDtypeStruct((num_arms,), np.float32)
    mask = jax.ShapeDtypeStruct((num_arms,), np.bool_)
    for output in (
        jax.ShapeDtypeStruct((), np.int32),
        jax.ShapeDtypeStruct((num_arms,), np.bool_),
    ):
        try:
            return set(jax.eval_shape(metric, output, means, mask))
        except Exception:  # noqa: BLE001 - the other output form, or not traceable
            continue
    return None


def _structural(policy: str, name: str) -> bool:
    """Whether keyword argument ``name`` of registered ``policy`` is static: declared
    so, or not a number by its annotation (``str``, ``bool``, an ``Execution``, a
    schedule ...) or its default (a string or a bool)."""
    import inspect

    entry = registry._ENTRIES.get(policy)
    if entry is not None and name in entry.static:
        return True
    param = inspect.signature(registry.raw_factory(policy)).parameters.get(name)
    if param is None:
        return False
    if isinstance(param.default, (str, bool)):
        return True
    ann = param.annotation
    if ann is inspect.Parameter.empty:
        return False
    text = ann if isinstance(ann, str) else getattr(ann, "__name__", str(ann))
    return not any(word in text for word in ("ArrayLike", "float", "Array"))


def as_key(key) -> jax.Array:
    """A typed key from an int seed (tuning's convenience) or any key form the
    other entry points take (:func:`jbandits.core.prng.one_key`, whose one message
    refuses the rest, the rbg implementation included)."""
    if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return jax.random.key(int(key))
    return prng.one_key(key, forms=f"an int seed or {prng.KEY_FORMS}")
