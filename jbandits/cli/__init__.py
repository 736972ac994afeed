"""The command line: ``jbandits sweep CONFIG`` (:mod:`jbandits.cli.main`, its
``main``; the console script starts at :mod:`jbandits.cli.launch`, which handles
Ctrl-C from the first import on with :mod:`jbandits.cli.interrupt`) and the
sweep-config schema (:mod:`jbandits.cli.config`)."""
