"""The CI time budget of tests/conftest.py: past ``JBANDITS_CI_DEADLINE`` no test
starts; each is skipped with a reason that says so and the run ends with their count."""

import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pytest(deadline: str | None, *args: str):
    """``pytest -n 0 ARGS`` in a child process, with ``JBANDITS_CI_DEADLINE`` set to
    ``deadline`` (unset if None)."""
    env = {k: v for k, v in os.environ.items() if k != "JBANDITS_CI_DEADLINE"}
    if deadline is not None:
        env["JBANDITS_CI_DEADLINE"] = deadline
    env["PYTHONPATH"] = os.path.join(ROOT, "tests")  # for `-p conftest` below
    cmd = [sys.executable, "-m", "pytest", *args, "-n", "0", "-p", "no:cacheprovider",
           "-rs"]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)


def test_past_the_deadline_no_test_starts_and_the_run_says_how_many():
    out = _pytest("1", "tests/test_prng.py")  # 1970
    assert out.returncode == 0, out.stdout + out.stderr
    assert "tests not run: past the CI time budget" in out.stdout
    assert " passed" not in out.stdout and " skipped" in out.stdout


def test_before_the_deadline_the_tests_run():
    out = _pytest("4102444800", "tests/test_prng.py")  # 2100
    assert out.returncode == 0, out.stdout + out.stderr
    assert "past the CI time budget" not in out.stdout and " passed" in out.stdout


def test_a_long_test_does_not_start_when_it_could_not_end_in_time(tmp_path):
    """A test marked ``seconds(s)`` is skipped when now + 2.5 s would pass the
    deadline by more than the 15-minute grace; the others still run."""
    test = tmp_path / "test_long.py"
    test.write_text(
        "import pytest\n\n\n"
        "@pytest.mark.seconds(1000)\n"
        "def test_long():\n    pass\n\n\n"
        "def test_short():\n    pass\n"
    )
    # a file outside tests/: the project's settings and tests/conftest.py named
    out = _pytest(
        str(time.time() + 600), str(test), "--rootdir", ROOT,
        "-c", os.path.join(ROOT, "pyproject.toml"), "--confcutdir", ROOT,
        "-p", "conftest",
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "1 tests not run: past the CI time budget" in out.stdout
    assert "test_long" in out.stdout and "1 passed" in out.stdout
