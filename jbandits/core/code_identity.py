"""A digest of code: what identifies a policy's or a reward family's program.

A registered name does not identify code: unregister it and register other code
under it, or run an edited notebook cell again, and the name stays. The compiled
program cache (:mod:`jbandits.sim.runner.programs`) and the results store
(:mod:`jbandits.analysis.store`) therefore key on :func:`digest` of the functions a
program is made of: the policy's factory and host hook, the family's sampler, mean
and standard-deviation functions.

:func:`digest` walks a function's code object (byte code, constants, names, nested
functions), its defaults, what its closure cells hold, and the globals its code
names (helper functions, classes, constants, the attributes of modules it names),
recursively, through the code of ``jbandits`` and of every module that is neither
the standard library nor an installed package (a script, a notebook's cells, a
sweep config's imports, a local package): :func:`followed`. Functions of other
modules (``jax``, ``numpy``) count by their module and qualified name. Values count
by type and contents (numbers, strings, arrays' bytes, tuples, dicts, dataclasses);
another object by its type and name. The digest is the same in every process (no
addresses, no hash-randomised order), so a store can check it when it is resumed;
byte code is Python's, so another Python minor version is other code.

Not part of the identity: the code of installed packages (a new ``jax``), an
object's attributes beyond the containers above, files or data a function reads.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import sys
import sysconfig
import types
from typing import Any

_ALWAYS = ("jbandits",)  # followed wherever it is installed (the library itself)
_PLAIN = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_MAX_NODES = 200_000  # a bound on the walk (a pathological object graph)


def digest(*objects: Any) -> str:
    """SHA-256 (hex) of the code and values of ``objects`` (see the module
    docstring); equal code and values give equal digests in every process."""
    walk = _Walk()
    for obj in objects:
        walk.value(obj)
    text = repr((f"py{sys.version_info[:2]}", walk.tokens))
    return hashlib.sha256(text.encode()).hexdigest()


_FOLLOWED: dict[str, bool] = {}  # module name -> followed


def followed(module: Any) -> bool:
    """Whether the code of ``module`` (a module name) is part of an identity: the
    library's own, and every module that is neither the standard library nor an
    installed package (a script, a notebook, a config's import, a local package).
    """
    if not isinstance(module, str) or not module:
        return True  # code run by exec() without a module: a user's
    found = _FOLLOWED.get(module)
    if found is None:
        found = _user_code(module)
        if module in sys.modules:
            _FOLLOWED[module] = found
    return found


def _user_code(module: str) -> bool:
    if module.partition(".")[0] in _ALWAYS:
        return True
    if module in sys.builtin_module_names or module.partition(".")[0] in getattr(
        sys, "stdlib_module_names", ()
    ):
        return False
    file = getattr(sys.modules.get(module), "__file__", None)
    if not file:  # __main__ of a notebook, a module made by exec, no module
        return True
    file = os.path.realpath(file)
    return not any(file.startswith(root) for root in _installed())


@functools.cache
def _installed() -> tuple:
    """The folders of the standard library and of installed packages."""
    paths = sysconfig.get_paths()
    roots = {paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    roots.update(p for p in sys.path if "site-packages" in p or "dist-packages" in p)
    return tuple(os.path.join(os.path.realpath(r), "") for r in roots if r)


class _Walk:
    """One digest: a depth-first walk that collects tokens (hashed at the end)."""

    def __init__(self):
        self.tokens: list = []
        self.seen: dict[int, int] = {}  # id -> visit index (cycles, shared objects)
        self.keep: list = []  # objects seen (their ids stay valid during the walk)

    def put(self, *tokens) -> None:
        self.tokens.append(tokens)

    def _visit(self, obj) -> bool:
        """False (after writing a back-reference) if ``obj`` was walked already."""
        key = id(obj)
        if key in self.seen:
            self.put("ref", self.seen[key])
            return False
        if len(self.seen) >= _MAX_NODES:
            raise ValueError("code_identity: object graph too large to digest")
        self.seen[key] = len(self.seen)
        self.keep.append(obj)
        return True

    # ------------------------------------------------------------------ values
    def value(self, obj) -> None:
        if isinstance(obj, _PLAIN):
            self.put(type(obj).__name__, obj)
            return
        if not self._visit(obj):
            return
        if isinstance(obj, (tuple, list)):
            self.put(_name(type(obj)), len(obj))
            for item in obj:
                self.value(item)
        elif isinstance(obj, dict):
            self.put("dict", len(obj))
            for k in sorted(obj, key=repr):
                self.value(k)
                self.value(obj[k])
        elif isinstance(obj, (set, frozenset)):
            self.put(type(obj).__name__, sorted(map(repr, obj)))
        elif isinstance(obj, types.FunctionType):
            self.function(obj)
        elif isinstance(obj, types.CodeType):
            self.code(obj, None)
        elif isinstance(obj, types.MethodType):
            self.put("method")
            self.value(obj.__func__)
            self.value(obj.__self__)
        elif isinstance(obj, types.ModuleType):
            self.put("module", obj.__name__)
        elif isinstance(obj, type):
            self.cls(obj)
        elif hasattr(obj, "func") and hasattr(obj, "keywords"):  # functools.partial
            self.put("partial")
            self.value(obj.func)
            self.value(tuple(getattr(obj, "args", ())))
            self.value(dict(obj.keywords or {}))
        elif dataclasses.is_dataclass(obj):
            self.put("dataclass", _name(type(obj)))
            for field in dataclasses.fields(obj):
                self.value(field.name)
                self.value(getattr(obj, field.name, None))
        elif hasattr(obj, "shape") and hasattr(obj, "dtype"):
            self.array(obj)
        elif callable(getattr(obj, "__wrapped__", None)):  # jax.jit, functools.wraps
            self.put("wrapped", _name(type(obj)))
            self.value(obj.__wrapped__)
        elif followed(type(obj).__module__) and isinstance(
            getattr(obj, "__dict__", None), dict
        ):  # an instance of a class of user code (a callable object): its class and
            # attributes
            self.put("instance")
            self.cls(type(obj))
            self.value(vars(obj))
        else:  # a builtin, a ufunc, another object: its type and name
            name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
            module = getattr(obj, "__module__", None)
            self.put("object", _name(type(obj)), _plain(module), _plain(name))

    def array(self, obj) -> None:
        import numpy as np

        try:
            arr = np.asarray(obj)
        except Exception:  # noqa: BLE001  (a key array, a tracer: its type counts)
            self.put("array?", _name(type(obj)), str(getattr(obj, "dtype", "")))
            return
        data = np.ascontiguousarray(arr).tobytes()
        self.put("array", arr.dtype.str, arr.shape, hashlib.sha256(data).hexdigest())

    def cls(self, obj: type) -> None:
        if not followed(obj.__module__):
            self.put("class", _name(obj))
            return
        self.put("class", obj.__qualname__)  # its code, wherever it is defined
        for base in obj.__bases__:
            self.put("base", _name(base))
        for key in sorted(vars(obj)):
            if key.startswith("__") and key not in ("__init__", "__call__"):
                continue
            item = vars(obj)[key]
            if isinstance(item, (staticmethod, classmethod)):
                item = item.__func__
            if isinstance(item, (types.FunctionType, *_PLAIN, tuple)):
                self.value(key)
                self.value(item)
        self.value(getattr(obj, "_fields", None))

    # ---------------------------------------------------------------- functions
    def function(self, fn: types.FunctionType) -> None:
        if not followed(fn.__module__):
            self.put("function", fn.__module__, fn.__qualname__)
            return
        self.put("function", fn.__qualname__)
        self.code(fn.__code__, fn.__globals__)
        self.value(fn.__defaults__)
        self.value(fn.__kwdefaults__)
        cells = fn.__closure__ or ()
        self.put("closure", len(cells))
        for cell in cells:
            try:
                content = cell.cell_contents
            except ValueError:  # an empty cell
                self.put("empty")
                continue
            self.value(content)

    def code(self, code: types.CodeType, globals_: dict | None) -> None:
        digest_, names = _code(code)
        self.put("code", digest_)
        if globals_ is None:
            return
        for name in names:
            if name not in globals_:
                continue
            item = globals_[name]
            self.put("global", name)
            if isinstance(item, types.ModuleType):
                self.put("module", item.__name__)
                if followed(item.__name__):
                    attrs = vars(item)  # no getattr: a lazy package stays unloaded
                    for attr in names:
                        if attr in attrs and not isinstance(
                            attrs[attr], types.ModuleType
                        ):
                            self.put("attr", attr)
                            self.value(attrs[attr])
            else:
                self.value(item)


_CODES: dict = {}  # code object -> (digest, sorted names): code objects are immutable


def _code(code: types.CodeType) -> tuple[str, tuple]:
    """The digest of a code object and its nested ones (byte code, constants,
    names), and the sorted names they use (remembered per code object)."""
    found = _CODES.get(code)
    if found is None:
        tokens: list = []
        names: set = set()
        _code_tokens(code, tokens, names)
        found = (
            hashlib.sha256(repr(tokens).encode()).hexdigest(),
            tuple(sorted(names)),
        )
        if len(_CODES) >= 65536:
            _CODES.clear()
        _CODES[code] = found
    return found


def _code_tokens(code: types.CodeType, tokens: list, names: set) -> None:
    tokens.append((code.co_argcount, code.co_kwonlyargcount, code.co_flags))
    tokens.append(code.co_code)
    tokens.append((code.co_names, code.co_varnames, code.co_freevars))
    tokens.append(code.co_cellvars)
    names.update(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            _code_tokens(const, tokens, names)
        else:
            tokens.append(_const(const))


def _const(const):
    """A code constant as a token that does not depend on hash randomisation (the
    order of a frozenset of strings)."""
    if isinstance(const, frozenset):
        return ("frozenset", sorted(repr(_const(c)) for c in const))
    if isinstance(const, tuple):
        return tuple(_const(c) for c in const)
    return (type(const).__name__, const)


def _plain(value):
    return value if isinstance(value, str) else None


def _name(obj: type) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', obj)}"


def family_digest(bandit: Any) -> str:
    """The digest of a reward family's code (a :class:`~jbandits.core.types.Bandit`):
    its sampler, mean and standard-deviation functions and its params class."""
    parts = [getattr(bandit, f, None) for f in ("sample", "means", "stds")]
    return digest(*parts, getattr(bandit, "params_type", None))
