"""``leafgrad.distributed``: ``torch.distributed`` on JAX's distributed runtime.

The process group (``init_process_group``, ``get_rank``, ``get_world_size``, ``barrier``) is
JAX's set of processes, one per host; device meshes (``device_mesh.init_device_mesh``) and
sharded tensors (``tensor.distribute_tensor``) spread work over the devices; collectives follow
Note [Single-controller collectives] in ``_c10d.py``.
"""

from __future__ import annotations

from . import device_mesh, tensor
from ._c10d import (
    ReduceOp,
    all_gather,
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_initialized,
    reduce_scatter,
)
from .device_mesh import DeviceMesh, init_device_mesh

__all__ = [
    "DeviceMesh",
    "ReduceOp",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "destroy_process_group",
    "device_mesh",
    "get_backend",
    "get_rank",
    "get_world_size",
    "init_device_mesh",
    "init_process_group",
    "is_available",
    "is_initialized",
    "reduce_scatter",
    "tensor",
]
