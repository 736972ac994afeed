"""Ctrl-C in the first seconds of a command, while it imports the library (JAX):
one line and exit status 130, no traceback (``jbandits`` and ``python -m
experiments``). ``import jbandits`` itself loads nothing (PEP 562), so the command's
handler is in place before the heavy imports start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(os.path.dirname(sys.executable), "jbandits")
# the console script's own lines (pip writes them from pyproject's [project.scripts])
LAUNCH = "import sys; from jbandits.cli.launch import main; sys.exit(main())"


def _maps(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/maps") as f:
            return f.read()
    except OSError:
        return ""


def _interrupt_while_importing(cmd: list[str]) -> tuple[int, str]:
    """Start ``cmd``, send SIGINT once NumPy's extension is mapped (the heavy
    imports have begun: JAX follows, for a second or more), return (rc, stderr)."""
    env = {**os.environ, "PYTHONPATH": ROOT, "JBANDITS_COMPILE_CACHE": "0"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, env=env, cwd=ROOT)  # fmt: skip
    deadline = time.monotonic() + 120
    while "_multiarray_umath" not in _maps(proc.pid):
        assert proc.poll() is None, "the command ended before its imports"
        assert time.monotonic() < deadline
        time.sleep(0.002)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


@pytest.mark.skipif(not os.path.exists("/proc/self/maps"), reason="needs /proc")
@pytest.mark.parametrize(
    "cmd, line",
    [
        ([sys.executable, "-c", LAUNCH, "list"], "jbandits: interrupted"),
        ([sys.executable, "-m", "experiments", "list"], "experiments: interrupted"),
    ],
    ids=["jbandits", "experiments"],
)
def test_ctrl_c_during_the_imports_is_one_line_and_130(cmd, line):
    rc, err = _interrupt_while_importing(cmd)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert rc == 130, err
    assert [x for x in err.splitlines() if x.strip()] == [line]


def test_the_console_script_is_the_launcher():
    """pyproject's script (and the installed one, where it is) starts at the
    launcher, whose module chain imports no JAX."""
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert 'jbandits = "jbandits.cli.launch:main"' in f.read()
    if os.path.exists(SCRIPT):
        with open(SCRIPT) as f:
            assert "from jbandits.cli.launch import main" in f.read()
    out = subprocess.run(
        [sys.executable, "-c", "import sys, jbandits.cli.launch; "
         "print(sorted(m for m in ('jax', 'numpy') if m in sys.modules))"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": ROOT},
        check=True,
    )  # fmt: skip
    assert out.stdout.strip() == "[]"


def test_import_jbandits_is_light_and_its_names_are_as_before():
    """``import jbandits`` imports no JAX; the first name used loads the library, and
    then the submodules an eager import made reachable are there
    (``jbandits.core.registry``, ``jbandits.analysis.store``, ...)."""
    code = (
        "import sys, jbandits\n"
        "light = 'jax' not in sys.modules\n"
        "reg = jbandits.core.registry\n"
        "print(light, 'jax' in sys.modules, len(reg.names()) > 30,\n"
        "      callable(jbandits.apt), 'simulate' in dir(jbandits),\n"
        "      set(jbandits.__all__) >= {'simulate', 'make', 'ucb1', 'sim'})"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": ROOT}, check=True,
    )  # fmt: skip
    assert out.stdout.split() == ["True"] * 6, out.stdout + out.stderr
