"""Padding and stacking of instances, so that sweeps over K compile once."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jbandits.envs._common import pad_last


def pad_arms(params, num_arms: int):
    """Pad an instance to ``num_arms`` arms; padded arms are masked out.

    Every ``[..., K]`` leaf is padded on its last axis (``table`` leaves ``[K, J]`` on
    the arm axis); padded means are 0, stds 0, mask False.
    """
    fields = params._asdict()
    out = {}
    for name, leaf in fields.items():
        if name == "table":
            moved = jnp.moveaxis(leaf, -2, -1)
            out[name] = jnp.moveaxis(pad_last(moved, num_arms, 0.0), -1, -2)
        elif name == "arm_mask":
            out[name] = pad_last(leaf, num_arms, False)
        else:
            out[name] = pad_last(leaf, num_arms, 0.0)
    return type(params)(**out)


def stack_instances(instances):
    """Stack same-shaped instances along a new leading axis ``[N, ...]``."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *instances)
