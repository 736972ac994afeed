"""The engine: one replication as a ``lax.scan``; ``vmap`` adds every batch axis.

:func:`run` plays one replication of a policy on one instance. The budget is traced:
the scan has a static length ``horizon`` and steps past ``budget`` are no-ops, so a
sweep over budgets compiles once. Anytime metrics are read at ``num_checkpoints``
evenly spaced steps by a nested scan (outer over checkpoints, inner over the steps
between them), so memory is O(K + C) per replication, independent of the horizon.

:func:`simulate` vmaps :func:`run` over replications (and instances when the params
have a leading axis), shards replications over ``jax.devices()``, caches the compiled
function and prints progress for long runs. :func:`sweep` builds the policy *inside*
the vmapped function from a grid of traced hyper-parameters (optax closure pattern), so
a sweep over hyper-parameters x budgets x padded instances is one compilation.

Randomness of one replication: ``key`` splits into (init, steps, rewards, permutation).
The policy's step after pull ``t`` (0-based) gets ``fold_in(steps_key, t)``; the
``j``-th reward of arm ``i`` comes from the reward stack of the rewards key, shared by
every policy run with the same key (common random numbers).
"""

from __future__ import annotations

import math
import sys
import time
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from jbandits import _validate
from jbandits.types import Array, Bandit, Key, Policy

UNROLL = 1  # inner-scan unrolling (measured in benchmarks/throughput.py)


class RunResult(NamedTuple):
    times: Array  # [C] int32: step count at each checkpoint (capped at the budget)
    metrics: dict  # name -> [C] metric of the output at each checkpoint
    regret: Array  # [C] cumulative pseudo-regret sum_t (mu* - mu_{A_t})
    reward: Array  # [C] cumulative realised reward
    pulls: Array  # [K] final pull counts (bandit numbering)
    num_pulls: Array  # [] pulls made (the stopping time of fixed-confidence policies)
    stopped: Array  # [] bool: the policy went idle (stopped) by itself
    output: Array  # final output of the policy (bandit numbering)
    arms: Any  # [T] pulled arm per step (-1: idle / past budget), or None
    state: Any = (
        None  # final policy state (policy numbering) if return_state, else None
    )
    perm: Any = None  # [K] policy arm a is bandit arm perm[a] (if return_state)


def split_key(key: Key) -> tuple[Key, Key, Key, Key]:
    """(init, steps, rewards, permutation) keys of one replication."""
    k = jax.random.split(key, 4)
    return k[0], k[1], k[2], k[3]


def step_key(steps_key: Key, t: Any) -> Key:
    """Key passed to ``policy.step`` after pull ``t`` (0-based)."""
    return jax.random.fold_in(steps_key, t)


def _to_bandit_numbering(out: Array, perm: Array) -> Array:
    if out.ndim == 0:
        return jnp.where(out >= 0, perm[jnp.maximum(out, 0)], out).astype(out.dtype)
    return jnp.zeros_like(out).at[perm].set(out)


