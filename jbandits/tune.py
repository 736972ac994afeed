"""``jbandits.tune``: the tuning API (kept importable; it lives in :mod:`jbandits.tuning`).

``jbandits.tune.tune(...)`` is the one-call tuner, ``jbandits.tune.grid_tune(...)``
the compile-once grid; the old ``tune(loss, theta0, optimizer, ...)`` form still works
(it is :func:`jbandits.tuning.minimize`).
"""

from jbandits.tuning import *  # noqa: F403
from jbandits.tuning import __all__  # noqa: F401
