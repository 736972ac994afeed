"""Trace cases: fixed-confidence BAI (tracking)."""

CASES = []