def run(
    policy: Policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    budget: Any,
    horizon: int,
    num_checkpoints: int = 1,
    metric: Any = None,
    record_arms: bool = False,
    permute: bool = False,
    return_state: bool = False,
) -> RunResult:
    """One replication of ``policy`` on one instance; pure and jittable.

    Args:
      policy: a :class:`~jbandits.types.Policy`.
      bandit, params: the reward family and one instance (``params.arm_mask`` [K]).
      key: the replication key.
      budget: number of pulls (may be traced); must be <= ``horizon``.
      horizon: static scan length (rounded up to a multiple of ``num_checkpoints``).
      num_checkpoints: static number C of evenly spaced metric read-outs.
      metric: a callable ``(output, means, arm_mask) -> dict`` (see
        :mod:`jbandits.metrics`), or None for regret only.
      record_arms: also return the pulled arm of every step (small horizons only).
      permute: relabel the arms by a random permutation per replication (spec §1.6),
        so that "first" tie-breaking is unbiased with respect to arm identity.
      return_state: also return the final policy state and the permutation (for
        diagnostics such as EUCBV's active set).

    Returns:
      A :class:`RunResult`.
    """
    horizon = _validate.static_int("horizon", horizon, minimum=1)
    num_checkpoints = _validate.static_int(
        "num_checkpoints", num_checkpoints, minimum=1
    )
    inner = math.ceil(horizon / num_checkpoints)
    mask = params.arm_mask
    num_arms = mask.shape[-1]
    key_init, key_steps, key_env, key_perm = split_key(key)
    if permute:
        perm = jax.random.permutation(key_perm, num_arms).astype(jnp.int32)
    else:
        perm = jnp.arange(num_arms, dtype=jnp.int32)
    means = bandit.means(params)
    gaps = jnp.max(jnp.where(mask, means, -jnp.inf)) - means
    budget = jnp.asarray(budget, jnp.int32)
    ftype = jnp.result_type(float)

    def one_step(carry, _):
        state, counts, t, regret, total = carry
        live = (t < budget) & (state.arm >= 0)
        arm = perm[jnp.maximum(state.arm, 0)]
        reward = bandit.sample(params, key_env, arm, counts[arm])
        new = policy.step(state, step_key(key_steps, t), reward)
        state = jax.tree_util.tree_map(lambda n, o: jnp.where(live, n, o), new, state)
        counts = counts.at[arm].add(live.astype(jnp.int32))
        regret = regret + jnp.where(live, gaps[arm], 0.0)
        total = total + jnp.where(live, reward, 0.0)
        ys = jnp.where(live, arm, -1).astype(jnp.int32) if record_arms else None
        return (state, counts, t + 1, regret, total), ys

    def block(carry, _):
        carry, arms = jax.lax.scan(one_step, carry, None, length=inner, unroll=UNROLL)
        out = _to_bandit_numbering(policy.output(carry[0]), perm)
        values = metric(out, means, mask) if metric is not None else {}
        return carry, (values, carry[3], carry[4], arms)

    state0 = policy.init(key_init, mask[perm])
    carry0 = (
        state0,
        jnp.zeros((num_arms,), jnp.int32),
        jnp.zeros((), jnp.int32),
        jnp.zeros((), ftype),
        jnp.zeros((), ftype),
    )
    carry, (values, regret, total, arms) = jax.lax.scan(
        block, carry0, None, length=num_checkpoints
    )
    state, counts = carry[0], carry[1]
    times = jnp.minimum(jnp.arange(1, num_checkpoints + 1) * inner, budget)
    return RunResult(
        times=times.astype(jnp.int32),
        metrics=values,
        regret=regret,
        reward=total,
        pulls=counts,
        num_pulls=jnp.sum(counts),
        stopped=state.arm < 0,
        output=_to_bandit_numbering(policy.output(state), perm),
        arms=None if arms is None else arms.reshape(-1)[:horizon],
        state=state if return_state else None,
        perm=perm if return_state else None,
    )


# ------------------------------------------------------------------ batched front-ends
_CACHE: dict = {}


def _cached(key, build):
    fn = _CACHE.get(key)
    if fn is None:
        fn = _CACHE[key] = build()
    return fn


def _shard(keys: Array) -> Array:
    devices = jax.devices()
    if len(devices) < 2 or keys.shape[0] % len(devices):
        return keys
    mesh = jax.sharding.Mesh(np.array(devices), ("reps",))
    spec = jax.sharding.PartitionSpec("reps")
    return jax.device_put(keys, jax.sharding.NamedSharding(mesh, spec))


def _default_horizon(budget) -> int:
    b = _validate.concrete_int("budget", np.max(np.asarray(jax.device_get(budget))))
    if b is None:
        raise ValueError("horizon must be given when budget is traced")
    return b


def _check_budget(bandit: Bandit, params, budget, horizon: int) -> None:
    bandit.check(params, budget)
    if _validate.is_concrete(budget):
        b = np.asarray(jax.device_get(budget))
        if np.any(b > horizon):
            raise ValueError(f"budget {budget} exceeds horizon {horizon}")
        num_real = np.asarray(jax.device_get(params.arm_mask)).sum(axis=-1)
        if np.min(b) < np.max(num_real):
            raise ValueError(
                f"budget {budget} is smaller than the number of arms {num_real}: "
                "every algorithm here needs at least one pull per arm"
            )


