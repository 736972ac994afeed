"""benchmarks/kernels.py: the per-kernel profile finds a policy's step kernels."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # a profiled run in a child process (~6 s)
def test_kernel_profile_of_apt_lists_the_step_kernels():
    """One traced run of APT (K = 4, T = 300, 8 lanes on 2 host devices): every step
    runs the reward draw and the arg-min, so the kernels with one call per step per
    device (T lanes-steps each) are there, each named with the JAX operation it came
    from, and their shares add up to at most 100%."""
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.kernels", "apt", "--arms", "4",
         "--budget", "300", "--reps", "8", "--top", "40"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=True,
        env={"XLA_FLAGS": "--xla_force_host_platform_device_count=2",
             "JAX_PLATFORMS": "cpu", "PATH": "", "JBANDITS_PROGRESS": "0"},
    ).stdout  # fmt: skip
    rows = [
        line.split()
        for line in out.splitlines()
        if re.match(r"\s+\d+\s+[\d.]+\s+[\d.]+\s+[\d.]+%", line)
    ]
    assert rows, out
    assert out.startswith("apt K=4 T=300 R=8 on 2 x cpu"), out
    per_step = [r for r in rows if int(r[0]) >= 300]
    assert len(per_step) >= 5, out
    assert any("reduce" in r[-1] for r in per_step), out  # the arg-min
    assert sum(float(r[3].rstrip("%")) for r in rows) <= 100.5
