"""Cumulative-regret policies."""

# name -> factory; every entry is registered in jbandits.registry
POLICIES = {}
