"""Ctrl-C outside a run: one line and exit status 130, no traceback. Standard library
only, so that a command installs it before its heavy imports (:mod:`jbandits.cli.launch`,
``python -m experiments``)."""

from __future__ import annotations

import os
import signal
import sys
import threading


def interrupted(*_, prog: str = "jbandits") -> None:
    """SIGINT outside a run's own handler (the imports, the config, the compilation
    cache, the summary and figure): one line and exit status 130, no traceback, after
    the file write in progress if any (:func:`jbandits.analysis.store.when_idle`)."""

    def stop():
        sys.stdout.flush()
        sys.stderr.write(f"\n{prog}: interrupted\n")
        sys.stderr.flush()
        os._exit(130)

    store = sys.modules.get("jbandits.analysis.store")
    store.when_idle(stop) if store is not None else stop()


def install(prog: str = "jbandits"):
    """Make SIGINT :func:`interrupted` (naming ``prog``) in the main thread; returns
    the previous handler (None in another thread, where nothing is changed)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda *_: interrupted(prog=prog))
