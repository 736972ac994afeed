"""``jbandits.tune``: the tuning API (kept importable; it lives in :mod:`jbandits.tuning`).

``jbandits.tune.tune(objective, space, search=..., estimator=..., report=...)`` is the
one-call tuner, ``jbandits.tune.grid_tune(...)`` the compile-once grid; the older
spellings of ``tune`` (keywords ``simulations=``, ``sigma=``, ...; ``tune(loss, theta0,
optimizer, ...)``, which is :func:`jbandits.tuning.minimize`) still work and warn.
"""

from jbandits.tuning import *  # noqa: F403
from jbandits.tuning import __all__  # noqa: F401
