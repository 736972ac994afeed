"""The CI time budget of tests/conftest.py: past ``JBANDITS_CI_DEADLINE`` no test
starts; each is skipped with a reason that says so and the run ends with their count."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pytest(deadline: str | None):
    env = {k: v for k, v in os.environ.items() if k != "JBANDITS_CI_DEADLINE"}
    if deadline is not None:
        env["JBANDITS_CI_DEADLINE"] = deadline
    cmd = [sys.executable, "-m", "pytest", "tests/test_prng.py", "-n", "0",
           "-p", "no:cacheprovider", "-rs"]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)


def test_past_the_deadline_no_test_starts_and_the_run_says_how_many():
    out = _pytest("1")  # 1970
    assert out.returncode == 0, out.stdout + out.stderr
    assert "tests not run: past the CI time budget" in out.stdout
    assert " passed" not in out.stdout and " skipped" in out.stdout


def test_before_the_deadline_the_tests_run():
    out = _pytest("4102444800")  # 2100
    assert out.returncode == 0, out.stdout + out.stderr
    assert "past the CI time budget" not in out.stdout and " passed" in out.stdout
