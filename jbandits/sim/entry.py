"""The steps the entry points share on the way to :func:`jbandits.sim.runner.execute`.

Policies built on the host (registered name + concrete numbers), the distinct points
of a grid, the per-cell host schedules of a policy's ``prepare`` hook, the store of a
run, the per-instance keys and params of one instance or a stack, and their lanes.
"""

from __future__ import annotations

import jax
import numpy as np

from jbandits.core import prng
from jbandits.sim import runner


def accepted(name: str):
    """The parameters the factory of registered policy ``name`` takes."""
    return runner.registry.parameters(runner.registry.raw_factory(name))


def host_policy(name: str, num_arms: int, point: dict, budget: int):
    """The registered policy ``name`` at one grid point, built on the host (concrete
    numbers; ``budget`` / ``horizon`` filled in where the factory takes them)."""
    import warnings

    takes = accepted(name)
    kwargs = {k: v for k, v in point.items() if k != "num_arms"}
    for arg in ("budget", "horizon"):
        if arg in takes and arg not in kwargs:
            kwargs[arg] = int(budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # range warnings are the run's to give
        return runner.registry.make(name, num_arms=num_arms, **kwargs)


def points(grid: dict, num_points: int) -> list[dict]:
    """The distinct points of a grid of ``[P]`` leaves, as dicts of host values."""
    seen, out = set(), []
    for i in range(num_points):
        point = jax.tree_util.tree_map(lambda x, i=i: np.asarray(x)[i], grid)
        tag = repr(jax.tree_util.tree_map(lambda x: x.tolist(), point))
        if tag not in seen:
            seen.add(tag)
            out.append(point)
    return out


def prepared(policy_source, numeric: dict, num_arms: int, real, budgets) -> dict:
    """Per-cell host arguments (exact schedules) from the policy's prepare hook."""
    hook = policy_source.prepare
    if hook is None:
        return {}
    static = dict(policy_source.static)
    static.pop("num_arms", None)
    cache, rows = {}, []
    for k_real, b in zip(real.tolist(), budgets.tolist(), strict=True):
        if (k_real, b) not in cache:
            kw = {**static, **{k: v for k, v in numeric.items() if k != "budget"}}
            cache[(k_real, b)] = hook(num_arms, k_real, b, **kw)
        rows.append(cache[(k_real, b)])
    if not rows[0]:
        return {}
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *rows)


def open_store(store, source, *, code=None, **work):
    """A :class:`jbandits.analysis.store.Store` for ``store`` (a Store, a path, or None) of
    the runs of ``source`` (a registered policy: see :func:`jbandits.sim.runner.storable`;
    None for sweep_grid's registered names); ``code``: the digests of the code the
    work runs (:func:`jbandits.sim.runner.code_of`), checked against the store's."""
    if store is None:
        return None
    from jbandits.analysis.store import Store, digest

    if source is not None:
        _check_storable(source)
    if isinstance(store, Store):
        return store
    fingerprint = {k: digest(v) for k, v in work.items()}
    return Store(store, fingerprint=fingerprint, code=code)


def instance_inputs(key, params, batched: bool, num_inst: int):
    """``(keys [N, 2], params [N, ...])`` of a stack of ``N`` instances (``batched``:
    instance ``n`` keyed ``fold_in(key, n)``) or of one instance (keyed ``key``);
    ``key``: one key's data ``[2]``."""
    if batched:
        return runner.instance_keys(key, num_inst), params
    keys = prng.key_data(key)[None]
    return keys, jax.tree_util.tree_map(lambda x: np.asarray(x)[None], params)


