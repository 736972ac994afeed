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

Array fields (``[C]`` checkpoints, ``[K]`` pulls) are Parquet fixed-size lists, so any
Parquet reader (pandas, polars, DuckDB, Spark) opens the parts. Needs ``pyarrow``
(``pip install "jbandits[sweeps]"``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from typing import Any

import numpy as np

FORMAT = 1


class StoreMismatch(ValueError):
    """A store folder holds the results of different work (another fingerprint)."""


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
    """

    def __init__(
        self,
        path: str,
        fingerprint: Any = None,
        meta: dict | None = None,
        writer: bool | None = None,
    ):
        self.path = os.fspath(path)
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
            self._write_manifest(manifest)
        elif fingerprint is not None and manifest.get("fingerprint") != fp:
            raise StoreMismatch(
                f"store {self.path} holds results of different work; use another path "
                "or delete it"
            )
        elif manifest.get("status") == "complete" or not self.writer:
            pass
        else:
            manifest["status"] = "running"
            self._write_manifest(manifest)

    # ---------------------------------------------------------------- manifest
    def manifest(self) -> dict | None:
        try:
            with open(self._manifest_path) as f:
                return json.load(f)
        except FileNotFoundError:
            return None

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
            manifest = self.manifest()
            sizes = manifest.setdefault("chunk_sizes", {})
            if group not in sizes:
                sizes[group] = int(proposed)
                self._write_manifest(manifest)
            return int(sizes[group])
        size = _poll(
            lambda: self.manifest().get("chunk_sizes", {}).get(group),
            timeout,
            0.1,
            f"process 0 recorded no chunk size for {group}",
        )
        return int(size)

    def finish(self, **info) -> None:
        """Mark the run complete (and record ``info`` in the manifest)."""
        manifest = self.manifest()
        manifest["status"] = "complete"
        manifest["finished"] = time.strftime("%Y-%m-%dT%H:%M:%S")
        manifest.setdefault("meta", {}).update(info)
        self._write_manifest(manifest)

    # ------------------------------------------------------------------ chunks
    def _part(self, group: str, chunk: int) -> str:
        return os.path.join(self.path, group, f"part-{chunk:05d}.parquet")

    def has(self, group: str, chunk: int) -> bool:
        return os.path.exists(self._part(group, chunk))

    def write(self, group: str, chunk: int, part: dict) -> None:
        """Write one chunk's ``{field: array [lanes, ...]}`` atomically."""
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
        table = table.replace_schema_metadata({"shapes": json.dumps(shapes)})
        final = self._part(group, chunk)
        os.makedirs(os.path.dirname(final), exist_ok=True)
        write_atomic(final, lambda tmp: pq.write_table(table, tmp))

    def read(self, group: str, chunk: int) -> dict:
        """One chunk back as ``{field: array [lanes, ...]}`` (exact dtypes)."""
        _, pq = _arrow()
        table = pq.read_table(self._part(group, chunk))
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
        write_atomic(final, lambda tmp: pq.write_table(table, tmp))


def digest(value) -> str:
    """SHA-1 of a pytree's structure and leaf bytes (arrays, keys, numbers, strings).

    A function has no digest (TypeError): its byte code does not identify what it
    closes over, so stores are keyed on registered names, static arguments and
    numbers instead."""
    import jax

    leaves, treedef = jax.tree_util.tree_flatten(value)
    h = hashlib.sha1(str(treedef).encode())
    for leaf in leaves:
        if callable(leaf) and not hasattr(leaf, "shape"):
            raise TypeError(f"cannot fingerprint the function {leaf!r}")
        if hasattr(leaf, "shape") or isinstance(leaf, (list, tuple)):
            if jax.dtypes.issubdtype(getattr(leaf, "dtype", None), jax.dtypes.prng_key):
                leaf = jax.random.key_data(leaf)
            arr = np.asarray(jax.device_get(leaf))
            h.update(str((arr.shape, arr.dtype.str)).encode())
            h.update(np.ascontiguousarray(arr).tobytes())
        else:
            h.update(repr(leaf).encode())
    return h.hexdigest()


def _poll(probe, timeout: float, interval: float, what: str):
    """Call ``probe`` every ``interval`` s until it returns a truthy value (returned);
    TimeoutError ``"{what} after {timeout} s"`` once ``timeout`` s have passed."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} after {timeout} s")
        time.sleep(interval)
    return value


def _is_writer() -> bool:
    import jax

    return jax.process_index() == 0


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value
