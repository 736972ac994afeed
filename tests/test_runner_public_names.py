"""The experiments, the tuner and the benchmarks use the runner's public tier only
(issue 62, item 3): no private name of :mod:`jbandits.sim.runner` or of its modules
is imported or read as an attribute there."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USERS = ("experiments", os.path.join("jbandits", "tuning"), "benchmarks")
RUNNER = "jbandits.sim.runner"


def _is_runner(module: str) -> bool:
    return module == RUNNER or module.startswith(RUNNER + ".")


def private_runner_names(source: str) -> list[str]:
    """``module.name`` for each private runner name that ``source`` imports or reads
    through a name bound to the runner or one of its modules."""
    tree = ast.parse(source)
    bound: set[str] = set()  # local names of the runner and its modules
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _is_runner(node.module) and alias.name.startswith("_"):
                    found.append(full)
                elif _is_runner(full):
                    bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_runner(alias.name) and alias.asname:
                    bound.add(alias.asname)
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and node.attr.startswith("_")):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in bound:
            found.append(f"{base.id}.{node.attr}")
        elif _is_runner(ast.unparse(base)):
            found.append(f"{ast.unparse(base)}.{node.attr}")
    return found


def test_the_check_finds_private_runner_names():
    assert private_runner_names(
        "from jbandits.sim import runner\nrunner._per_cell(x, 2)\n"
    ) == ["runner._per_cell"]
    assert private_runner_names(
        "from jbandits.sim.runner import programs\nprograms._CACHE.clear()\n"
    ) == ["programs._CACHE"]
    assert private_runner_names("from jbandits.sim.runner.work import _per_cell\n") == [
        "jbandits.sim.runner.work._per_cell"
    ]
    assert private_runner_names("import jbandits.sim.runner\njbandits.sim.runner._x\n")
    assert not private_runner_names(
        "from jbandits.sim import runner\nrunner.per_cell(x, 2)\nother._private\n"
    )


def test_experiments_tuner_and_benchmarks_use_public_runner_names():
    found = []
    for folder in USERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        names = private_runner_names(f.read())
                    rel = os.path.relpath(path, ROOT)
                    found += [f"{rel}: {n}" for n in names]
    assert not found, "private runner names used: " + "; ".join(found)
