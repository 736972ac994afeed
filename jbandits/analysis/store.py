"""Resumable results store: one Parquet file per finished chunk, written atomically.

A store is a folder::

    manifest.json                 what is being run (fingerprint), status, versions
    cells.parquet                 the labels of every cell (policy, hyper-parameters, K,
                                  instance, budget, ...), written by sweep_grid
    <group>/part-00000.parquet    lanes of one chunk: cell, rep and every result field

Each chunk is written to a temporary name and renamed into place (``os.replace`` is
atomic on POSIX), so a run killed by SIGINT or SIGKILL leaves only whole chunks. Run
the same work again with the same store and the runner reads the finished chunks
instead of recomputing them; the chunk layout (chunk size) is recorded in the manifest
and reused, so the resumed run ends bit-identical to an uninterrupted one. The
manifest's ``status`` is ``"running"`` until :meth:`Store.finish` marks it
``"complete"``: an interrupted run is visible as such.

Every part carries its identity and the manifest records the SHA-256 of its bytes, so
a part that was damaged, truncated or swapped with another is refused with an error
naming it (:class:`StoreDamaged`: delete it and rerun, and exactly its chunk is
recomputed); see :mod:`jbandits.analysis.store_check`. Reading a finished store
writes nothing (a read-only mount is fine).

Array fields (``[C]`` checkpoints, ``[K]`` pulls) are Parquet fixed-size lists, so any
Parquet reader (pandas, polars, DuckDB, Spark) opens the parts. Needs ``pyarrow``
(``pip install "jbandits[sweeps]"``).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import Any

import numpy as np

from jbandits.analysis import store_check as _check
from jbandits.analysis.store_check import (  # noqa: F401  (re-exported)
    FORMAT,
    FORMATS,
    StoreCodeChanged,
    StoreDamaged,
    StoreMismatch,
    _folder,
    _plain,
    _poll,
    _same_table,
    digest,
)

# Writes (temporary file + rename) in progress in this process, and what to call once
# none is: an interrupt handler defers its exit with :func:`when_idle` so that it never
# leaves a temporary file behind.
_writing = 0
_deferred: list = []


@contextlib.contextmanager
def _write_section():
    global _writing
    _writing += 1
    try:
        yield
    finally:
        _writing -= 1
        while not _writing and _deferred:
            _deferred.pop(0)()


def when_idle(fn) -> None:
    """Call ``fn()`` now, or right after the store write in progress (if any) ends.

    For signal handlers (they run between two bytecodes of the main thread): an exit
    requested in the middle of a chunk or manifest write waits for its rename."""
    if _writing:
        _deferred.append(fn)
    else:
        fn()


def write_atomic(path: str, write) -> str:
    """``write(tmp)`` then rename ``tmp`` to ``path`` (never a half-written ``path``);
    an exit requested meanwhile through :func:`when_idle` waits for the rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    with _write_section():
        write(tmp)
        os.replace(tmp, path)
    return path


def _arrow():
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as err:  # pragma: no cover - depends on the install
        raise ImportError(
            'the results store needs pyarrow: pip install "jbandits[sweeps]"'
        ) from err
    return pa, pq


