"""Trace equivalence of the fixed-confidence BAI policies: JAX policy == plain-Python
reference on the same replay table (tests/trace_files.py)."""

from trace_files import trace_test

test_trace_equivalence = trace_test("fixed_confidence")
