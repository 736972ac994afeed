"""The core layer: types, the registry, the numbers (which argument is static, which
is traced), execution options, validation, PRNG. It imports nothing else of jbandits."""
