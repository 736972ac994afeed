"""The layers contract (pyproject.toml [tool.importlinter]): each module of jbandits
imports only from its own layer or below, and no package or module is in an import
cycle with a sibling. CI also runs ``lint-imports`` itself."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_import_contracts_are_kept():
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    if not os.path.exists(exe):
        pytest.skip("import-linter is not installed (pip install -e '.[test]')")
    out = subprocess.run(
        [exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "0 broken" in out.stdout
