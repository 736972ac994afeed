"""What a results store checks before it trusts a file (:mod:`jbandits.analysis.store`).

* ``manifest.json`` must be a JSON object of a format this version reads
  (:data:`FORMATS`) with fields of the right types, else :class:`StoreDamaged`;
* the digests of the code the work runs that it records (``code``: the policies'
  and the reward family's, :mod:`jbandits.core.code_identity`) must be those of
  the code run now, else :class:`StoreCodeChanged` (:func:`check_code`);
* every part (``<group>/part-NNNNN.parquet``) carries its identity in its Parquet
  metadata (the store it belongs to, its group, chunk and lane span), and the writing
  process records the SHA-256 of its bytes in the manifest (``parts``). A part is read
  only if its bytes match the recorded digest (a flipped byte, a truncation, a part
  copied over another) and its identity is the chunk asked for (a swap), else
  :class:`StoreDamaged` names the file and the way forward: delete it and rerun, and
  exactly its chunk is recomputed.

A part without a recorded digest (another process's share under ``jax.distributed``,
a run killed between a part's rename and its record, or a store written before
digests: format 1) is read if it parses and its identity (where it has one) and lane
count match; the writing process then records its digest, so it is checked from then
on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time

import numpy as np

FORMAT = 2  # written; format 1 (before part digests) is read and resumed
FORMATS = (1, 2)
STATUSES = ("running", "complete")
IDENTITY = b"jbandits.part"  # Parquet metadata key of a part's identity


class StoreDamaged(ValueError):
    """A store file is not what the store recorded (damaged, truncated, swapped,
    of an unknown format); the message names the file and what to do."""


class StoreMismatch(ValueError):
    """A store folder holds the results of different work (another fingerprint), or
    of other code (:class:`StoreCodeChanged`)."""


class StoreCodeChanged(StoreMismatch):
    """A store holds the results of the same work run by other code: a policy's or a
    reward family's code changed since (:mod:`jbandits.core.code_identity`)."""


def check_code(recorded: dict, code: dict, store: str) -> None:
    """StoreCodeChanged (one line, naming what changed and the way forward) unless
    the code digests a store ``recorded`` are ``code``'s."""
    changed = sorted(
        k for k in set(recorded) | set(code) if recorded.get(k) != code.get(k)
    )
    if changed:
        err = StoreCodeChanged(
            f"store {store} holds results of other code: the code of "
            f"{', '.join(changed)} changed since they were computed (or it is other "
            "code under the same name); give another store (path, or --out), or "
            "delete that folder to recompute them"
        )
        err.changed = changed
        raise err


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def part_key(chunk: int) -> str:
    return f"{chunk:05d}"


def _redo_folder(path: str) -> str:
    return f"delete the folder {path} and rerun to recompute its results"


def parse_manifest(path: str, store: str) -> dict | None:
    """The manifest at ``path`` (None if there is none), checked."""
    try:
        with open(path, "rb") as f:
            text = f.read()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise StoreDamaged(
            f"{path} is a folder, not a manifest: {_redo_folder(store)}"
        ) from None
    try:
        manifest = json.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as err:
        raise StoreDamaged(
            f"{path} is not a store manifest (not JSON: {err}): {_redo_folder(store)}"
        ) from None
    check_manifest(manifest, path, store)
    return manifest


def check_manifest(manifest, path: str, store: str) -> None:
    """StoreDamaged unless ``manifest`` is a manifest of a format this version reads."""
    if not isinstance(manifest, dict):
        raise StoreDamaged(
            f"{path} is not a store manifest (a JSON {type(manifest).__name__}, not "
            f"an object): {_redo_folder(store)}"
        )
    fmt = manifest.get("format")
    if fmt not in FORMATS or isinstance(fmt, bool):
        raise StoreDamaged(
            f"{path} has store format {fmt!r}; this version of jbandits reads formats "
            f"{', '.join(map(str, FORMATS))} (a newer jbandits wrote it? upgrade "
            f"jbandits, or {_redo_folder(store)})"
        )
    sizes = manifest.get("chunk_sizes", {})
    parts = manifest.get("parts", {})
    bad = None
    if manifest.get("status") not in STATUSES:
        bad = f"status {manifest.get('status')!r} (not one of {', '.join(STATUSES)})"
    elif not isinstance(sizes, dict) or not all(
        isinstance(v, int) and not isinstance(v, bool) and v >= 1
        for v in sizes.values()
    ):
        bad = f"chunk_sizes {sizes!r} (not positive integers by group)"
    elif not isinstance(parts, dict) or not all(
        isinstance(g, dict) and all(_is_sha256(d) for d in g.values())
        for g in parts.values()
    ):
        bad = "parts (not SHA-256 digests by group and chunk)"
    elif "code" in manifest and not (
        isinstance(manifest["code"], dict)
        and all(isinstance(d, str) for d in manifest["code"].values())
    ):
        bad = "code (not digests by policy and family)"
    if bad is not None:
        raise StoreDamaged(f"{path} has a damaged field: {bad}: {_redo_folder(store)}")


