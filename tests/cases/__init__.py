"""Trace cases of every registered policy: every module here exposes ``CASES``."""

import importlib
import pkgutil

CASES = []
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    CASES += importlib.import_module(f"cases.{_info.name}").CASES
