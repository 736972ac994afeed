"""The ``jbandits`` command's entry point: Ctrl-C is one line and exit status 130
from its first moment, the library's imports (JAX: 1.5-3 s) included.

``import jbandits`` loads nothing (:mod:`jbandits`), so this module runs before any
heavy import: :func:`main` installs :func:`jbandits.cli.interrupt.interrupted` for
SIGINT, then imports :mod:`jbandits.cli.main` and runs it (which keeps the handler
until its run installs its own).
"""

from __future__ import annotations

from jbandits.cli.interrupt import install


def main(argv=None) -> int:
    """``jbandits ...``: :func:`jbandits.cli.main.main` with Ctrl-C handled from the
    first import on."""
    install()
    from jbandits.cli.main import main as run

    return run(argv)


if __name__ == "__main__":  # python -m jbandits.cli.launch ...
    import sys

    sys.exit(main())
