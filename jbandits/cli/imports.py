"""The ``imports`` of a ``jbandits sweep`` config: modules and ``.py`` files whose
code runs (they register policies and reward families) before the config is
checked.

A ``.py`` file is run as a module of a private name (:func:`private_name`), never
its bare name, so a file called ``json.py`` does not replace the standard library's
``json`` for the rest of the process; a module name is imported from ``sys.path``
first, then the current folder. An import that fails, calls ``sys.exit()`` or
raises KeyboardInterrupt is one :class:`~jbandits.cli.errors.ConfigError` line.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import keyword
import os
import sys

from jbandits.cli.errors import ConfigError, ImportInterrupted


def run(entries: list, base: str) -> None:
    """Import every entry of a config's ``imports`` (a list of non-empty strings): a
    module name (dotted identifiers) or a ``.py`` file (relative to ``base``)."""
    for i, entry in enumerate(entries):
        where = f"imports[{i}]: {entry!r}"
        if not entry.endswith(".py"):
            _check_module_name(entry, where, base)
        try:
            if entry.endswith(".py"):
                _import_file(os.path.abspath(os.path.join(base, entry)))
            else:
                _import_module(entry)
        except ConfigError as err:
            raise ConfigError(f"{where}: {err}") from None
        except SystemExit as err:
            raise ConfigError(
                f"{where} called sys.exit({err.code!r}) while it was imported: a "
                "config's imports run as modules (define and register; keep a "
                'script\'s own work under `if __name__ == "__main__":`)'
            ) from None
        except KeyboardInterrupt:
            raise ImportInterrupted(
                f"{where}: interrupted while importing it"
            ) from None
        except BaseException as err:  # the user's module: any failure, one line
            hint = ""
            if isinstance(err, ModuleNotFoundError) and err.name == entry.split(".")[0]:
                hint = (
                    " (a module name is imported from sys.path, then the current "
                    "folder; a file of yours: give its .py name)"
                )
            raise ConfigError(
                f"imports[{i}]: cannot import {entry!r}: {type(err).__name__}: {err}"
                + hint
            ) from None


def _check_module_name(entry: str, where: str, base: str) -> None:
    """ConfigError unless ``entry`` is a dotted module name (not a file's name)."""
    what = (
        "neither a module name (dotted identifiers, e.g. my_package.families) nor "
        "a .py file (e.g. my_family.py)"
    )
    if os.path.exists(os.path.join(base, entry)) or os.path.exists(entry):
        raise ConfigError(f"{where} names a file that is not a .py file: it is {what}")
    parts = entry.split(".")
    if not all(p.isidentifier() and not keyword.iskeyword(p) for p in parts):
        raise ConfigError(f"{where} is {what}")


def private_name(path: str) -> str:
    """The module name a config's ``.py`` import is loaded under: private to
    jbandits and one per file (``_jbandits_config_<stem>_<digest of the path>``),
    so it never shadows a module of the standard library or of a package."""
    stem = os.path.splitext(os.path.basename(path))[0]
    stem = "".join(c if c.isalnum() or c == "_" else "_" for c in stem)
    tag = hashlib.sha256(os.path.realpath(path).encode()).hexdigest()[:12]
    return f"_jbandits_config_{stem}_{tag}"


def _import_file(path: str) -> None:
    """Run the file ``path`` as the module :func:`private_name` (again if its text
    changed since it was last run in this process)."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no file {path}")
    with open(path, "rb") as f:
        text = f.read()
    digest = hashlib.sha256(text).hexdigest()
    name = private_name(path)
    loaded = sys.modules.get(name)
    if getattr(loaded, "__jbandits_source__", None) == digest:
        return
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None:
        raise ConfigError(f"{path} cannot be loaded as a Python module")
    module = importlib.util.module_from_spec(spec)
    module.__jbandits_source__ = digest
    sys.modules[name] = module  # dataclasses and pickling look their module up
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        if loaded is not None:
            sys.modules[name] = loaded
        raise


def _import_module(name: str) -> None:
    """Import module ``name`` (the current folder searched after ``sys.path``: a
    local file never shadows an installed module)."""
    here = os.getcwd()
    added = here not in sys.path
    if added:
        sys.path.append(here)
    try:
        importlib.import_module(name)
    finally:
        if added and here in sys.path:
            sys.path.remove(here)
