"""Trace cases: fixed-confidence BAI (top_two)."""

CASES = []
