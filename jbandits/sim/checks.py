"""Host-side checks of the entry points' arguments, each written once.

:func:`jbandits.simulate`, :func:`jbandits.sweep`, :func:`jbandits.sweep_grid`, the
tuner and :func:`jbandits.sim.engine.run` check their arguments here, before anything is
traced or compiled: every check raises ValueError with a message that names the
offending argument, and returns the argument in the form the caller runs with.
"""

from __future__ import annotations

import jax
import numpy as np

from jbandits.analysis import metrics
from jbandits.core import prng as _prng
from jbandits.core import registry
from jbandits.core import reward_model as _reward_model
from jbandits.core import validate as _validate
from jbandits.core.types import Bandit, Policy
from jbandits.envs import rewards as _rewards


# --------------------------------------------------------------------------- budgets
def budget_array(name: str, budget, count: int | None = None) -> np.ndarray:
    """``budget`` (an int or 1-D ints, ``count`` of them if given) as int64, each a
    whole number in ``[1, 2**31 - 1]``."""
    if isinstance(budget, (str, bytes)) or budget is None:
        raise ValueError(
            f"{name} must be an integer (or integer array), got {budget!r}"
        )
    if not _validate.is_concrete(budget):
        raise ValueError(f"{name} must be concrete (host) numbers here, got a tracer")
    try:
        arr = np.asarray(jax.device_get(budget))
    except Exception as err:  # noqa: BLE001 - anything unconvertible is a bad budget
        raise ValueError(f"{name} must be integers, got {budget!r}") from err
    if arr.dtype.kind not in "iuf" or arr.ndim > 1:
        raise ValueError(
            f"{name} must be an integer scalar or 1-D array, got {budget!r}"
        )
    if arr.size == 0:
        raise ValueError(f"{name} must not be empty, got {budget!r}")
    if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
        raise ValueError(f"{name} must hold whole numbers, got {budget!r}")
    if np.any(arr < 1):
        raise ValueError(f"{name} must be >= 1, got {budget!r}")
    if np.any(arr > _validate.INT32_MAX):  # the engine counts pulls in int32
        raise ValueError(
            f"{name} must be <= {_validate.INT32_MAX} (2**31 - 1), got {budget!r}"
        )
    arr = arr.astype(np.int64)
    if count is not None and arr.ndim == 1 and arr.shape[0] != count:
        raise ValueError(f"{name} has {arr.shape[0]} entries, expected {count}")
    return arr


def budget_list(budgets) -> np.ndarray:
    """``budgets`` of :func:`jbandits.sweep_grid` (a list, or one budget) as 1-D."""
    if isinstance(budgets, (str, bytes)):
        budget_array("budgets", budgets)  # refused, with the string in the message
    if np.ndim(budgets) == 0:
        budgets = [budgets]  # one budget
    return budget_array("budgets", list(budgets))


def within_horizon(budgets, horizon: int) -> None:
    """Every budget is at most ``horizon``."""
    if np.any(np.asarray(budgets) > horizon):
        raise ValueError(f"budget {np.max(budgets)} exceeds horizon {horizon}")


def one_pull_per_arm(budgets, real_arms) -> None:
    """Every budget (one per cell) covers one pull of each real arm of its cell."""
    budgets, real_arms = np.asarray(budgets), np.asarray(real_arms)
    small = budgets < real_arms
    if np.any(small):
        raise ValueError(
            f"budget {budgets[small].min()} is smaller than the number of arms "
            f"{real_arms[small].max()}: every algorithm here needs at least one pull "
            "per arm"
        )


def built_budget(spec, budgets) -> None:
    """A policy built with a concrete ``budget=`` (its ``spec``) runs with that one;
    ``budgets``: the run's budget (an int) or the cells' budgets (1-D)."""
    own = dict(spec.kwargs).get("budget") if spec is not None else None
    if own is None or not _validate.is_concrete(own) or np.ndim(own) != 0:
        return
    if np.any(np.asarray(budgets) != int(own)):
        run = sorted(set(budgets.tolist())) if np.ndim(budgets) else budgets
        raise ValueError(
            f"policy was built with budget={int(own)} but is run with budget "
            f"{run}; build it with the run's budget"
        )


