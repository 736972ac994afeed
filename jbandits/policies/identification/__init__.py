"""Best-arm identification (fixed budget / fixed confidence) and top-m policies."""

# name -> factory; every entry is registered in jbandits.registry
POLICIES = {}
