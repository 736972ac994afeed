"""Trace cases: fixed-confidence BAI (lucb)."""

CASES = []
