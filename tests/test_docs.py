"""The documentation's inputs cover the library: every registered policy has a
hand-written note (docs/algorithm_notes/<name>.md, from which the docs build writes
its page), and every public name lands on an API page (docs/generate.py)."""

import importlib.util
import pathlib
import re

import jbandits

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"


def _generate():
    spec = importlib.util.spec_from_file_location("docs_generate", DOCS / "generate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_registered_policy_has_a_docs_note():
    notes = DOCS / "algorithm_notes"
    missing = [n for n in jbandits.names() if not (notes / f"{n}.md").exists()]
    assert not missing, f"add docs/algorithm_notes/<name>.md for {missing}"
    for name in jbandits.names():
        text = (notes / f"{name}.md").read_text()
        assert re.search(r"^# .+", text, re.M), f"{name}: no '# title' line"
        assert re.search(r"^setting: .+", text, re.M), f"{name}: no 'setting:' line"


CONTAINERS = (
    "jbandits.analysis",
    "jbandits.core",
    "jbandits.policies",
    "jbandits.policies.blocks",
)


def test_every_public_name_has_an_api_page():
    generate = _generate()
    listed = set(generate.public_names("jbandits"))
    modules = {m for m, _, _ in generate.API}
    for name in jbandits.__all__:
        value = getattr(jbandits, name)
        if name in jbandits.names():
            continue  # an algorithm page
        if hasattr(value, "__path__") or type(value).__name__ == "module":
            # a layer package only contains modules (each with its own page)
            assert value.__name__ in modules or value.__name__ in CONTAINERS, name
        else:
            assert name in listed, name
    for module in modules:
        assert generate.public_names(module), module
