"""Sphinx configuration of the jbandits documentation site.

Build (from the repository root, after ``pip install -e ".[docs]"``)::

    python -m sphinx -W --keep-going -b html docs docs/_build/html

Before Sphinx reads any page, :mod:`generate` (docs/generate.py) writes the pages that
come from the code: one page per registered policy (``docs/algorithms/``, from the
registry plus the hand-written notes in ``docs/algorithm_notes/``), the API lists
(``docs/api/``), the reproductions gallery (``docs/gallery/``, from the experiments'
registry and ``experiments/REPORT.md``) and copies of ``notebooks/*.ipynb``
(``docs/notebooks/``), which myst-nb executes during the build.
"""

from __future__ import annotations

import inspect
import os
import pathlib
import re
import shutil
import sys

DOCS = pathlib.Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))
os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("JBANDITS_PROGRESS", "0")
# the notebooks' kernels import the checkout's jbandits even without an install
os.environ["PYTHONPATH"] = os.pathsep.join(
    [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
)

import generate  # noqa: E402

import jbandits  # noqa: E402

generate.main()

project = "jbandits"
author = "the jbandits authors"
copyright = "2026, the jbandits authors"
release = version = jbandits.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
]

# .rst first: autosummary writes its generated pages with the first suffix
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = [
    "_build",
    "jupyter_execute",
    "algorithm_notes",
    "_templates",
    "**.ipynb_checkpoints",
]
templates_path = ["_templates"]

# MyST: $...$ / $$...$$ math, ::: fences, definition lists, heading anchors
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# notebooks: executed at every build (CPU), an error fails the build
nb_execution_mode = "force"
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
nb_merge_streams = True

# API reference: Google-style docstrings, one page per public name
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False, "show-inheritance": False}
autodoc_typehints = "signature"
# show the alias, not the union it expands to
autodoc_type_aliases = {"ArrayLike": "ArrayLike", "Array": "Array"}
autodoc_member_order = "bysource"
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

html_theme = "sphinx_book_theme"
html_title = "jbandits"
html_theme_options = {
    "show_toc_level": 2,
    "home_page_in_toc": True,
    # a gallery page gives its width to the figure (div.full-width): no page TOC
    # (patterns must not overlap: the theme refuses a page that matches two)
    "secondary_sidebar_items": {
        **{p: ["page-toc.html"] for p in ("*", "guides/*", "algorithms/*", "api/**")},
        "notebooks/*": ["page-toc.html"],
        "gallery/*": [],
    },
}
html_static_path = ["_static"]
html_css_files = ["jbandits.css"]


# ------------------------------------------------------------------ docstring hooks
# The library's docstrings are written for help() and the terminal: ``|x - tau|`` is
# an absolute value there, while reStructuredText reads ``|...|`` as a substitution.
# Escape such pipes (outside inline literals and literal blocks) instead of changing
# the docstrings. A constant (a dict of iteration counts, ...) has no docstring of
# its own: autodoc would show its type's (dict's), so show its value instead.
_PIPE = re.compile(r"(?<![\\\w|])\|(?=[^\s|])")
_LITERAL = re.compile(r"(``.+?``)")


def _escape_pipes(line: str) -> str:
    parts = _LITERAL.split(line)
    return "".join(p if i % 2 else _PIPE.sub(r"\\|", p) for i, p in enumerate(parts))


def _type_docstring(obj, lines) -> bool:
    """A constant whose docstring is its type's (dict's, int's, ...)."""
    if inspect.isfunction(obj) or inspect.isclass(obj) or inspect.ismodule(obj):
        return False
    doc = type(obj).__doc__
    if not isinstance(doc, str):  # e.g. a member descriptor of a slotted class
        return False
    return bool(lines and doc and lines[0].strip() == doc.strip().splitlines()[0])


def _process_docstring(app, what, name, obj, options, lines):
    if what in ("data", "attribute") and _type_docstring(obj, lines):
        text = repr(obj)
        text = text if len(text) < 200 else type(obj).__name__
        lines[:] = [f"Constant: ``{text}``."]
        return
    in_literal, indent = False, 0
    for i, line in enumerate(lines):
        stripped = line.strip()
        width = len(line) - len(line.lstrip())
        if in_literal:
            if stripped and width <= indent:
                in_literal = False
            else:
                continue
        if stripped.startswith(("|", "+")):  # a table or a line block
            continue
        lines[i] = _escape_pipes(line)
        if stripped.endswith("::"):
            in_literal, indent = True, width


# Sphinx 9 evaluates ``ArrayLike | None`` with the alias as a TypeAliasForwardRef and
# prints that object's repr in the signature: print the alias's name instead.
_FORWARD_REF = re.compile(r"TypeAliasForwardRef\('([^']+)'\)")


def _process_signature(app, what, name, obj, options, signature, return_annotation):
    def clean(text):
        return _FORWARD_REF.sub(r"\1", text) if text else text

    return clean(signature), clean(return_annotation)


def setup(app):
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("autodoc-process-signature", _process_signature)
    app.connect("build-finished", _copy_mathjax)


# ------------------------------------------------------------------ math, offline
# MathJax is served with the site: the MathJax 3 distribution of the PyPI package
# django-static-mathjax (Apache-2.0; plain files, no Django needed; in the ``docs``
# extra) is copied into ``_static/mathjax/`` at the end of the build, so the pages
# render their math with no network. JBANDITS_DOCS_MATHJAX=<url> uses another copy
# (a MathJax 3 ``tex-mml-chtml.js``) instead.
# Copied: the combined TeX/MathML -> CHTML component, its fonts and the components it
# loads on demand (TeX extensions, accessibility, menu), not the speech rule engine.
MATHJAX_PARTS = ("tex-mml-chtml.js", "input", "output", "a11y", "ui", "adaptors")


def _mathjax_source() -> pathlib.Path:
    try:
        import mathjax  # django-static-mathjax
    except ImportError:
        raise RuntimeError(
            "the docs serve MathJax from the package django-static-mathjax: "
            'pip install -e ".[docs]" (or set JBANDITS_DOCS_MATHJAX to a MathJax URL)'
        ) from None
    src = pathlib.Path(mathjax.__file__).parent / "static" / "mathjax" / "es5"
    if not (src / MATHJAX_PARTS[0]).exists():
        raise RuntimeError(f"no MathJax 3 distribution in {src}")
    return src


def _copy_mathjax(app, exception):
    if exception is not None or app.builder.format != "html" or _MATHJAX_URL:
        return
    src, dest = _mathjax_source(), pathlib.Path(app.outdir) / "_static" / "mathjax"
    for part in MATHJAX_PARTS:
        if (src / part).is_dir():
            shutil.copytree(src / part, dest / part, dirs_exist_ok=True)
        else:
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src / part, dest / part)


_MATHJAX_URL = os.environ.get("JBANDITS_DOCS_MATHJAX")
if _MATHJAX_URL:
    mathjax_path = _MATHJAX_URL
else:
    _mathjax_source()  # fail before the build, not after it
    mathjax_path = "mathjax/tex-mml-chtml.js"  # relative: served from _static/
