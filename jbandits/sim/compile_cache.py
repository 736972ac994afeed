"""The persistent XLA compilation cache of the command-line tools (``jbandits sweep``
and ``python -m experiments``): compiled programs are kept on disk, so that running a
command again (a resumed or finished sweep, a re-run experiment) skips compilation."""

from __future__ import annotations

import os

CACHE_ENV = "JBANDITS_COMPILE_CACHE"  # "0": no persistent compilation cache
OFF = ("0", "false", "no", "off")


def compile_cache_dir() -> str:
    """``$XDG_CACHE_HOME/jbandits/jax`` (``~/.cache/jbandits/jax`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache"
    )
    return os.path.join(base, "jbandits", "jax")


def wanted(flag: bool = True) -> bool:
    """``flag`` (the command's option) unless ``$JBANDITS_COMPILE_CACHE`` turns it off."""
    return bool(flag) and os.environ.get(CACHE_ENV, "1").lower() not in OFF


def enable_compile_cache(path: str | None = None) -> str:
    """Cache every compiled XLA program on disk so that a re-run skips compilation."""
    import jax

    path = path or compile_cache_dir()
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    return path
