"""The command line: ``jbandits sweep CONFIG`` (:mod:`jbandits.cli.main`, its
``main``) and the sweep-config schema (:mod:`jbandits.cli.config`)."""