def counts(num_reps, num_checkpoints) -> tuple[int, int]:
    """``num_reps`` and ``num_checkpoints`` as ints the engine can count in int32."""
    num_reps = _validate.static_int(
        "num_reps", num_reps, minimum=1, maximum=_validate.INT32_MAX
    )
    num_checkpoints = _validate.static_int(
        "num_checkpoints", num_checkpoints, minimum=1, maximum=_validate.INT32_MAX
    )
    return num_reps, num_checkpoints


def checkpoint_times(num_checkpoints: int, horizons) -> None:
    """The ``num_checkpoints`` read-outs at ``min(c * ceil(h / C), h)`` are distinct
    for every horizon ``h`` of ``horizons`` (an int or ints): more checkpoints than
    steps, or a spacing that reaches ``h`` before the last one, would repeat a time
    (the same pulls read twice, reported as two points of a curve)."""
    c = int(num_checkpoints)
    for h in sorted({int(x) for x in np.ravel(horizons)}):
        if c > 1 and (c - 1) * -(-h // c) >= h:
            fits = next(  # the most that fit (min(c, h) itself when c >= h)
                d for d in range(min(c, h), 0, -1) if (d - 1) * -(-h // d) < h
            )
            raise ValueError(
                f"num_checkpoints={c} repeats checkpoint times over a horizon of {h} "
                f"pulls (checkpoint c is read after min(c * ceil({h} / {c}), {h}) "
                f"pulls); use at most {fits} checkpoints here, or a divisor of {h}"
            )


def static_horizon(value) -> int:
    """``horizon`` (a checkpoint spacing) as an int the engine can count in int32."""
    return _validate.static_int(
        "horizon", value, minimum=1, maximum=_validate.INT32_MAX
    )


# ------------------------------------------------------------ instances and the key
def mask(params) -> np.ndarray:
    """``params.arm_mask`` on the host: ``[K]``, or ``[N, K]`` for a stack."""
    if not hasattr(params, "arm_mask"):
        raise ValueError(
            f"params must be an instance pytree with an arm_mask (from jbandits.envs), "
            f"got {type(params).__name__}"
        )
    arm_mask = np.asarray(jax.device_get(params.arm_mask))
    if arm_mask.ndim not in (1, 2):
        raise ValueError(
            f"params.arm_mask must be [K] or [N, K] (a stack of instances), "
            f"got shape {arm_mask.shape}"
        )
    return arm_mask


def bandit(family, params) -> None:
    """``family`` is a Bandit and ``params`` one of its instances, whose true means
    are finite (any family's, one's own included; the family's own ``check`` adds
    its bounds, e.g. Bernoulli means in [0, 1], with its builder's validator)."""
    if not isinstance(family, Bandit):
        raise ValueError(
            f"bandit must be a jbandits Bandit, got {type(family).__name__}"
        )
    _validate.bandit_params(family, params)
    if _validate.is_concrete(params):
        try:  # a family of one's own may compute them for one instance only
            means = family.means(params)
        except Exception:  # noqa: BLE001 - the run calls it per instance
            return
        _validate.instance_values("means", means)


def cells(family, params, budgets, real_arms, horizon: int) -> None:
    """The cells' budgets fit the instances (``real_arms`` each) and ``horizon``."""
    bandit(family, params)
    family.check(params, int(np.max(budgets)))
    within_horizon(budgets, horizon)
    one_pull_per_arm(budgets, real_arms)


def instances(family, items: list, budgets: np.ndarray) -> None:
    """:func:`jbandits.sweep_grid`'s instances: a non-empty list of single ones."""
    if not items:
        raise ValueError("instances must be a non-empty list of instances")
    for inst in items:
        if mask(inst).ndim != 1:
            raise ValueError(
                "instances must be single instances (arm_mask [K]), got a stack of "
                f"shape {np.shape(inst.arm_mask)}: pass its instances as a list"
            )
        bandit(family, inst)
        family.check(inst, int(budgets.max()))


def one_key(key) -> np.ndarray:
    """``key`` is one key (:func:`jbandits.core.prng.one_key`: ``jax.random.key(n)``
    or ``jax.random.PRNGKey(n)``, nothing else); returns its uint32 data ``[2]`` (on
    the host, for the entry points to derive the lanes' keys from)."""
    return np.asarray(jax.random.key_data(_prng.one_key(key)))


# ------------------------------------------------------------------ reward model
def reward_model(policies, family, instances, check) -> None:
    """Every policy of ``policies`` (built ones) fits the rewards of every instance
    of ``instances`` (a list of params) of ``family``: the reward model it declares
    (:mod:`jbandits.core.reward_model`) against what the rewards are known to be
    (:func:`jbandits.envs.rewards.rewards_of`). ``check=False`` skips it."""
    if not isinstance(check, (bool, np.bool_)):
        raise ValueError(f"check_model must be True or False, got {check!r}")
    if not check:
        return
    known: list = []
    for policy in policies:
        model = _reward_model.of_policy(policy)
        if model is None:
            continue
        if not known:
            known = [_rewards.rewards_of(family, p) for p in instances]
        for rewards in known:
            fix = _reward_model.mismatch(model, rewards)
            if fix is not None:
                raise ValueError(
                    f"{policy.spec.name} assumes {_reward_model.describe(model)} but "
                    f"the bandit is {family.name!r} with {rewards.what}: {fix} (or "
                    "pass check_model=False to run it anyway, check_model = false in a "
                    "sweep config; "
                    "see jbandits.core.reward_model)"
                )


# --------------------------------------------------------------- policy and metric
def policy_fits(policy, num_arms: int, budgets: np.ndarray, given=None) -> None:
    """A policy built with ``num_arms`` / ``budget`` (its spec, or ``given["budget"]``:
    one budget per instance, from ``simulate(numbers=)``) fits the run's."""
    if given is not None and "budget" in given:
        if not np.array_equal(np.asarray(given["budget"]), budgets):
            raise ValueError(
                f"numbers['budget'] {np.asarray(given['budget']).tolist()} is not the "
                f"run's budget per instance {budgets.tolist()}"
            )
        given = {k: v for k, v in given.items() if k != "budget"}
        budgets = None
    spec = getattr(policy, "spec", None)
    if spec is None:
        return
    kw = dict(spec.kwargs)
    if "num_arms" in kw and kw["num_arms"] != num_arms:
        raise ValueError(
            f"policy was built with num_arms={kw['num_arms']} but the bandit has "
            f"K={num_arms} arms (padded instances: build with num_arms=K_max)"
        )
    if budgets is not None:
        built_budget(spec, budgets)


def policy_given(policy) -> None:
    """A Policy handed to an entry point has callable functions and a known
    ``setting`` (a factory's result is checked where it is called)."""
    if isinstance(policy, Policy):
        _validate.policy_object(policy, "the policy given")


def policy_list(policies) -> list:
    """``policies`` as a list of ``(registered name, hp dict)`` pairs."""
    if (
        isinstance(policies, tuple)
        and len(policies) == 2
        and isinstance(policies[0], str)
    ):
        policies = [policies]  # one pair
    if not isinstance(policies, (list, tuple)) or not policies:
        raise ValueError(
            f"policies must be a non-empty list of (name, hp) pairs, got {policies!r}"
        )
    out = []
    for pair in policies:
        if (
            not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not isinstance(pair[0], str)
            or not isinstance(pair[1], dict)
        ):
            raise ValueError(
                "policies must be (name, hp) pairs, e.g. [('apt', {'threshold': "
                f"0.5}})], got {pair!r}"
            )
        registry.prepare_hook(pair[0])  # an unknown name lists the known
        out.append(pair)
    return out


def metric(value) -> None:
    """``value`` is a built metric (or None)."""
    if value in (metrics.thresholding, metrics.identification, metrics.top_m):
        raise ValueError(
            f"metric must be a built metric: call jbandits.analysis.metrics.{value.__name__}"
            f"(...) (e.g. jbandits.analysis.metrics.thresholding(0.5)), got {value!r}"
        )
    if value is not None and not callable(value):
        raise ValueError(
            "metric must be a jbandits.analysis.metrics metric, e.g. "
            f"jbandits.analysis.metrics.thresholding(0.5), None, or 'auto'; got "
            f"{value!r}"
        )


def is_auto(value) -> bool:
    """``metric="auto"``: the policies' default metric."""
    return isinstance(value, str) and value == "auto"


def auto_metric(value, policy):
    """``"auto"``: the policy's default metric (:func:`jbandits.analysis.metrics.for_policy`)."""
    if is_auto(value):
        return metrics.for_policy(policy)
    return value


def one_metric(policies):
    """The default metric shared by ``policies`` (one per grid point); a sweep records
    one metric, so points that call for different ones are an error."""
    found = {}
    for policy in policies:
        m = metrics.for_policy(policy)
        found.setdefault(repr(m), m)
    if len(found) > 1:
        raise ValueError(
            "metric='auto': the grid points call for different metrics "
            f"({', '.join(found)}); pass metric= (one metric per sweep)"
        )
    return next(iter(found.values()))


def use(policy, value, diagnostics: bool) -> None:
    """The policy (a built one, e.g. a grid's first point) fits the metric ``value``
    and the diagnostics asked for."""
    metrics.check_setting(value, policy)
    if diagnostics and getattr(policy, "diagnostics", None) is None:
        spec = getattr(policy, "spec", None)
        what = spec.name if spec is not None else "this policy"
        raise ValueError(
            f"diagnostics=True but {what} has no diagnostics channel "
            "(Policy.diagnostics is None); pass diagnostics=False"
        )


# ------------------------------------------------------------------- grids and store
def grid_arrays(grid) -> tuple[dict, int]:
    """:func:`jbandits.sweep`'s ``grid`` as host arrays with a leading axis of
    ``P`` points, and ``P``."""
    if not isinstance(grid, dict) or not grid:
        raise ValueError(f"grid must be a non-empty dict of 1-D arrays, got {grid!r}")
    arrays = {}
    for k, v in grid.items():
        if isinstance(v, (list, tuple)):  # a list of values, not a pytree
            v = np.asarray(v)
        a = jax.tree_util.tree_map(lambda x: np.asarray(jax.device_get(x)), v)
        if any(np.ndim(x) < 1 for x in jax.tree_util.tree_leaves(a)):
            raise ValueError(
                f"grid[{k!r}] must have a leading axis of grid points (one value per "
                "point); wrap a single value in a list"
            )
        arrays[k] = a
    sizes = {x.shape[0] for x in jax.tree_util.tree_leaves(arrays)}
    if len(sizes) != 1:
        raise ValueError(f"grid entries must share one leading length, got {sizes}")
    num_points = sizes.pop()
    if num_points == 0:
        raise ValueError(f"grid has no points (its entries are empty): {grid!r}")
    return arrays, num_points


def grid_axes(hp: dict, name: str = "") -> list:
    """The list-valued entries (grid axes) of a :func:`jbandits.sweep_grid` policy's
    ``hp``, each non-empty."""
    keys = [k for k, v in hp.items() if isinstance(v, (list, tuple))]
    for k in keys:
        if not hp[k]:
            raise ValueError(
                f"grid axis {k!r} of {name or 'a policy'} is empty: give at least "
                "one value (or a scalar)"
            )
    return keys
