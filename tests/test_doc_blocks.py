"""Every ```python block of README.md and docs/ runs: each file's blocks in order,
in one fresh interpreter (a subprocess, CPU, in an empty folder), as a reader who
pastes them one after the other would run them.

A block that must not run is marked by an HTML comment on the line before its fence
(blank lines between are allowed), with the reason::

    <!-- skip-block: needs a GPU -->
    ```python
    ...

(invisible on GitHub and in the built site). The marked blocks are counted and
listed by :func:`test_every_block_runs_or_is_marked`; a marker with no reason, or
not followed by a python block, is an error. Notebooks are executed by the docs
build (and tests/test_notebooks.py), not here.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^(\s*)```python\s*$")
SKIP = re.compile(r"^\s*<!--\s*skip-block:(.*?)-->\s*$")

#: files whose blocks take more than a few seconds on 2 cores (CI's slow step)
#: (measured on the shared 2 cores under load 4-6: own_policy 69 s, own_family 46 s,
#: sweeps 34 s, tuning 21 s; README, index and quickstart 9-12 s each idle)
SLOW = {
    "docs/guides/own_policy.md",
    "docs/guides/own_family.md",
    "docs/guides/sweeps.md",
    "docs/guides/tuning.md",
}

# runs the blocks of one file, in order, in one namespace; a traceback names the
# Markdown file and its line
DRIVER = """
import json, sys
ns = {"__name__": "__main__"}
for path, line, code in json.load(sys.stdin):
    exec(compile("\\n" * (line - 1) + code, path, "exec"), ns)
"""


class Block:
    def __init__(self, path: str, line: int, code: str, skip: str | None):
        self.path, self.line, self.code, self.skip = path, line, code, skip


def markdown_files() -> list[str]:
    """README.md and the Markdown files under docs/ that git tracks or would
    (generated and built pages are ignored), relative to the repository."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard",
             "README.md", "docs"],
            cwd=ROOT, capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):  # not a git checkout
        out = ["README.md"] + [
            str(p.relative_to(ROOT))
            for p in (ROOT / "docs").rglob("*.md")
            if "_build" not in p.parts
        ]
    return sorted({p for p in out if p.endswith(".md") and (ROOT / p).is_file()})


def blocks(path: str) -> list[Block]:
    """The python blocks of ``path`` with their first line and skip reason."""
    lines = (ROOT / path).read_text().splitlines()
    found, skip, i = [], None, 0
    while i < len(lines):
        marker, fence = SKIP.match(lines[i]), FENCE.match(lines[i])
        if marker:
            if skip is not None:
                raise AssertionError(f"{path}:{i + 1}: two skip-block markers")
            skip = (marker.group(1).strip(), i + 1)
            if not skip[0]:
                raise AssertionError(f"{path}:{i + 1}: skip-block without a reason")
        elif fence:
            indent, start, body = fence.group(1), i + 2, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i])
                i += 1
            if i == len(lines):
                raise AssertionError(f"{path}:{start - 1}: unclosed python block")
            code = textwrap.dedent("\n".join(body)) if indent else "\n".join(body)
            found.append(Block(path, start, code, skip and skip[0]))
            skip = None
        elif skip is not None and lines[i].strip():
            raise AssertionError(
                f"{path}:{skip[1]}: skip-block marker not followed by a python block"
            )
        i += 1
    if skip is not None:
        raise AssertionError(f"{path}:{skip[1]}: skip-block marker at the end")
    return found


FILES = [f for f in markdown_files() if any(not b.skip for b in blocks(f))]


def test_every_block_runs_or_is_marked():
    runs, skipped = 0, []
    for path in markdown_files():
        for b in blocks(path):
            if b.skip:
                skipped.append(f"{path}:{b.line} ({b.skip})")
            else:
                runs += 1
    print(f"{runs} python blocks run in {len(FILES)} files; {len(skipped)} marked")
    print("\n".join(skipped))
    assert runs > 0 and FILES
    assert {"README.md", "docs/guides/own_policy.md"} <= set(FILES)


def run_blocks(path: str, cwd, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run the unmarked blocks of ``path`` in a fresh interpreter in ``cwd``."""
    todo = [[b.path, b.line, b.code] for b in blocks(path) if not b.skip]
    env = dict(os.environ, JAX_PLATFORMS="cpu", JBANDITS_PROGRESS="0")
    env["MPLBACKEND"] = "Agg"
    return subprocess.run(
        [sys.executable, "-c", DRIVER], input=json.dumps(todo), cwd=cwd, env=env,
        capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip


@pytest.mark.parametrize(
    "path", [pytest.param(f, marks=pytest.mark.slow) if f in SLOW else f for f in FILES]
)
def test_blocks_run(path, tmp_path):
    proc = run_blocks(path, tmp_path)
    assert proc.returncode == 0, f"{path}:\n{proc.stderr[-4000:]}"


def test_a_failing_block_fails(tmp_path):
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# t\n\n```python\nx = 1\n```\n\n<!-- skip-block: demo -->\n```python\n"
        "raise SystemExit(3)\n```\n\n```python\nassert x == 2, 'x is 1'\n```\n"
    )
    global ROOT
    old, ROOT = ROOT, tmp_path
    try:
        found = blocks("docs/page.md")
        assert [b.skip for b in found] == [None, "demo", None]
        proc = run_blocks("docs/page.md", tmp_path)
    finally:
        ROOT = old
    assert proc.returncode != 0
    assert 'docs/page.md", line 13' in proc.stderr and "x is 1" in proc.stderr
