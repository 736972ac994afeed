"""The schema of a ``jbandits sweep`` config file and its checks.

:data:`SCHEMA` declares every key a config may have and its type; :func:`check`
applies it and the rules between keys (K or means, a metric's own keys, no repeated
policy), :func:`load` reads a TOML file and checks it. Every problem is a
:class:`ConfigError` of one line that names the key, the value and what is accepted.
See :mod:`jbandits.cli.main` for the file's layout.
"""

from __future__ import annotations

import difflib
import math
import os

try:  # Python >= 3.11
    import tomllib
except ModuleNotFoundError:  # pragma: no cover
    import tomli as tomllib

from jbandits.cli import imports as _imports
from jbandits.cli.errors import ConfigError, ImportInterrupted  # noqa: F401

METRICS = ("thresholding", "identification", "top_m", "regret")
# metric kind -> (required keys, optional keys) of the metric table besides `kind`
METRIC_ARGS = {
    "thresholding": (("threshold",), ("epsilon",)),
    "identification": ((), ()),
    "top_m": (("m",), ("epsilon",)),
    "regret": ((), ()),
}
# policy arguments the sweep sets itself, per cell
SET_BY_SWEEP = {"num_arms": "K of each instance", "budget": "each of `budgets`"}
LABELS = ("policy", "K", "instance", "budget")  # cell labels that are not hyper-params


