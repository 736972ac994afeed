"""What a kernel body still holds that the Pallas Triton lowering has no rule for."""

from __future__ import annotations

#: primitives the Pallas Triton lowering has rules for (jax 0.10.2), after the
#: rewrite; :func:`unsupported` reports the others a kernel body still holds.
TRITON_OK = frozenset(
    [
        "abs",
        "acos",
        "acosh",
        "add",
        "add_any",
        "addupdate",
        "and",
        "argmax",
        "argmin",
        "asin",
        "asinh",
        "atan",
        "atan2",
        "atanh",
        "axis_index",
        "bitcast_convert_type",
        "broadcast_in_dim",
        "broadcast_to",
        "cbrt",
        "ceil",
        "clamp",
        "closed_call",
        "clz",
        "concatenate",
        "cond",
        "convert_element_type",
        "cos",
        "cosh",
        "cumsum",
        "custom_jvp_call",
        "debug_print",
        "div",
        "dot_general",
        "eq",
        "erf_inv",
        "exp",
        "exp2",
        "expm1",
        "floor",
        "ge",
        "get",
        "gt",
        "integer_pow",
        "iota",
        "is_finite",
        "jit",
        "le",
        "log",
        "log1p",
        "logistic",
        "lt",
        "masked_load",
        "masked_swap",
        "max",
        "min",
        "mul",
        "multiple_of",
        "ne",
        "neg",
        "nextafter",
        "not",
        "num_programs",
        "or",
        "population_count",
        "pow",
        "program_id",
        "reduce_max",
        "reduce_min",
        "reduce_sum",
        "rem",
        "remat2",
        "reshape",
        "reshard",
        "rsqrt",
        "scan",
        "select_n",
        "shift_left",
        "shift_right_arithmetic",
        "shift_right_logical",
        "sign",
        "sin",
        "sinh",
        "split",
        "sqrt",
        "square",
        "squeeze",
        "stack",
        "stop_gradient",
        "sub",
        "swap",
        "tan",
        "tanh",
        "transpose",
        "unstack",
        "while",
        "xor",
    ]
)


def primitives(jaxpr, acc=None) -> dict:
    """``{primitive name: count}`` of a jaxpr and its sub-jaxprs."""
    acc = {} if acc is None else acc
    for eqn in jaxpr.eqns:
        acc[eqn.primitive.name] = acc.get(eqn.primitive.name, 0) + 1
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns"):
                    primitives(sub, acc)
                elif hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    primitives(sub.jaxpr, acc)
    return acc


def unsupported(jaxpr, allowed: frozenset = TRITON_OK) -> dict:
    """The primitives of ``jaxpr`` (and its sub-jaxprs) outside ``allowed``."""
    return {k: v for k, v in primitives(jaxpr).items() if k not in allowed}


def kernel_bodies(jaxpr) -> list:
    """The kernel jaxprs of the ``pallas_call`` equations in ``jaxpr`` (nested)."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "pallas_call":
            found.append(eqn.params["jaxpr"])
            continue
        for value in eqn.params.values():
            for sub in value if isinstance(value, (tuple, list)) else (value,):
                if hasattr(sub, "eqns"):
                    found += kernel_bodies(sub)
                elif hasattr(sub, "jaxpr") and hasattr(sub.jaxpr, "eqns"):
                    found += kernel_bodies(sub.jaxpr)
    return found
