"""The experiments, the tuner and the benchmarks use the runner's public tier only
(issue 62, item 3): no private name of :mod:`jbandits.sim.runner` or of its modules
is imported or read as an attribute there, and none builds runner lanes itself
(``Lanes``, ``execute``, ``registered``, ``per_cell``, ``instance_keys``): they run
through the entry points (:func:`jbandits.simulate`, :func:`jbandits.sweep`)."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
USERS = ("experiments", os.path.join("jbandits", "tuning"), "benchmarks")
RUNNER = "jbandits.sim.runner"


def _is_runner(module: str) -> bool:
    return module == RUNNER or module.startswith(RUNNER + ".")


# the runner's lane-building tier: the entry points' business, not their users'
LANE_BUILDING = ("Lanes", "execute", "registered", "per_cell", "instance_keys")


def _bound(tree) -> tuple[set[str], list[tuple[str, str]]]:
    """(local names bound to the runner or one of its modules, ``(module, name)``
    of every name imported from them)."""
    bound: set[str] = set()
    imported = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _is_runner(node.module):
                    imported.append((node.module, alias.name))
                if _is_runner(full):
                    bound.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _is_runner(alias.name) and alias.asname:
                    bound.add(alias.asname)
    return bound, imported


def runner_names(source: str, wanted) -> list[str]:
    """``module.name`` for each runner name for which ``wanted(name)`` holds that
    ``source`` imports or reads through a name bound to the runner or one of its
    modules."""
    tree = ast.parse(source)
    bound, imported = _bound(tree)
    found = [f"{m}.{n}" for m, n in imported if wanted(n)]
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and wanted(node.attr)):
            continue
        base = node.value
        if isinstance(base, ast.Name) and base.id in bound:
            found.append(f"{base.id}.{node.attr}")
        elif _is_runner(ast.unparse(base)):
            found.append(f"{ast.unparse(base)}.{node.attr}")
    return found


def private_runner_names(source: str) -> list[str]:
    """``module.name`` for each private runner name that ``source`` imports or reads
    through a name bound to the runner or one of its modules."""
    return runner_names(source, lambda name: name.startswith("_"))


def lane_building_names(source: str) -> list[str]:
    """The same for the runner's lane-building names (:data:`LANE_BUILDING`)."""
    return runner_names(source, lambda name: name in LANE_BUILDING)


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


def test_the_check_finds_lane_building_runner_calls():
    assert sorted(
        lane_building_names(
            "from jbandits.sim import runner\nrunner.execute(s, b, runner.Lanes(*a))\n"
        )
    ) == ["runner.Lanes", "runner.execute"]
    assert lane_building_names(
        "from jbandits.sim.runner import work\nwork.per_cell(hp, 2)\n"
    ) == ["work.per_cell"]
    assert lane_building_names(
        "from jbandits.sim.runner import registered, Options\n"
    ) == ["jbandits.sim.runner.registered"]
    assert lane_building_names(
        "import jbandits\njbandits.sim.runner.instance_keys(k)\n"
    )
    assert not lane_building_names(
        "from jbandits.sim import runner\nrunner.Options()\nrunner.program_cache()\n"
        "jbandits.sweep(p)\nother.execute()\n"
    )


def _found(check) -> list[str]:
    found = []
    for folder in USERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, folder)):
            for name in sorted(files):
                if name.endswith(".py"):
                    path = os.path.join(dirpath, name)
                    with open(path, encoding="utf-8") as f:
                        names = check(f.read())
                    rel = os.path.relpath(path, ROOT)
                    found += [f"{rel}: {n}" for n in names]
    return found


def test_experiments_tuner_and_benchmarks_use_public_runner_names():
    found = _found(private_runner_names)
    assert not found, "private runner names used: " + "; ".join(found)


def test_experiments_tuner_and_benchmarks_build_no_runner_lanes():
    found = _found(lane_building_names)
    assert not found, (
        "runner lanes built outside the entry points (use jbandits.simulate or "
        "jbandits.sweep): " + "; ".join(found)
    )