def keys_of(key, num_inst: int, batched: bool, num_reps: int):
    """``(key data, per_replication)``: ``key`` as uint32 data ``[2]`` (one key),
    ``[N, 2]`` (one key per instance of a stack) or ``[N, R, 2]`` (one per
    replication: ``[R]`` keys for one instance, ``[N, R]`` for a stack). Anything
    else is refused with the message every entry point gives
    (:func:`jbandits.core.prng.one_key`), which a batch of the wrong shape extends
    with the shapes taken here."""
    shape = tuple(getattr(key, "shape", ()) or ())
    dtype = getattr(key, "dtype", None)
    typed = dtype is not None and jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key)
    if not typed or not shape or str(jax.random.key_impl(key)) != "threefry2x32":
        return np.asarray(jax.random.key_data(prng.one_key(key))), False
    data = np.asarray(jax.random.key_data(key))
    if batched and shape == (num_inst,):
        return data, False
    if shape == ((num_inst, num_reps) if batched else (num_reps,)):
        return data.reshape(num_inst, num_reps, 2), True
    want = f"[{num_inst}] or [{num_inst}, {num_reps}]" if batched else f"[{num_reps}]"
    raise ValueError(
        f"key must be {prng.KEY_FORMS}, or a batch of them of shape {want} here "
        f"(instances x replications); got a batch of shape {list(shape)}"
    )


def per_instance(name, numbers, numeric: dict, num_inst: int, batched: bool) -> dict:
    """``numbers`` (``{number: [N, ...]}``, one value per instance of a stack) checked
    against the policy's numbers ``numeric`` and cast to their declared types
    (registered policy ``name``; None for a policy built by a callable)."""
    if not numbers:
        return {}
    if not batched:
        raise ValueError(
            "numbers= gives one value per instance of a stack; for one instance, "
            "build the policy with its numbers"
        )
    unknown = sorted(set(numbers) - set(numeric))
    if unknown:
        raise ValueError(
            f"numbers= names {unknown}, not numbers of the policy "
            f"(its numbers: {sorted(numeric)})"
        )
    out = {}
    for k, v in numbers.items():
        own, mine_tree = jax.tree_util.tree_flatten(numeric[k])
        if jax.tree_util.treedef_is_leaf(mine_tree):  # a number: lists are arrays
            v = np.asarray(v)
        given, tree = jax.tree_util.tree_flatten(v)
        if tree != mine_tree:
            raise ValueError(
                f"numbers[{k!r}] must have the structure of the policy's {k} "
                f"({mine_tree}), got {tree}"
            )
        for mine, theirs in zip(own, given, strict=True):
            want = (num_inst, *np.shape(mine))
            if np.shape(theirs) != want:
                raise ValueError(
                    f"numbers[{k!r}] must have shape {list(want)} (one value per "
                    f"instance), got {list(np.shape(theirs))}"
                )
        out[k] = jax.tree_util.tree_map(np.asarray, v)
    return runner.registry.cast_numbers(name, out) if name else out


def lanes(
    hp,
    params,
    budget,
    keys,
    num_reps: int,
    horizon: int,
    *,
    per_rep=False,
    instance=None,
    shared=(),
):
    """:class:`jbandits.sim.runner.Lanes` of cells that share one checkpoint horizon:
    cell ``c`` runs ``hp[c]`` (leaves ``[C, ...]``) on instance ``instance[c]``
    (default ``c``) with ``budget[c]``, its replications keyed ``fold_in(keys[c], r)``;
    with ``per_rep``, ``keys [C, R, 2]`` are every replication's own keys (the
    cells are then split into one cell per replication)."""
    instance = np.arange(budget.shape[0]) if instance is None else instance
    if per_rep:
        reps = keys.shape[1]
        hp = jax.tree_util.tree_map(lambda x: np.repeat(x, reps, axis=0), hp)
        instance, budget = np.repeat(instance, reps), np.repeat(budget, reps)
        keys, num_reps = keys.reshape(-1, 2), 1
    horizons = np.full(budget.shape, horizon)
    return runner.Lanes(
        hp, params, instance, budget, keys, num_reps, horizon=horizons,
        shared=tuple(shared), fold_reps=not per_rep,
    )  # fmt: skip


def _check_storable(source) -> None:
    """A store needs a registered policy (see :func:`jbandits.sim.runner.storable`)."""
    if not runner.storable(source):
        raise ValueError(
            "store= needs a registered policy (jbandits.make, jbandits.<name>, "
            "@jbandits.core.registry.policy), whose name, static arguments and numbers "
            f"identify its runs; got {source.name or 'a hand-built policy'}"
        )