def simulate(
    policy: Policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    budget: Any,
    num_reps: int,
    horizon: int | None = None,
    num_checkpoints: int = 1,
    metric: Any = None,
    record_arms: bool = False,
    permute: bool = False,
    batch_size: int | None = None,
    progress: bool = False,
    return_state: bool = False,
) -> RunResult:
    """Run ``num_reps`` replications (vmapped, jitted; results ``[R, ...]``).

    When ``params`` carries a leading instance axis (``arm_mask`` of shape ``[N, K]``),
    results are ``[N, R, ...]`` and instance ``n`` uses keys ``fold_in(key, n)``.
    ``batch_size`` splits the replications into chunks (bounded memory, progress lines
    on stderr when ``progress=True``); every chunk reuses one compilation.
    """
    num_reps = _validate.static_int("num_reps", num_reps, minimum=1)
    horizon = _default_horizon(budget) if horizon is None else horizon
    _check_budget(bandit, params, budget, horizon)
    batched = params.arm_mask.ndim == 2
    statics = (
        policy,
        bandit,
        horizon,
        num_checkpoints,
        metric,
        record_arms,
        permute,
        return_state,
    )

    def build():
        def one(p, k, b):
            return run(
                policy,
                bandit,
                p,
                k,
                budget=b,
                horizon=horizon,
                num_checkpoints=num_checkpoints,
                metric=metric,
                record_arms=record_arms,
                permute=permute,
                return_state=return_state,
            )

        over_reps = jax.vmap(one, in_axes=(None, 0, None))
        if batched:
            over_reps = jax.vmap(over_reps, in_axes=(0, 0, None))
        return jax.jit(over_reps)

    fn = _cached(("simulate", batched, *statics), build)
    if batched:
        num_inst = params.arm_mask.shape[0]
        inst_keys = jax.vmap(lambda n: jax.random.fold_in(key, n))(jnp.arange(num_inst))
        keys = jax.vmap(lambda k: jax.random.split(k, num_reps))(inst_keys)
    else:
        keys = jax.random.split(key, num_reps)
    size = num_reps if batch_size is None else min(batch_size, num_reps)
    chunks, start, t0 = [], 0, time.perf_counter()
    while start < num_reps:
        stop = min(start + size, num_reps)
        part = keys[:, start:stop] if batched else _shard(keys[start:stop])
        if stop - start < size:  # pad the last chunk to reuse the compilation
            pad = size - (stop - start)
            part = jnp.concatenate(
                [part, part[..., :pad, :]] if batched else [part, part[:pad]],
                axis=1 if batched else 0,
            )
        out = fn(params, part, budget)
        out = jax.tree_util.tree_map(
            lambda x: x[:, : stop - start] if batched else x[: stop - start], out
        )
        chunks.append(jax.device_get(out))
        start = stop
        if progress:
            rate = start / (time.perf_counter() - t0)
            print(f"  {start}/{num_reps} replications ({rate:.1f}/s)", file=sys.stderr)
    axis = 1 if batched else 0
    return jax.tree_util.tree_map(lambda *xs: np.concatenate(xs, axis=axis), *chunks)


def product_grid(**axes) -> dict:
    """Cartesian product of 1-D value lists -> dict of flat arrays ``[P]``."""
    names = list(axes)
    values = [np.asarray(axes[n]) for n in names]
    mesh = np.meshgrid(*values, indexing="ij")
    return {n: m.reshape(-1) for n, m in zip(names, mesh, strict=True)}


def sweep(
    make_policy,
    bandit: Bandit,
    params: Any,
    key: Key,
    *,
    grid: dict,
    num_reps: int,
    horizon: int,
    budget: Any = None,
    num_checkpoints: int = 1,
    metric: Any = None,
    permute: bool = False,
) -> RunResult:
    """Sweep hyper-parameters (and budgets) x instances x replications in one compile.

    ``make_policy(**hp)`` is called *inside* the vmapped function with traced scalars
    ``hp`` drawn from ``grid`` (a dict of arrays with a common leading length P; use
    :func:`product_grid`). A ``"budget"`` entry in ``grid`` is also the engine budget.
    ``params`` may carry an instance axis ``[N, K]`` (pad with
    :func:`jbandits.envs.pad_arms`). Every grid point uses the same replication keys
    (common random numbers). Results are ``[P, N, R, ...]`` (``[P, R, ...]`` without an
    instance axis).
    """
    num_reps = _validate.static_int("num_reps", num_reps, minimum=1)
    grid = {k: jnp.asarray(v) for k, v in grid.items()}
    sizes = {v.shape[0] for v in grid.values()}
    if len(sizes) != 1:
        raise ValueError(f"grid entries must share one leading length, got {sizes}")
    if "budget" not in grid and budget is None:
        raise ValueError("give budget, or a 'budget' entry in grid")
    _check_budget(bandit, params, grid.get("budget", budget), horizon)
    batched = params.arm_mask.ndim == 2

    def per_point(hp, p, keys):
        b = hp.get("budget", budget)
        pol = make_policy(**hp)
        return jax.vmap(
            lambda k: run(
                pol,
                bandit,
                p,
                k,
                budget=b,
                horizon=horizon,
                num_checkpoints=num_checkpoints,
                metric=metric,
                permute=permute,
            )
        )(keys)

    fn = per_point
    if batched:
        fn = jax.vmap(fn, in_axes=(None, 0, 0))
    fn = jax.jit(jax.vmap(fn, in_axes=(0, None, None)))
    if batched:
        num_inst = params.arm_mask.shape[0]
        keys = jax.vmap(
            lambda n: jax.random.split(jax.random.fold_in(key, n), num_reps)
        )(jnp.arange(num_inst))
    else:
        keys = jax.random.split(key, num_reps)
    return jax.device_get(fn(grid, params, keys))
