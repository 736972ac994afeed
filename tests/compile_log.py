"""Count XLA compilations of the runner's program with JAX's own compile log."""

from __future__ import annotations

import contextlib
import logging

import jax


class _Counter(logging.Handler):
    def __init__(self, name: str | None):
        super().__init__(logging.DEBUG)
        self.name_ = name
        self.count = 0

    def emit(self, record):
        msg = record.getMessage()
        if not msg.startswith("Finished XLA compilation"):
            return
        if self.name_ is None or f"jit({self.name_})" in msg:
            self.count += 1


@contextlib.contextmanager
def count_compiles(name: str | None = "jbandits_lanes"):
    """Yields a counter whose ``.count`` is the number of compilations of ``name``
    (of every program when ``name`` is None)."""
    logger = logging.getLogger("jax._src.dispatch")
    handler = _Counter(name)
    old = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        with jax.log_compiles():
            yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(old)


@contextlib.contextmanager
def count_traces(name: str = "jbandits_lanes"):
    """Yields a list that gets one entry per trace of the jitted function ``name``
    (JAX's own ``jaxpr_trace_duration`` event)."""
    traces = []

    def listen(event, duration, **kw):
        del duration
        if event.endswith("jaxpr_trace_duration") and kw.get("fun_name") == name:
            traces.append(kw)

    jax.monitoring.register_event_duration_secs_listener(listen)
    try:
        yield traces
    finally:
        jax.monitoring.unregister_event_duration_listener(listen)
