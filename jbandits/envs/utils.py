"""Padding and stacking of instances, so that sweeps over K compile once."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jbandits.envs.common import arm_axes_of, pad_last


def pad_arms(params, num_arms: int):
    """Pad an instance to ``num_arms`` arms; padded arms are masked out.

    Every leaf is padded on its arm axis: the last one unless the family declared
    another (:func:`jbandits.envs.common.family`'s ``arm_axes``: a replay ``table``
    ``[K, J]`` on axis 0; a leaf declared None is not per arm and kept as it is):
    padded means, stds and table rows are 0 and ``arm_mask`` is False, so policies never pull nor output them. Instances of different K padded to
    one size run in one compiled program (:func:`stack_instances`).

    Args:
      params: a ``BernoulliParams``, ``GaussianParams`` or ``ReplayParams`` (one
        instance ``[K]`` or a stack ``[N, K]``). ``MovieLensParams`` is not supported
        (its shared ``matrix`` leaf is not per arm; the call raises ValueError).
      num_arms: the padded number of arms, ``>= K``.

    Returns:
      An instance of the same type with ``num_arms`` arms.

    Raises:
      ValueError: if ``num_arms`` is smaller than the instance's K.

    Example::

        _, small = jbandits.envs.bernoulli([0.3, 0.7])
        _, big = jbandits.envs.bernoulli([0.1, 0.5, 0.9])
        params = jbandits.envs.stack_instances(
            [jbandits.envs.pad_arms(small, 4), jbandits.envs.pad_arms(big, 4)])
        params.arm_mask   # [[T, T, F, F], [T, T, T, F]]
    """
    axes = arm_axes_of(type(params))
    lead = np.ndim(params.arm_mask) - 1  # the axes of a stack [N, ...]
    k = np.shape(params.arm_mask)[-1]
    if num_arms < k:
        raise ValueError(f"cannot pad {k} arms to {num_arms}")
    out = {}
    for name, leaf in params._asdict().items():
        axis = axes.get(name, -1)
        if axis is None:  # not per arm
            out[name] = leaf
            continue
        fill = False if name == "arm_mask" else 0.0
        axis = axis + lead if axis >= 0 else axis
        shape = np.shape(leaf)
        if not -len(shape) <= axis < len(shape) or shape[axis] != k:
            raise ValueError(
                f"pad_arms: {name} of shape {shape} has no axis {axis} of {k} arms; "
                "declare where its arms are with jbandits.envs.common.family(..., "
                f"arm_axes={{{name!r}: axis}}) (None: not per arm)"
            )
        moved = jnp.moveaxis(leaf, axis, -1)
        out[name] = jnp.moveaxis(pad_last(moved, num_arms, fill), -1, axis)
    return type(params)(**out)


def stack_instances(instances):
    """Stack same-shaped instances along a new leading axis ``[N, ...]``.

    A stack runs as ``N`` instances in one program: :func:`jbandits.simulate` maps over
    its leading axis (give each instance its budget as ``budget=[N]`` if they differ).
    Pad instances of different K with :func:`pad_arms` first.

    Args:
      instances: a non-empty sequence of params of one type and one shape.

    Returns:
      Params of the same type whose leaves have a leading axis of size ``N``.

    Raises:
      ValueError: if ``instances`` is empty, or the instances differ in type, in
        their number of arms (the message says to :func:`pad_arms` them) or in
        another leaf shape.

    Example::

        _, a = jbandits.envs.bernoulli([0.2, 0.8])
        _, b = jbandits.envs.bernoulli([0.4, 0.6])
        params = jbandits.envs.stack_instances([a, b])   # means [2, 2]
    """
    instances = list(instances)
    if not instances:
        raise ValueError("stack_instances needs at least one instance, got none")
    kinds = {type(p) for p in instances}
    if len(kinds) > 1:
        names = sorted(k.__name__ for k in kinds)
        raise ValueError(f"stack_instances: instances of different types {names}")
    sizes = [np.shape(getattr(p, "arm_mask", np.zeros(0)))[-1:] for p in instances]
    if len(set(sizes)) > 1:
        counts = sorted({s[0] for s in sizes if s})
        raise ValueError(
            f"stack_instances: the instances have different numbers of arms {counts}; "
            f"pad them to one K first: [pad_arms(p, {max(counts)}) for p in instances]"
        )
    shapes = [jax.tree_util.tree_map(np.shape, p) for p in instances]
    if any(s != shapes[0] for s in shapes[1:]):
        raise ValueError(
            f"stack_instances: the instances' leaf shapes differ: {shapes[0]} vs "
            f"{next(s for s in shapes[1:] if s != shapes[0])}"
        )
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *instances)