# ------------------------------------------------------------------------- schema
class Int:
    """An integer (not a bool) in ``[minimum, maximum]``."""

    def __init__(self, minimum=None, maximum=None):
        self.minimum, self.maximum = minimum, maximum
        self.what = "an integer"
        if maximum is not None:
            self.what += f" in [{minimum}, {maximum}]"
        elif minimum is not None:
            self.what += f" >= {minimum}"

    def check(self, value, where):
        ok = isinstance(value, int) and not isinstance(value, bool)
        ok = ok and (self.minimum is None or value >= self.minimum)
        if not ok or (self.maximum is not None and value > self.maximum):
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Number:
    """A finite number (int or float, not a bool), optionally ``> 0``."""

    def __init__(self, positive=False):
        self.positive = positive
        self.what = "a positive number" if positive else "a finite number"

    def check(self, value, where):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        ok = ok and math.isfinite(value) and (value > 0 or not self.positive)
        if not ok:
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Choice:
    """One of a few strings."""

    def __init__(self, *options):
        self.options = options
        self.what = "one of " + ", ".join(repr(o) for o in options)

    def check(self, value, where):
        if not isinstance(value, str) or value not in self.options:
            close = difflib.get_close_matches(str(value), self.options, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(f"{where} must be {self.what}, got {value!r}{hint}")


class Bool:
    """``true`` or ``false``."""

    what = "true or false"

    def check(self, value, where):
        if not isinstance(value, bool):
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Name:
    """A result folder name: one path component, nothing that leaves ``--out``."""

    what = (
        "one folder name (no '/' or '\\', not starting with '.', at most 128 "
        "characters)"
    )

    def check(self, value, where):
        ok = isinstance(value, str) and 0 < len(value) <= 128
        ok = ok and not value.startswith(".") and value.strip() == value
        if not ok or any(c in value for c in "/\\") or not value.isprintable():
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class Family:
    """A registered reward family (:mod:`jbandits.envs.families`): the built-in
    ones, or one registered by a module the config ``imports``."""

    what = "a registered reward family"

    def check(self, value, where):
        from jbandits.envs import families

        known = families.family_names()
        if not isinstance(value, str) or value not in known:
            close = difflib.get_close_matches(str(value), known, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{where} must be {self.what}{hint}, got {value!r}; known: "
                f"{', '.join(known)} (a family of your own: register it in a module "
                "and name the module in `imports`)"
            )


def import_modules(entries, base: str) -> None:
    """Import the config's ``imports`` (:func:`jbandits.cli.imports.run`: a module
    name, or a ``.py`` file relative to ``base``, loaded under a private name), so
    that the policies and families they register apply; their code runs."""
    ListOf(Str(), "a non-empty list of module names or .py files").check(
        entries, "imports"
    )
    _imports.run(entries, base)


class Str:
    """A non-empty string."""

    what = "a non-empty string"

    def check(self, value, where):
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")


class ListOf:
    """A non-empty list of ``item``s."""

    def __init__(self, item, what):
        self.item, self.what = item, what

    def check(self, value, where):
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")
        for i, v in enumerate(value):
            self.item.check(v, f"{where}[{i}]")


class Table:
    """A TOML table with known keys (each with its spec) and required ones."""

    def __init__(self, fields, required=(), example=""):
        self.fields, self.required = fields, required
        self.what = "a table" + (f" (e.g. {example})" if example else "")

    def check(self, value, where):
        if not isinstance(value, dict):
            raise ConfigError(
                f"{where or 'the config'} must be {self.what}, got {value!r}"
            )
        for key in value:
            if key not in self.fields:
                raise ConfigError(_unknown(key, self.fields, where))
        for key in self.required:
            if key not in value:
                raise ConfigError(f"missing {_join(where, key)!r}")
        for key, spec in self.fields.items():
            if key in value:
                spec.check(value[key], _join(where, key))


class Policy:
    """``name`` (a registered policy) and its keyword arguments: a scalar, or a
    non-empty list of scalars (a grid axis), for each argument its factory takes."""

    what = 'a table with a policy `name` and its hyper-parameters (e.g. name = "apt")'
    SCALARS = (bool, int, float, str)

    def check(self, value, where):
        import jbandits
        from jbandits.sim import entry as _entry

        if not isinstance(value, dict):
            raise ConfigError(f"{where} must be {self.what}, got {value!r}")
        name = value.get("name")
        if name not in jbandits.names():
            close = difflib.get_close_matches(str(name), jbandits.names(), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ConfigError(
                f"{where}.name must be a registered policy{hint}, got {name!r}; "
                f"known: {', '.join(jbandits.names())}"
            )
        params = _entry.accepted(name)
        takes_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
        known = [p for p in params if p not in SET_BY_SWEEP]
        for key, v in value.items():
            if key == "name":
                continue
            here = f"{where}.{key} ({name})"
            if key in SET_BY_SWEEP:
                raise ConfigError(
                    f"{here}: {key} is set by the sweep ({SET_BY_SWEEP[key]}); "
                    "remove it"
                )
            if key not in params and not takes_any:
                raise ConfigError(
                    _unknown(key, known, f"{where} ({name})", "hyper-parameter")
                )
            axis = v if isinstance(v, list) else [v]
            if not axis or not all(isinstance(x, self.SCALARS) for x in axis):
                raise ConfigError(
                    f"{here} must be a number, a bool, a string or a non-empty list "
                    f"of them (a grid axis), got {v!r}"
                )


METRIC = Table(
    {
        "kind": Choice(*METRICS),
        "threshold": Number(),
        "epsilon": Number(),
        "m": Int(minimum=1),
    },
    required=("kind",),
    example='{ kind = "thresholding", threshold = 0.5 }',
)
INSTANCES = Table(
    {
        "K": ListOf(Int(minimum=2), "a non-empty list of integers >= 2"),
        "means": ListOf(
            ListOf(Number(), "a list of numbers (one mean per arm)"),
            "a non-empty list of lists of means",
        ),
        "generator": Choice("uniform", "linear"),
        "low": Number(),
        "high": Number(),
        "seed": Int(minimum=0),
        "std": Number(positive=True),
    },
    example="[instances] with K = [4, 10] or means = [[0.1, 0.9]]",
)
SCHEMA = Table(
    {
        "name": Name(),
        "imports": ListOf(Str(), "a non-empty list of module names or .py files"),
        "bandit": Family(),
        "seed": Int(minimum=0, maximum=2**32 - 1),
        "reps": Int(minimum=1),
        "budgets": ListOf(Int(minimum=1), "a non-empty list of integers >= 1"),
        "checkpoints": Int(minimum=1),
        "metric": METRIC,
        "instances": INSTANCES,
        "policies": ListOf(Policy(), "a non-empty list of [[policies]] tables"),
        # false: run a policy on a bandit whose rewards its reward model does not fit
        "check_model": Bool(),
    },
    required=("name", "budgets", "reps", "instances", "policies"),
)
"""The keys a sweep config may hold, each with its type; see :func:`check`."""


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _unknown(key, known, where, noun="key") -> str:
    close = difflib.get_close_matches(str(key), list(known), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]!r}? " if close else ""
    place = f" in {where}" if where else ""
    return f"unknown {noun} {key!r}{place} ({hint}known: {', '.join(map(str, known))})"


def check(cfg: dict, base: str | None = None) -> dict:
    """Check a parsed config against :data:`SCHEMA` and the rules between keys;
    ConfigError (one line) on the first problem. Returns ``cfg``.

    The modules of ``imports`` are imported first (:func:`import_modules`; ``.py``
    files relative to ``base``, default the current folder), so the policies and
    reward families they register are known to the checks.
    """
    from jbandits.envs import families

    if isinstance(cfg, dict) and "imports" in cfg:
        import_modules(cfg["imports"], os.getcwd() if base is None else base)
    SCHEMA.check(cfg, "")
    inst = cfg["instances"]
    if ("K" in inst) == ("means" in inst):
        raise ConfigError("instances: give either K (with a generator) or means")
    if "means" in inst:
        extra = [k for k in ("generator", "low", "high", "seed") if k in inst]
        if extra:
            raise ConfigError(f"instances.{extra[0]} applies to instances.K, not means")
    if inst.get("low", 0.1) > inst.get("high", 0.9):
        raise ConfigError(
            f"instances.low ({inst.get('low', 0.1)}) must be <= instances.high "
            f"({inst.get('high', 0.9)})"
        )
    family = cfg.get("bandit", "bernoulli")
    if "std" in inst and "std" not in families.family_options(family):
        raise ConfigError(
            f"instances.std does not apply to bandit = {family!r} (its builder "
            'takes no std; the built-in family that does is "gaussian")'
        )
    if cfg.get("bandit", "bernoulli") == "gaussian" and "std" not in inst:
        raise ConfigError(
            'instances.std is required with bandit = "gaussian": the arms\' '
            "standard deviation (one positive number); there is no default, since "
            "every result depends on it"
        )
    metric = cfg.get("metric", {"kind": "regret"})
    required, optional = METRIC_ARGS[metric["kind"]]
    for key in metric:
        if key != "kind" and key not in required + optional:
            takes = ", ".join(required + optional) or "nothing else"
            raise ConfigError(
                f"metric.{key} does not apply to kind = {metric['kind']!r} "
                f"(it takes {takes})"
            )
    for key in required:
        if key not in metric:
            raise ConfigError(f"metric.{key} is required for kind = {metric['kind']!r}")
    seen = {}
    for i, entry in enumerate(cfg["policies"]):
        tag = repr(sorted(entry.items()))
        if tag in seen:
            raise ConfigError(f"policies[{i}] repeats policies[{seen[tag]}]")
        seen[tag] = i
    return cfg


def load(path: str) -> dict:
    """Read and check a sweep config (TOML); ConfigError (one line) if it is bad."""
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file {path!r} not found") from None
    except IsADirectoryError:
        raise ConfigError(f"config {path!r} is a folder, not a TOML file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ConfigError(f"config {path}: not valid TOML: {err}") from None
    base = os.path.dirname(os.path.abspath(path))
    imports = cfg.get("imports")
    if isinstance(imports, list):  # .py files: relative to the config's folder
        cfg["imports"] = [
            os.path.join(base, e) if isinstance(e, str) and e.endswith(".py") else e
            for e in imports
        ]
    try:
        return check(cfg, base=base)
    except ConfigError as err:  # of its kind (ImportInterrupted: exit status 130)
        raise type(err)(f"config {path}: {err}") from None