def _is_sha256(value) -> bool:
    """A digest as :func:`sha256` writes it: 64 lower-case hexadecimal digits."""
    return (
        isinstance(value, str)
        and len(value) == 64
        and all(c in "0123456789abcdef" for c in value)
    )


def damaged(file: str, why: str) -> StoreDamaged:
    return StoreDamaged(
        f"store part {file} {why}: delete {file} and rerun to recompute its chunk"
    )


def unrecorded(intact, file: str, size: int, sha: str, recorded: str) -> StoreDamaged:
    """A part whose bytes are not those the manifest records. ``intact``: None, or
    ``(table, what, manifest_path)`` when the part reads as the chunk ``what`` it
    should be by its own identity: then the manifest's record may be the change."""
    if intact is not None and IDENTITY in (intact[0].schema.metadata or {}):
        _, what, manifest = intact
        return damaged(
            file,
            f"reads as {what}, but its SHA-256 {sha[:12]}... differs from the "
            f"{recorded[:12]}... that {manifest} records: the part's values or the "
            "manifest's record was changed",
        )
    return damaged(
        file,
        f"is not the part the manifest recorded ({size} bytes, SHA-256 {sha[:12]}..., "
        f"recorded {recorded[:12]}...: changed, truncated or swapped with another "
        "part)",
    )


def check_part(table, file: str, want: dict, rows_wanted: int | None) -> None:
    """StoreDamaged unless the part read from ``file`` is the chunk ``want``
    (``{"store", "group", "chunk", "start", "stop"}``; ``start``/``stop`` None when
    not known) with ``rows_wanted`` lanes."""
    meta = table.schema.metadata or {}
    if b"shapes" not in meta:
        raise damaged(file, "is not a part of a results store (no field shapes)")
    if IDENTITY in meta:
        have = json.loads(meta[IDENTITY])
        for name, value in want.items():
            if value is not None and have.get(name) != value:
                raise damaged(
                    file,
                    f"holds {_what(have)}, not {_what(want)} (parts swapped, or "
                    "copied from another store?)",
                )
    if rows_wanted is not None and table.num_rows != rows_wanted:
        raise damaged(
            file, f"holds {table.num_rows} lanes where its chunk has {rows_wanted}"
        )


def _what(identity: dict) -> str:
    text = f"chunk {identity.get('chunk')} of group {identity.get('group')}"
    if identity.get("start") is not None:
        text += f" (lanes {identity.get('start')}..{identity.get('stop')})"
    return text + f" of store {identity.get('store')}"


@contextlib.contextmanager
def locked(folder: str):
    """An exclusive lock on ``folder`` (``flock`` on the folder itself) around a
    manifest read-modify-write, so two writers on one store keep each other's
    records; no lock where the platform or file system has none."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - unusual file systems
        yield
        return
    try:
        with contextlib.suppress(OSError):
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def digest(value) -> str:
    """SHA-1 of a pytree's structure and leaf bytes (arrays, keys, numbers, strings).

    A function has no digest here (TypeError): stores are keyed on registered
    names, static arguments and numbers, and check the code they run apart
    (:mod:`jbandits.core.code_identity`, :func:`check_code`)."""
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


def _same_table(pq, path: str, table) -> bool:
    """Whether the Parquet file ``path`` holds ``table`` (False if unreadable)."""
    try:
        return pq.read_table(path).equals(table)
    except Exception:  # noqa: BLE001  (missing or damaged: rewritten)
        return False


def _folder(path, what: str = "store=", store: bool = True) -> str:
    """``path`` as a folder name: TypeError / ValueError (naming ``what``) for what
    cannot be one."""
    if isinstance(path, bytes) or not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"{what} must be a folder path (str or os.PathLike)"
            + (" or a Store" if store else "")
            + f", got {type(path).__name__} {path!r}"
        )
    path = os.fspath(path)
    if not path:
        raise ValueError(f"{what} must name a folder, got '' (the empty path)")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(
            f"{what} {path!r} is a file, not a folder: give a folder (created if "
            "missing) for the results store"
        )
    return path


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    return value


def _poll(probe, timeout: float, interval: float, what: str):
    """Call ``probe`` every ``interval`` s until it returns a truthy value (returned);
    TimeoutError ``"{what} after {timeout} s"`` once ``timeout`` s have passed."""
    deadline = time.monotonic() + timeout
    while not (value := probe()):
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} after {timeout} s")
        time.sleep(interval)
    return value
