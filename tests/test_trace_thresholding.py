"""Trace equivalence of the thresholding policies: JAX policy == plain-Python reference on
the same replay table (tests/trace_files.py)."""

from trace_files import trace_test

test_trace_equivalence = trace_test("thresholding")
