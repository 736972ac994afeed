"""Devices and processes: the mesh a chunk's lane axis is split over, the shardings
of a chunk's arguments, which chunks this process runs, and the lane-steps a chunk
ran on its devices."""

from __future__ import annotations

import jax
import numpy as np

DEVICE_AXIS = "devices"  # the mesh axis the lane axis is split over


def _mesh(num_devices: int):
    devices = jax.local_devices()[:num_devices]
    return jax.sharding.Mesh(np.array(devices), (DEVICE_AXIS,))


def _sharding(num_devices: int):
    return jax.sharding.NamedSharding(
        _mesh(num_devices), jax.sharding.PartitionSpec(DEVICE_AXIS)
    )


def placed(args, sharding, shared: tuple):
    """Shardings of a chunk's arguments: lane axis split, shared fields kept whole."""
    if sharding is None:
        return None
    whole = jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
    p_shard = args[1]._replace(
        **{f: (whole if f in shared else sharding) for f in args[1]._fields}
    )
    return (sharding, p_shard, sharding, sharding, sharding, sharding)


def _process_share(chunk: int) -> bool:
    return chunk % jax.process_count() == jax.process_index()


def _lane_steps(used: np.ndarray, segment: int, devices: int) -> int:
    """Lane-steps a chunk ran: each device's block of lanes runs, between two
    checkpoints, as many segments as its slowest lane needed (``used``: [lanes, C]
    segments per lane; the lane axis split into ``devices`` equal blocks)."""
    blocks = used.reshape(devices, -1, used.shape[-1])
    return int(blocks.max(axis=1).sum()) * segment * blocks.shape[1]
