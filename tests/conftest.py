import os
import sys

# Trace equivalence compares JAX against plain Python bit for bit. XLA's CPU backend
# contracts a*b + c into fused multiply-adds on FMA hardware, which Python never does,
# so Welford's M2 could differ in the last ulp and flip a later arg-max (seen with
# SHAdaVar). Tests therefore compile without FMA; this must precede JAX's backend start.
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX").strip()

sys.path.insert(0, os.path.dirname(__file__))
