"""Resuming: :func:`resumable` gives every :func:`~jbandits.sim.runner.execute` call
inside it a results store keyed on its work, so an interrupted program resumes."""

from __future__ import annotations

import contextlib
import os

from jbandits.core.types import Bandit
from jbandits.sim.runner.programs import Options, Source, code_of, storable
from jbandits.sim.runner.work import Lanes

_RESUME: list = []  # active resumable() roots: [path, calls so far]


@contextlib.contextmanager
def resumable(path: str):
    """Give every :func:`execute` call inside the block a results store under ``path``.

    The ``i``-th call of the block gets the store ``path/<i>-<digest>``, the digest
    taken over its work (the registered policy's name, static arguments and numeric
    hyper-parameters, the digests of the policy's and the reward family's code
    (:func:`~jbandits.sim.runner.code_of`), instances, keys, budgets,
    replications, run options; a
    hand-built policy is run without a store, with a warning: see
    :func:`~jbandits.sim.runner.storable`). Run the
    same program again after an interruption (SIGINT, SIGKILL, a session's end) and
    every chunk that finished is read instead of recomputed, so the run resumes and
    ends bit-identical to an uninterrupted one (each store keeps its chunk layout).
    Calls that pass their own ``store`` or ask for ``return_state`` are not stored.
    ``python -m experiments run`` wraps every experiment in this block
    (``OUT/.partial/NAME``) and removes the folder once the results are written.

    A call whose work or code changed gets a new store (its digest differs) and
    recomputes.
    """
    from jbandits.analysis.store import _folder  # the check of store=

    path = _folder(path, "resumable(path)", store=False)
    # the folder is created by the first stored call (a block without batched work
    # leaves nothing behind)
    _RESUME.append([path, 0])
    try:
        yield path
    finally:
        _RESUME.pop()


def _auto_store(source: Source, bandit: Bandit, lanes: Lanes, opts: Options, hp):
    """The store of this call inside :func:`resumable` (None outside or not storable)."""
    if not _RESUME or opts.return_state:
        return None
    from jbandits.analysis.store import Store, digest

    frame = _RESUME[-1]
    index, frame[1] = frame[1], frame[1] + 1
    if not storable(source):
        _warn_not_storable(source)
        return None
    work = {
        "policy": (source.ident, source.static),
        "bandit": bandit.name,
        "code": tuple(sorted(code_of([source], bandit).items())),
        "hp": hp,
        "params": lanes.params,
        "cells": (lanes.instance, lanes.budget, lanes.keys, lanes.horizon),
        "reps": (lanes.num_reps, lanes.shared, lanes.fold_reps),
        "options": repr(opts),
    }
    fingerprint = {name: digest(value) for name, value in work.items()}
    tag = digest(fingerprint)[:16]
    return Store(os.path.join(frame[0], f"{index:04d}-{tag}"), fingerprint=fingerprint)


def _warn_not_storable(source: Source) -> None:
    from jbandits.core import validate as _validate

    _validate.warn(
        f"resumable(): the run of {source.name or 'a policy'} is not stored: only "
        "registered policies (jbandits.make, jbandits.<name>, @registry.policy) can "
        "be recognised when resumed"
    )
