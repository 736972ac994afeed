"""The command line: ``jbandits sweep CONFIG`` (:mod:`jbandits.cli.main`) and the
sweep-config schema (:mod:`jbandits.cli.config`)."""

from jbandits.cli.main import main

__all__ = ["main"]
