"""Host memory of a call's results, checked before anything is allocated.

:func:`~jbandits.sim.runner.execute` returns every lane's results as NumPy arrays
``[cells, reps, ...]`` on the host. Their size is known once the program is traced
(the output shapes of one chunk, per lane), so a call whose results cannot fit in the
host's memory (``--reps 1000000000000``) is refused with the estimate before its
first chunk runs, instead of failing in ``np.zeros`` after it.
"""

from __future__ import annotations

import os

import jax

RESULT_BYTES: dict = {}  # program key -> host bytes of one lane's results


class HostMemoryError(MemoryError, ValueError):
    """The results of a call would not fit in the host's memory (a ValueError too:
    the input asks for more than the machine holds)."""


def result_bytes_per_lane(shapes) -> int:
    """Host bytes of one lane's results from a chunk's abstract RunResult (leading
    axis: the chunk's lanes; ``segments`` is not kept)."""
    total = 0
    for name, value in shapes._asdict().items():
        if name == "segments" or value is None:
            continue
        for leaf in jax.tree_util.tree_leaves(value):
            shape = tuple(leaf.shape)
            if shape and shape[0]:
                total += leaf.dtype.itemsize * int(_prod(shape)) // shape[0]
    return total


def _prod(shape) -> int:
    out = 1
    for n in shape:
        out *= int(n)
    return out


def available_bytes() -> int | None:
    """Memory available to this process (``MemAvailable`` of /proc/meminfo, else
    the free physical pages); None where neither can be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - not POSIX
        return None


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.3g} {unit}"
        n /= 1024
    return f"{n:.3g} PiB"  # pragma: no cover


def check_host_memory(lanes: int, per_lane: int, what: str, available=None) -> None:
    """HostMemoryError if ``lanes`` lanes of ``per_lane`` result bytes exceed the
    memory available (``available``: for tests; default :func:`available_bytes`)."""
    need = int(lanes) * int(per_lane)
    have = available_bytes() if available is None else available
    if have is None or need <= have:
        return
    raise HostMemoryError(
        f"the results of {what} need about {_size(need)} of host memory "
        f"({lanes:,} lanes (cells x replications) x {_size(per_lane)} per lane), "
        f"more than the {_size(have)} available: use fewer replications, "
        "checkpoints or cells (or record_arms=False)"
    )
