"""The size limits the README's module map states: no library file over 400 lines, no
function over 80 code lines (non-blank lines of its body that are not comments or its
docstring)."""

from __future__ import annotations

import ast
import io
import pathlib
import tokenize

import pytest

LIBRARY = pathlib.Path(__file__).resolve().parents[1] / "jbandits"
FILES = sorted(LIBRARY.rglob("*.py"))
MAX_FILE_LINES = 400
MAX_FUNCTION_CODE_LINES = 80


def _names(paths):
    return [str(p.relative_to(LIBRARY)) for p in paths]


def code_lines(source: str) -> dict[str, int]:
    """``{qualified-ish name: code lines}`` of every function in ``source``."""
    lines = source.splitlines()
    comment_only = {
        tok.start[0]
        for tok in tokenize.generate_tokens(io.StringIO(source).readline)
        if tok.type == tokenize.COMMENT and lines[tok.start[0] - 1].lstrip()[:1] == "#"
    }
    out = {}
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        first = node.body[0]
        value = getattr(first, "value", None)
        is_doc = isinstance(first, ast.Expr) and isinstance(value, ast.Constant)
        doc = set()
        if is_doc and isinstance(value.value, str):
            doc = set(range(first.lineno, first.end_lineno + 1))
        out[f"{node.name}:{node.lineno}"] = sum(
            1
            for i in range(first.lineno, node.end_lineno + 1)
            if lines[i - 1].strip() and i not in comment_only and i not in doc
        )
    return out


def test_the_library_has_files():
    assert len(FILES) > 50


@pytest.mark.parametrize("path", FILES, ids=_names(FILES))
def test_file_is_at_most_400_lines(path):
    n = path.read_text().count("\n")
    assert n <= MAX_FILE_LINES, f"{path.name}: {n} lines (limit {MAX_FILE_LINES})"


@pytest.mark.parametrize("path", FILES, ids=_names(FILES))
def test_functions_are_at_most_80_code_lines(path):
    long = {
        name: n
        for name, n in code_lines(path.read_text()).items()
        if n > MAX_FUNCTION_CODE_LINES
    }
    assert not long, f"{path.name}: functions over {MAX_FUNCTION_CODE_LINES}: {long}"


def test_code_lines_counts_what_it_says():
    """The counter skips the docstring, comment-only and blank lines."""
    source = 'def f(x):\n    """Doc.\n\n    More."""\n    # note\n\n    y = x  # kept\n    return y\n'
    assert code_lines(source) == {"f:1": 2}
