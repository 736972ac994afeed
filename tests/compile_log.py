"""Count compilations and traces of the runner's program: ``count_compiles`` is the
library's own (:func:`jbandits.sim.trace.count_compiles`, JAX's compile events);
``count_traces`` counts traces (JAX's ``jaxpr_trace_duration`` event)."""

from __future__ import annotations

import contextlib

import jax

from jbandits.sim.trace import count_compiles  # noqa: F401  (re-exported)


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
