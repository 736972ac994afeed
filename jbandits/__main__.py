"""``python -m jbandits ...``: the ``jbandits`` command (:mod:`jbandits.cli.launch`)."""

import sys

from jbandits.cli.launch import main

if __name__ == "__main__":
    sys.exit(main())