class Store:
    """A results folder; see the module docstring.

    Args:
      path: the folder (created if missing).
      fingerprint: any JSON-able description of the work; reopening a store written
        for different work raises ValueError instead of mixing results.
      meta: extra JSON-able information kept in the manifest.
      code: ``{what: digest}`` of the code the work runs
        (:func:`jbandits.sim.runner.code_of`), apart from the fingerprint: a store
        that records other code is refused (:class:`StoreCodeChanged`); one that
        records none (older) records it where the run goes on.

    Raises:
      TypeError / ValueError: ``path`` is not a path, is empty or names a file.
      StoreMismatch: the folder holds a store of other work.
      StoreCodeChanged: the folder holds the results of other code.
      StoreDamaged: its manifest is not a manifest of a format this version reads.
    """

    def __init__(
        self,
        path: str,
        fingerprint: Any = None,
        meta: dict | None = None,
        writer: bool | None = None,
        code: dict | None = None,
    ):
        self.path = _folder(path)
        if not os.path.isdir(self.path):
            os.makedirs(self.path, exist_ok=True)
        self._manifest_path = os.path.join(self.path, "manifest.json")
        # with several processes (jax.distributed) only process 0 writes the
        # manifest; the others read what it recorded (no read-modify-write races)
        self.writer = _is_writer() if writer is None else bool(writer)
        manifest = self.manifest() if self.writer else self._wait_manifest()
        fp = json.loads(json.dumps(fingerprint, default=str))
        if manifest is None:
            manifest = {
                "format": FORMAT,
                "fingerprint": fp,
                "status": "running",
                "created": time.strftime("%Y-%m-%dT%H:%M:%S"),
                "chunk_sizes": {},
                "meta": meta or {},
            }
            if code is not None:
                manifest["code"] = dict(code)
            with _check.locked(self.path):
                self._write_manifest(manifest)
        elif fingerprint is not None and manifest.get("fingerprint") != fp:
            raise StoreMismatch(
                f"store {self.path} holds results of different work; use another path "
                "or delete it"
            )
        else:
            self._check_code(manifest, code)
            if manifest.get("status") != "complete" and self.writer:
                self._update(lambda m: m.update(status="running"))
        self.tag = _check.sha256(
            json.dumps(manifest.get("fingerprint"), sort_keys=True).encode()
        )[:16]

    def _check_code(self, manifest: dict, code: dict | None) -> None:
        """StoreCodeChanged if ``manifest`` records other code than ``code``; a
        manifest that records none records ``code`` where the run goes on (a store
        written before code identities: checked from now on)."""
        if code is None:
            return
        if manifest.get("code") is not None:
            _check.check_code(manifest["code"], code, self.path)
        elif self.writer and manifest.get("status") != "complete":
            self._update(lambda m: m.setdefault("code", dict(code)))

    # ---------------------------------------------------------------- manifest
    def manifest(self) -> dict | None:
        """The manifest (None before one is written); StoreDamaged if it is not a
        manifest of a format this version reads."""
        return _check.parse_manifest(self._manifest_path, self.path)

    def _update(self, change) -> dict:
        """Re-read the manifest, ``change(manifest)`` it and write it back, under a
        lock on the folder (two writers keep each other's records)."""
        with _check.locked(self.path):
            manifest = self.manifest()
            change(manifest)
            self._write_manifest(manifest)
        return manifest

    def _wait_manifest(self, timeout: float = 600.0) -> dict:
        return _poll(self.manifest, timeout, 0.1, f"no manifest in {self.path}")

    def _write_manifest(self, manifest: dict) -> None:
        if not self.writer:
            return

        def dump(tmp):
            with open(tmp, "w") as f:
                json.dump(manifest, f, indent=2, default=str)

        write_atomic(self._manifest_path, dump)

    @property
    def complete(self) -> bool:
        return (self.manifest() or {}).get("status") == "complete"

    def chunk_size(self, group: str, proposed: int, timeout: float = 600.0) -> int:
        """The chunk size recorded for ``group`` (recording ``proposed`` if none).

        A non-writing process (not process 0) waits for process 0's record, so every
        process splits the work into the same chunks."""
        if self.writer:
            sizes = self.manifest().get("chunk_sizes", {})
            if group not in sizes:
                sizes = self._update(
                    lambda m: m.setdefault("chunk_sizes", {}).setdefault(
                        group, int(proposed)
                    )
                )["chunk_sizes"]
            return int(sizes[group])
        size = _poll(
            lambda: self.manifest().get("chunk_sizes", {}).get(group),
            timeout,
            0.1,
            f"process 0 recorded no chunk size for {group}",
        )
        return int(size)

    def finish(self, **info) -> None:
        """Mark the run complete (and record ``info`` in the manifest); a store
        already complete is left as it is (reading one back writes nothing)."""
        if not self.writer or self.complete:
            return

        def done(manifest):
            manifest["status"] = "complete"
            manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
            manifest.setdefault("meta", {}).update(info)

        self._update(done)

    # ------------------------------------------------------------------ chunks
    def _part(self, group: str, chunk: int) -> str:
        return os.path.join(self.path, group, f"part-{chunk:05d}.parquet")

    def has(self, group: str, chunk: int) -> bool:
        return os.path.exists(self._part(group, chunk))

    def write(self, group: str, chunk: int, part: dict, span=None) -> None:
        """Write one chunk's ``{field: array [lanes, ...]}`` atomically, with its
        identity (this store, ``group``, ``chunk``, the lane ``span`` ``(start,
        stop)``), and record the SHA-256 of its bytes in the manifest."""
        pa, pq = _arrow()
        columns = {}
        for name, value in part.items():
            if name.startswith("_"):
                continue
            value = np.ascontiguousarray(value)
            if value.ndim == 1:
                columns[name] = pa.array(value)
            else:
                width = int(np.prod(value.shape[1:]))
                flat = pa.array(value.reshape(-1))
                columns[name] = pa.FixedSizeListArray.from_arrays(flat, width)
        table = pa.table(columns)
        shapes = {n: list(np.shape(v)[1:]) for n, v in part.items() if n[0] != "_"}
        identity = self._identity(group, chunk, span)
        table = table.replace_schema_metadata(
            {"shapes": json.dumps(shapes), _check.IDENTITY: json.dumps(identity)}
        )
        sink = pa.BufferOutputStream()
        pq.write_table(table, sink)
        data = sink.getvalue().to_pybytes()
        final = self._part(group, chunk)
        os.makedirs(os.path.dirname(final), exist_ok=True)

        def put(tmp):
            with open(tmp, "wb") as f:
                f.write(data)

        with _write_section(), _check.locked(self.path):  # the part and its record
            write_atomic(final, put)
            self._record(group, chunk, _check.sha256(data))

    def _identity(self, group: str, chunk: int, span) -> dict:
        start, stop = (None, None) if span is None else map(int, span)
        return {"store": self.tag, "group": group, "chunk": int(chunk),
                "start": start, "stop": stop}  # fmt: skip

    def _record(self, group: str, chunk: int, sha: str) -> None:
        """Record a part's digest (the writing process only; under the lock)."""
        if not self.writer:
            return
        manifest = self.manifest()
        manifest.setdefault("parts", {}).setdefault(group, {})[
            _check.part_key(chunk)
        ] = sha
        self._write_manifest(manifest)

    def read(self, group: str, chunk: int, span=None) -> dict:
        """One chunk back as ``{field: array [lanes, ...]}`` (exact dtypes), checked:
        :class:`StoreDamaged` (naming the file: delete it and rerun) unless its bytes
        match the digest the manifest records and it is ``chunk`` of ``group`` of
        this store (lanes ``span = (start, stop)`` when given)."""
        table = self._checked_table(group, chunk, span)
        shapes = json.loads(table.schema.metadata[b"shapes"])
        out = {}
        for name in table.column_names:
            col = table.column(name).combine_chunks()
            shape = shapes[name]
            if shape:
                values = col.flatten().to_numpy(zero_copy_only=False)
                out[name] = values.reshape(len(col), *shape)
            else:
                out[name] = col.to_numpy(zero_copy_only=False)
        return out

    def _checked_table(self, group: str, chunk: int, span):
        pa, pq = _arrow()
        file = self._part(group, chunk)
        try:
            with open(file, "rb") as f:
                data = f.read()
        except OSError as err:
            raise _check.damaged(file, f"cannot be read ({err})") from None
        manifest = self.manifest() or {}
        recorded = manifest.get("parts", {}).get(group, {}).get(_check.part_key(chunk))
        sha = _check.sha256(data)
        differs = recorded is not None and recorded != sha
        try:
            table = pq.read_table(pa.BufferReader(data))
        except Exception as err:  # noqa: BLE001  (pyarrow raises many kinds)
            why = f"is not a readable Parquet file ({type(err).__name__}: {err})"
            raise (
                _check.damaged(file, why)
                if not differs
                else _check.unrecorded(None, file, len(data), sha, recorded)
            ) from None
        want = self._identity(group, chunk, span)
        rows = None if span is None else int(span[1]) - int(span[0])
        try:
            _check.check_part(table, file, want, rows)
        except _check.StoreDamaged:
            if differs:
                raise _check.unrecorded(None, file, len(data), sha, recorded) from None
            raise
        if differs:
            raise _check.unrecorded(
                (table, f"chunk {chunk} of {group}", self._manifest_path),
                file, len(data), sha, recorded,
            )  # fmt: skip
        if recorded is None and self.writer and manifest.get("status") == "running":
            with _check.locked(self.path):  # checked from now on
                self._record(group, chunk, sha)
        return table

    def wait(self, group: str, num_chunks: int, timeout: float = 86400.0) -> None:
        """Block until every chunk of ``group`` exists (other processes' share)."""
        _poll(
            lambda: all(self.has(group, c) for c in range(num_chunks)),
            timeout,
            0.2,
            f"chunks of {group} missing",
        )

    # ------------------------------------------------------------------ labels
    def write_cells(self, cells: list) -> None:
        """The cell labels table (``cells.parquet``), written atomically."""
        pa, pq = _arrow()
        rows = [{k: _plain(v) for k, v in c.items()} for c in cells]
        # a label that is text in some cells and a number in others (one name, two
        # policies) is one column of text
        kinds: dict = {}
        for row in rows:
            for k, v in row.items():
                if v is not None:
                    kinds.setdefault(k, set()).add(isinstance(v, str))
        mixed = {k for k, seen in kinds.items() if len(seen) > 1}
        rows = [
            {k: str(v) if k in mixed and v is not None else v for k, v in r.items()}
            for r in rows
        ]
        table = pa.Table.from_pylist(rows)
        final = os.path.join(self.path, "cells.parquet")
        if self.complete and _same_table(pq, final, table):
            return  # a finished store read back: nothing to write
        write_atomic(final, lambda tmp: pq.write_table(table, tmp))


def _is_writer() -> bool:
    import jax

    return jax.process_index() == 0
