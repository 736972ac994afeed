"""The errors of ``jbandits sweep``'s config (:mod:`jbandits.cli.config`)."""

from __future__ import annotations


class ConfigError(ValueError):
    """A sweep config that does not match :data:`jbandits.cli.config.SCHEMA`, or
    whose ``imports`` cannot be imported (one line)."""


class ImportInterrupted(ConfigError):
    """A config's import raised KeyboardInterrupt (``jbandits sweep`` exits 130)."""
