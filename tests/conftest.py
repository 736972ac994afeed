import os
import sys

# Trace equivalence compares JAX against plain Python bit for bit. XLA's CPU backend
# contracts a*b + c into fused multiply-adds on FMA hardware, which Python never does,
# so Welford's M2 could differ in the last ulp and flip a later arg-max (seen with
# SHAdaVar). Tests therefore compile without FMA; this must precede JAX's backend start.
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX"
).strip()
# The suite is dominated by compiling many small programs that run for milliseconds;
# LLVM's optimisation level 0 cuts ~20% of its CPU time (tests/test_engine.py: 57.6 ->
# 46.8 s) and changes no result (no fast-math at any level; FMA is ruled out above).
# tests/test_default_build.py removes both flags for its child process.
os.environ["XLA_FLAGS"] += " --xla_backend_optimization_level=0"

sys.path.insert(0, os.path.dirname(__file__))
