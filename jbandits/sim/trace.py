"""Check a policy arm for arm against a plain-Python version of it (trace equivalence).

The harness behind the library's own trace tests, public so that a policy written
outside the package is checked the same way (guide: *Write your own policy*). A
:class:`TraceCase` pairs a policy with a *reference*: the rule written again in plain
Python, one pull at a time, straight from the paper. :func:`check_case` draws random
instances (real K arms padded to ``k_max`` with the padding at random positions, a
replay table of rewards, a budget, hyper-parameters), runs the JAX policy on all of
them under one ``jit(vmap)`` of :func:`jbandits.run` (one compilation) and the
reference on each table restricted to its real arms, and requires the same pulled-arm
sequence and the same output, exactly (in float64: ``jax.enable_x64``).

References work in *compact* numbering (arms ``0..K-1``, no masks; :class:`Compact`);
the harness maps their arms back to padded numbering. Randomised policies take their
randomness from :class:`Draws`, which hands out the keys the engine gives the JAX
policy. :func:`count_compiles` counts the batched runner's compilations (a sweep over a
number should compile one program).

Example::

    case = TraceCase("eps", "epsilon_greedy", make_policy, sample, reference)
    check_case(case, num_instances=50)   # AssertionError at the first difference
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.core.types import Policy
from jbandits.envs import REPLAY, ReplayParams
from jbandits.sim.engine import run
from jbandits.sim.replication import split_key, step_key

__all__ = [
    "Compact",
    "Draws",
    "Instance",
    "TraceCase",
    "basic_instance",
    "CompileCount",
    "check_case",
    "count_compiles",
    "random_mask",
    "random_table",
    "replay_run",
    "run_jax",
    "run_reference",
]


class Instance(NamedTuple):
    num_arms: int  # K: real arms
    arm_mask: np.ndarray  # [k_max] bool (padded numbering)
    table: np.ndarray  # [k_max, J] rewards, padded rows are 0
    budget: int
    hp: dict  # policy hyper-parameters: scalars/arrays, traced in JAX, same keys per case
    extra: dict  # reference-only information (e.g. true variances), may be empty


class Compact(NamedTuple):
    """What a reference sees: the real arms only."""

    num_arms: int
    table: np.ndarray  # [K, J]
    budget: int
    hp: dict
    extra: dict


# jitted only to avoid per-primitive dispatch (references ask for a key every pull)
_split_key = jax.jit(split_key)
_step_key = jax.jit(step_key)


class Draws:
    """The keys the engine gives the policy, for randomised references."""

    def __init__(self, key, real: np.ndarray, k_max: int):
        self._init, self._steps, _, _ = _split_key(key)
        self.real = real
        self.k_max = k_max

    def key_for_pull(self, t: int):
        """Key with which the policy chose pull number ``t`` (0-based)."""
        return self._init if t == 0 else _step_key(self._steps, t - 1)

    def per_arm(self, values) -> np.ndarray:
        """Restrict a ``[k_max]`` draw (made in padded numbering) to the real arms."""
        return np.asarray(values)[self.real]


class TraceCase(NamedTuple):
    name: str  # test id
    registry_name: str  # name in jbandits.names()
    make_policy: Callable[..., Policy]  # (**hp) -> Policy with K = k_max
    sample: Callable[[np.random.Generator, int, int], Instance]  # (rng, k_max, horizon)
    reference: Callable[[Compact, Draws], tuple[list[int], Any]]
    k_max: int = 8
    horizon: int = 48
    num_instances: int = 200


# ------------------------------------------------------------------ instance helpers
def random_mask(rng: np.random.Generator, k_max: int, num_arms: int) -> np.ndarray:
    mask = np.zeros(k_max, bool)
    mask[rng.choice(k_max, size=num_arms, replace=False)] = True
    return mask


def random_table(
    rng: np.random.Generator, mask: np.ndarray, columns: int, kind: str | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(table, means) with rows of padded arms zero. ``kind`` in bernoulli/gauss/coarse."""
    kind = kind or rng.choice(["bernoulli", "gauss", "coarse"])
    k_max = mask.size
    means = rng.uniform(0.05, 0.95, size=k_max)
    if rng.random() < 0.3:  # duplicated means: exact ties in the truth
        means[:] = rng.choice(means[:2], size=k_max)
    if kind == "bernoulli":
        table = (rng.random((k_max, columns)) < means[:, None]).astype(np.float64)
    elif kind == "coarse":  # few distinct values: many exact ties
        table = rng.integers(0, 3, size=(k_max, columns)) / 2.0
    else:
        table = means[:, None] + rng.uniform(0.1, 0.6) * rng.standard_normal(
            (k_max, columns)
        )
    table[~mask] = 0.0
    means = np.where(mask, means, 0.0)
    return table, means


def basic_instance(
    rng, k_max, horizon, hp, *, min_arms=2, min_budget=None, kind=None, extra=None
) -> Instance:
    num_arms = int(rng.integers(min_arms, k_max + 1))
    mask = random_mask(rng, k_max, num_arms)
    low = num_arms if min_budget is None else min_budget(num_arms)
    budget = int(rng.integers(low, horizon + 1))
    table, _ = random_table(rng, mask, horizon, kind)
    return Instance(num_arms, mask, table, budget, hp, extra or {})


