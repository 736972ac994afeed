"""benchmarks/gpu.py end to end on whatever device runs the tests (tiny sizes)."""

import json

import pytest

from benchmarks import gpu


@pytest.mark.slow
@pytest.mark.fused  # runs the fused backend: in the fused step of .ci/run
@pytest.mark.seconds(75)  # its call on 2 idle cores, 2026-12-06
def test_gpu_benchmark_prints_rates_kernels_and_the_check(tmp_path, capsys):
    gpu.main(
        [
            "--arms", "10", "--steps", "64", "--min-arm-lanes", "1e3", "--max-arm-lanes", "1e3",
            "--curve", "apt", "--table", "sequential_halving", "--table-arm-lanes",
            "1e3", "--check", "--reps", "4", "--out", str(tmp_path),
            "--backends", "xla,fused",
        ]
    )  # fmt: skip
    out = capsys.readouterr().out
    # the check runs every CHECK policy on the default device and on the CPU
    for label in gpu.CHECK:
        assert f"{label}" in out and "identical lanes 4/4" in out
    rows = json.loads((tmp_path / "gpu_rows.json").read_text())["rows"]
    assert [(r["policy"], r["backend"]) for r in rows] == [
        ("apt", "xla"), ("apt", "fused"),
        ("sequential_halving", "xla"), ("sequential_halving", "fused"),
    ]  # fmt: skip
    # the fused backend (interpret mode off a GPU) against the device's XLA
    assert "fused (ran: fused) vs device xla identical lanes 4/4" in out
    for r in rows:
        assert r["mpulls_s"] > 0
        if r["backend"] == "xla":  # counted, not "?"
            assert r["kernels"].split()[1] == "kernels", r["kernels"]
