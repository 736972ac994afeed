"""Policies grouped by setting: thresholding, identification (incl. top-m), regret.

Conventions every factory follows, stated once here (a factory's docstring refers to
this module for them):

``execution`` (the factories that take it): a static
:class:`~jbandits.core.execution.Execution`, how the step is compiled, never what it
computes; the batched runner sets it. Default:
:meth:`Execution.default() <jbandits.core.execution.Execution.default>`.

Output of the identification factories: the recommended arm, ``[] int32``
(top-m factories: the returned set, ``[K] bool``); of the thresholding factories:
the labels ``1{mean_i >= tau}``, ``[K] bool`` (0 for unpulled and padded arms).

Ties: where a paper leaves ties arbitrary or random, the policies break them by the
lowest index ("first"). The batched entry points (``jbandits.simulate``, ``sweep``,
``sweep_grid``) relabel the arms at random per replication by default
(``permute=True``), which reproduces the paper's random tie-breaking; a single
``jbandits.run`` does not permute unless asked.

Padded arms (``arm_mask`` False) are never active, pulled or output. A policy whose
schedule or constants depend on K uses the real K (``arm_mask.sum()``): schedule-based
policies run the schedule row of that K or stay idle, the one convention documented
in :mod:`jbandits.policies.blocks.schedules`.
"""

import importlib as _importlib
import pkgutil as _pkgutil

FAMILIES = ("thresholding", "identification", "regret", "fixed_confidence")


def _register_builtins() -> None:
    """Import every public module of the family packages: each registers its
    policies with :mod:`jbandits.core.registry` when imported."""
    for family in FAMILIES:
        package = _importlib.import_module(f"{__name__}.{family}")
        for info in _pkgutil.iter_modules(package.__path__):
            if not info.name.startswith("_"):
                _importlib.import_module(f"{package.__name__}.{info.name}")


_register_builtins()
