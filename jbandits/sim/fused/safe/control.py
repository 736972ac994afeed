"""Rules for calls and control flow: inlined calls, rebuilt ``cond`` / ``while`` /
``scan`` with rewritten bodies."""

from __future__ import annotations

from jax import lax

from jbandits.sim.fused.safe.core import NotKernelSafe, _enter, _leave, _rule, _run


@_rule("jit", "pjit", "closed_call", "core_call", "remat", "checkpoint")
def _call(eqn, *ins):
    sub = eqn.params.get("jaxpr", eqn.params.get("call_jaxpr"))
    return _run(sub, ins)


@_rule("custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr", "custom_lin")
def _custom(eqn, *ins):
    sub = eqn.params.get("call_jaxpr", eqn.params.get("fun_jaxpr"))
    if sub is None:
        raise NotKernelSafe(f"{eqn.primitive.name} without a call jaxpr")
    consts = eqn.params.get("num_consts", 0)
    del consts  # the call jaxpr takes every operand
    return _run(sub, ins)


@_rule("optimization_barrier")
def _barrier(eqn, *ins):
    return list(ins)


@_rule("copy", "copy_p")
def _copy(eqn, x):
    return x


@_rule("stop_gradient")
def _stop_gradient(eqn, x):
    return x


@_rule("cond")
def _cond(eqn, index, *ops):
    branches = eqn.params["branches"]
    out_avals = [v.aval for v in eqn.outvars]

    def branch(b):
        def f(*xs):
            return _leave(_run(b, xs))

        return f

    outs = lax.switch(index, [branch(b) for b in branches], *_leave(ops))
    return _enter(outs, out_avals)


@_rule("while")
def _while(eqn, *ins):
    p = eqn.params
    nc, nb = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, init = ins[:nc], ins[nc : nc + nb], ins[nc + nb :]
    out_avals = [v.aval for v in eqn.outvars]

    def cond(carry):
        return _run(p["cond_jaxpr"], [*cconsts, *carry])[0]

    def body(carry):
        return tuple(_leave(_run(p["body_jaxpr"], [*bconsts, *carry])))

    outs = lax.while_loop(cond, body, tuple(_leave(init)))
    return _enter(list(outs), out_avals)


@_rule("scan")
def _scan(eqn, *ins):
    p = eqn.params
    nconst, ncarry = p["num_consts"], p["num_carry"]
    consts, init, xs = (
        ins[:nconst],
        ins[nconst : nconst + ncarry],
        ins[nconst + ncarry :],
    )
    out_avals = [v.aval for v in eqn.outvars]

    def body(carry, x):
        out = _leave(_run(p["jaxpr"], [*consts, *carry, *x]))
        return tuple(out[:ncarry]), tuple(out[ncarry:])

    carry, ys = lax.scan(
        body,
        tuple(_leave(init)),
        tuple(_leave(xs)),
        length=p["length"],
        reverse=p["reverse"],
        unroll=p["unroll"],
    )
    return _enter([*carry, *ys], out_avals)
