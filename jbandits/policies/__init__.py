"""Policies grouped by setting: thresholding, identification (incl. top-m), regret.

Ties: where a paper leaves ties arbitrary or random, the policies break them by the
lowest index ("first"). The batched entry points (``jbandits.simulate``, ``sweep``,
``sweep_grid``) relabel the arms at random per replication by default
(``permute=True``), which reproduces the paper's random tie-breaking; a single
``jbandits.run`` does not permute unless asked.

Padded arms (``arm_mask`` False) are never active, pulled or output. A policy whose
schedule or constants depend on K uses the real K (``arm_mask.sum()``): schedule-based
policies run the schedule row of that K or stay idle, the one convention documented
in :mod:`jbandits.schedules`.
"""