# ------------------------------------------------------------------------- the runner
def _stack(dicts: list[dict]) -> dict:
    return {k: np.stack([np.asarray(d[k]) for d in dicts]) for k in dicts[0]}


def replay_run(case: TraceCase, hp, table, mask, budget, key, **kw):
    """``jbandits.run`` of ``case``'s policy on a replay table (arms recorded)."""
    params = ReplayParams(
        table=table, means=table.mean(-1), stds=table.std(-1), arm_mask=mask
    )
    return run(
        case.make_policy(**hp),
        REPLAY,
        params,
        key,
        budget=budget,
        horizon=case.horizon,
        record_arms=True,
        **kw,
    )


def run_jax(
    case: TraceCase, instances: list[Instance], key
) -> tuple[np.ndarray, np.ndarray]:
    tables = jnp.asarray(np.stack([i.table for i in instances]))
    masks = jnp.asarray(np.stack([i.arm_mask for i in instances]))
    budgets = jnp.asarray([i.budget for i in instances], jnp.int32)
    hps = _stack([i.hp for i in instances])
    keys = jax.vmap(lambda n: jax.random.fold_in(key, n))(jnp.arange(len(instances)))

    def one(hp, table, mask, budget, k):
        res = replay_run(case, hp, table, mask, budget, k)
        return res.arms, res.output

    # one compilation per case; it executes in milliseconds, so skip LLVM's
    # optimisation (half the compile time; no result changes: XLA:CPU never uses
    # fast-math and conftest.py rules out FMA)
    fast = {"xla_backend_optimization_level": 0}
    arms, out = jax.jit(jax.vmap(one), compiler_options=fast)(
        hps, tables, masks, budgets, keys
    )
    return np.asarray(arms), np.asarray(out)


def run_reference(
    case: TraceCase, inst: Instance, key
) -> tuple[np.ndarray, np.ndarray]:
    real = np.flatnonzero(inst.arm_mask)
    compact = Compact(inst.num_arms, inst.table[real], inst.budget, inst.hp, inst.extra)
    arms, out = case.reference(compact, Draws(key, real, case.k_max))
    arms = [int(a) for a in arms]
    if len(arms) > inst.budget:
        raise AssertionError(f"reference pulled {len(arms)} > budget {inst.budget}")
    padded = np.full(case.horizon, -1, np.int64)
    padded[: len(arms)] = real[arms] if arms else []
    out = np.asarray(out)
    if out.ndim == 0:
        mapped = np.asarray(real[int(out)] if out >= 0 else -1)
    else:
        mapped = np.zeros(case.k_max, bool)
        mapped[real] = out.astype(bool)
    return padded, mapped


def check_case(case: TraceCase, seed: int = 0, num_instances: int | None = None) -> int:
    """Run the trace comparison; raise AssertionError on the first mismatch."""
    rng = np.random.default_rng(seed)
    n = num_instances or case.num_instances
    instances = [case.sample(rng, case.k_max, case.horizon) for _ in range(n)]
    key = jax.random.key(seed)
    with jax.enable_x64(True):
        jax_arms, jax_out = run_jax(case, instances, key)
        for idx, inst in enumerate(instances):
            ref_arms, ref_out = run_reference(case, inst, jax.random.fold_in(key, idx))
            if not np.array_equal(jax_arms[idx], ref_arms):
                first = int(np.argmax(jax_arms[idx] != ref_arms))
                raise AssertionError(
                    f"{case.name}: instance {idx} (K={inst.num_arms}, T={inst.budget}, "
                    f"hp={inst.hp}) arms differ first at step {first}:\n"
                    f" jax {jax_arms[idx][: first + 5].tolist()}\n"
                    f" ref {ref_arms[: first + 5].tolist()}"
                )
            if not np.array_equal(
                np.asarray(jax_out[idx]).astype(ref_out.dtype), ref_out
            ):
                raise AssertionError(
                    f"{case.name}: instance {idx} output differs: jax {jax_out[idx]} "
                    f"ref {ref_out}"
                )
    return n


# ------------------------------------------------------------------ compile counts
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


class CompileCount:
    """The counter :func:`count_compiles` yields: ``.count`` compilations so far."""

    def __init__(self, name: str | None):
        self.function = name
        self.count = 0

    def __call__(self, event, duration, **kw):
        del duration
        name = str(kw.get("fun_name", ""))
        if event == _COMPILE_EVENT and (
            self.function is None or f"jit({self.function})" in name
        ):
            self.count += 1


@contextlib.contextmanager
def count_compiles(name: str | None = "jbandits_lanes"):
    """Count XLA compilations inside the block (JAX's compile events).

    Yields a :class:`CompileCount` whose ``.count`` is the number of compilations of
    the jitted function ``name`` (default: the batched runner's program,
    ``jbandits_lanes``; None counts every program). A program found in the runner's
    cache is not compiled again and not counted; one loaded from JAX's persistent
    compilation cache is counted.

    Example::

        with count_compiles() as compiles:
            for eps in (0.0, 0.1):
                policy = jbandits.make("epsilon_greedy", num_arms=4, epsilon=eps)
                jbandits.simulate(policy, bandit, params, key, budget=100, num_reps=8)
        compiles.count   # 1
    """
    counter = CompileCount(name)
    jax.monitoring.register_event_duration_secs_listener(counter)
    try:
        yield counter
    finally:
        jax.monitoring.unregister_event_duration_listener(counter)
