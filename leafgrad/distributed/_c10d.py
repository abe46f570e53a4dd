"""Process groups and collectives: ``torch.distributed``'s API on JAX's single-controller runtime.

Note [Single-controller collectives]: PyTorch runs one process per device, each holding its own
*local* tensor, and a collective combines the local tensors of a group's ranks. JAX runs one
process per host, owning all of that host's devices. leafgrad maps one onto the other so that
PyTorch's code keeps its meaning:

- the *world* is JAX's processes: ``get_world_size()`` is ``jax.process_count()`` (1 on one
  host) and ``get_rank()`` is ``jax.process_index()``;
- for a tensor sharded over a ``DeviceMesh`` (a ``jax.Array`` with a ``NamedSharding``), every
  device of the group is a rank and its local tensor is its shard. The group is the mesh (or the
  mesh dimension named by ``mesh.get_group(dim)``); collectives run as one ``shard_map`` program
  on the devices. So ``all_reduce(t)`` leaves on every device the sum of all shards: a
  ``Shard(0)`` tensor of shape ``[8, 2]`` on 8 devices becomes 8 copies of the sum of its rows,
  and a ``Replicate()`` tensor becomes 8 times itself, exactly what 8 PyTorch ranks holding those
  local tensors would get;
- for an ordinary tensor the ranks are the processes: with one process every collective is the
  identity (``all_gather`` fills a list of one); across hosts the values travel through
  ``jax.experimental.multihost_utils``.

Collectives write their results in place as PyTorch's do (bumping the version counter) and are
not recorded by autograd. With ``async_op=True`` they return a completed work handle.
"""

from __future__ import annotations

import enum
import functools
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from .. import _storage

__all__ = [
    "ReduceOp",
    "init_process_group",
    "destroy_process_group",
    "is_available",
    "is_initialized",
    "get_rank",
    "get_world_size",
    "get_backend",
    "barrier",
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "broadcast",
]

_NOT_INITIALIZED = (
    "Default process group has not been initialized, please make sure to call init_process_group."
)
_STATE: dict = {}  # "backend", "started" (whether leafgrad called jax.distributed.initialize)


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4

    def __repr__(self) -> str:
        return f"<RedOpType.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class ReduceOp:
    """``torch.distributed.ReduceOp``: ``SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX


class MeshGroup:
    """A process group made of the devices of some dimensions of a ``DeviceMesh``."""

    def __init__(self, mesh, axes: tuple) -> None:
        self.mesh = mesh
        self.axes = axes

    def size(self) -> int:
        sizes = self.mesh.jax_mesh.shape
        return int(np.prod([sizes[a] for a in self.axes]))

    def __repr__(self) -> str:
        return f"<leafgrad mesh group {self.axes} of {self.mesh}>"


class _Work:
    """A completed collective's handle (``async_op=True``)."""

    def wait(self, timeout=None) -> bool:
        return True

    def is_completed(self) -> bool:
        return True

    def is_success(self) -> bool:
        return True


def _done(async_op: bool):
    return _Work() if async_op else None


# --- the process group -----------------------------------------------------------------------


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return "backend" in _STATE


def init_process_group(
    backend: str | None = None,
    init_method: str | None = None,
    timeout=None,
    world_size: int = -1,
    rank: int = -1,
    store=None,
    group_name: str = "",
    pg_options=None,
    device_id=None,
) -> None:
    """Join the job: on one host a no-op; across hosts ``jax.distributed.initialize`` with the
    coordinator from ``init_method`` (``tcp://host:port``) or ``MASTER_ADDR``/``MASTER_PORT``,
    ``world_size`` (or ``WORLD_SIZE``) processes and this one's ``rank`` (or ``RANK``). As with
    JAX, it must run before the first computation when there are several hosts."""
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if world_size == -1:
        world_size = int(os.environ.get("WORLD_SIZE", "1"))
    if rank == -1:
        rank = int(os.environ.get("RANK", "0"))
    started = False
    if world_size > 1 and jax.process_count() == 1:
        if init_method and init_method.startswith("tcp://"):
            address = init_method[len("tcp://") :]
        else:
            address = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
        jax.distributed.initialize(address, num_processes=world_size, process_id=rank)
        started = True
    _STATE.update(backend=backend or _default_backend(), started=started)


def _default_backend() -> str:
    platform = jax.default_backend()
    return {"gpu": "nccl", "cuda": "nccl", "rocm": "nccl", "tpu": "xla"}.get(platform, "gloo")


def destroy_process_group(group=None) -> None:
    """Leave the job (shuts JAX's distributed runtime down if ``init_process_group`` started
    it)."""
    if _STATE.pop("started", False):
        jax.distributed.shutdown()
    _STATE.clear()


def _require_init() -> None:
    if not is_initialized():
        raise ValueError(_NOT_INITIALIZED)


def get_rank(group=None) -> int:
    """This process's rank: ``jax.process_index()``."""
    _require_init()
    return jax.process_index()


def get_world_size(group=None) -> int:
    """The number of processes (``jax.process_count()``), or of devices in a mesh group."""
    _require_init()
    if isinstance(group, MeshGroup):
        return group.size()
    return jax.process_count()


def get_backend(group=None) -> str:
    _require_init()
    return _STATE["backend"]


def barrier(group=None, async_op: bool = False, device_ids=None, timeout=None):
    """Wait until every process reaches this point and this process's work is done."""
    _require_init()
    jax.effects_barrier()
    if jax.process_count() > 1:
        from jax.experimental import multihost_utils

        multihost_utils.sync_global_devices("leafgrad.distributed.barrier")
    return _done(async_op)


# --- collectives -------------------------------------------------------------------------------


def _placement(tensor, group):
    """(jax mesh, partition spec, group axes) of a tensor sharded over a mesh, else None."""
    sharding = getattr(tensor._data, "sharding", None)
    if not isinstance(sharding, NamedSharding):
        if isinstance(group, MeshGroup):
            raise RuntimeError(
                "leafgrad.distributed: a mesh group's collective needs a tensor on that mesh "
                "(use distribute_tensor)"
            )
        return None
    mesh = sharding.mesh
    if isinstance(group, MeshGroup):
        if group.mesh.jax_mesh != mesh:
            raise RuntimeError("leafgrad.distributed: the tensor is not on the group's mesh")
        axes = group.axes
    else:
        axes = tuple(mesh.axis_names)
    spec = tuple(sharding.spec) + (None,) * (tensor._data.ndim - len(sharding.spec))
    return mesh, P(*spec), axes


def _reduce(x, op, axes):
    if op == RedOpType.SUM:
        return jax.lax.psum(x, axes)
    if op == RedOpType.AVG:
        return jax.lax.pmean(x, axes)
    if op == RedOpType.MAX:
        return jax.lax.pmax(x, axes)
    if op == RedOpType.MIN:
        return jax.lax.pmin(x, axes)
    if op == RedOpType.PRODUCT:
        return jnp.prod(jax.lax.all_gather(x, axes), axis=0)
    raise ValueError(f"leafgrad.distributed: unsupported reduce op {op}")


def _host_reduce(stacked, op):
    """Reduce the per-process values stacked on axis 0."""
    fn = {
        RedOpType.SUM: jnp.sum,
        RedOpType.AVG: jnp.mean,
        RedOpType.PRODUCT: jnp.prod,
        RedOpType.MIN: jnp.min,
        RedOpType.MAX: jnp.max,
    }[RedOpType(op)]
    return fn(stacked, axis=0).astype(stacked.dtype)


def _without(spec, axes) -> P:
    """``spec`` with the group's axes taken out (what stays sharded after a gather)."""
    out = []
    for entry in spec:
        names = entry if isinstance(entry, tuple) else (entry,) if entry is not None else ()
        kept = tuple(n for n in names if n not in axes)
        out.append(kept if len(kept) > 1 else kept[0] if kept else None)
    return P(*out)


@functools.cache
def _program(kind: str, mesh, spec: P, axes: tuple, op, extra):
    """A cached jitted ``shard_map`` running one collective over the group's axes."""
    if kind == "all_reduce":

        def body(x):
            return _reduce(x, op, axes)

        in_specs, out_specs = (spec,), spec
    elif kind == "broadcast":

        def body(x):
            return jax.lax.all_gather(x, axes)[extra]

        in_specs, out_specs = (spec,), spec
    elif kind == "all_gather":

        def body(x):
            return jax.lax.all_gather(x, axes)

        in_specs, out_specs = (spec,), P(None, *_without(spec, axes))
    else:  # reduce_scatter over ``extra`` inputs

        def body(*xs):
            reduced = jnp.stack([_reduce(x, op, axes) for x in xs])
            return reduced[jax.lax.axis_index(axes)]

        in_specs, out_specs = (spec,) * extra, spec
    mapped = jax.shard_map(body, mesh=mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
    return jax.jit(mapped)


def _write(t, value) -> None:
    """Write a collective's result into ``t`` (an in-place write, as c10d's ops are)."""
    _storage.write(t, value)
    t._version_counter.value += 1


def _processes_gather(array):
    from jax.experimental import multihost_utils

    return multihost_utils.process_allgather(array, tiled=False)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce ``tensor`` across the group's ranks, in place (Note [Single-controller
    collectives])."""
    _check_tensor(tensor, "tensor")
    _require_init()
    placed = _placement(tensor, group)
    if placed is not None:
        mesh, spec, axes = placed
        _write(tensor, _program("all_reduce", mesh, spec, axes, RedOpType(op), None)(tensor._data))
    elif jax.process_count() > 1:
        _write(
            tensor,
            jax.device_put(
                _host_reduce(_processes_gather(tensor._data), op), tensor._data.sharding
            ),
        )
    else:
        _write(tensor, tensor._data)
    return _done(async_op)


def broadcast(tensor, src: int | None = None, group=None, async_op: bool = False, group_src=None):
    """Give every rank of the group the local tensor of rank ``src`` (``group_src`` within a
    mesh group), in place."""
    _check_tensor(tensor, "tensor")
    _require_init()
    source = group_src if group_src is not None else (src or 0)
    placed = _placement(tensor, group)
    if placed is not None:
        mesh, spec, axes = placed
        _write(tensor, _program("broadcast", mesh, spec, axes, None, source)(tensor._data))
    elif jax.process_count() > 1:
        from jax.experimental import multihost_utils

        value = multihost_utils.broadcast_one_to_all(
            tensor._data, is_source=jax.process_index() == source
        )
        _write(tensor, jax.device_put(value, tensor._data.sharding))
    else:
        _write(tensor, tensor._data)
    return _done(async_op)


def all_gather(tensor_list: list, tensor, group=None, async_op: bool = False):
    """Fill ``tensor_list[i]`` with rank ``i``'s local tensor, for every rank of the group."""
    _check_tensor(tensor, "tensor")
    _require_init()
    placed = _placement(tensor, group)
    if placed is not None:
        mesh, spec, axes = placed
        gathered = _program("all_gather", mesh, spec, axes, None, None)(tensor._data)
    elif jax.process_count() > 1:
        gathered = _processes_gather(tensor._data)
    else:
        gathered = tensor._data[None]
    _fill(tensor_list, gathered, "tensor_list")
    return _done(async_op)


def reduce_scatter(output, input_list: list, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Give rank ``i`` (in ``output``) the reduction over all ranks of ``input_list[i]``."""
    _check_tensor(output, "output")
    _require_init()
    placed = _placement(output, group)
    n = _group_size(placed, group)
    if len(input_list) != n:
        raise ValueError(
            f"leafgrad.distributed: reduce_scatter needs {n} inputs (one per rank), "
            f"got {len(input_list)}"
        )
    if placed is not None:
        mesh, spec, axes = placed
        arrays = [jax.device_put(t._data, output._data.sharding) for t in input_list]
        value = _program("reduce_scatter", mesh, spec, axes, RedOpType(op), n)(*arrays)
    elif jax.process_count() > 1:
        stacked = _processes_gather(input_list[jax.process_index()]._data)
        value = jax.device_put(_host_reduce(stacked, op), output._data.sharding)
    else:
        value = jax.device_put(input_list[0]._data, output._data.sharding)
    if value.shape != output._data.shape:
        raise RuntimeError(
            f"leafgrad.distributed: reduce_scatter output has shape {tuple(output.shape)}, the "
            f"reduced inputs {tuple(value.shape)}"
        )
    _write(output, value.astype(output._data.dtype))
    return _done(async_op)


def _group_size(placed, group) -> int:
    if placed is None:
        return jax.process_count()
    mesh, _, axes = placed
    return int(np.prod([mesh.shape[a] for a in axes]))


def _fill(tensor_list: list, gathered, name: str) -> None:
    if len(tensor_list) != gathered.shape[0]:
        raise ValueError(
            f"leafgrad.distributed: {name} needs {gathered.shape[0]} tensors (one per rank), "
            f"got {len(tensor_list)}"
        )
    for i, t in enumerate(tensor_list):
        _check_tensor(t, name)
        part = gathered[i]
        if part.shape != t._data.shape:
            raise RuntimeError(
                f"leafgrad.distributed: {name}[{i}] has shape {tuple(t.shape)}, rank {i}'s "
                f"tensor {tuple(part.shape)}"
            )
        _write(t, jax.device_put(part.astype(t._data.dtype), t._data.sharding))


def _check_tensor(t, name: str) -> None:
    from .._tensor import Tensor

    if not isinstance(t, Tensor):
        raise TypeError(
            f"Invalid function argument. Expected parameter `{name}` of type torch.Tensor\n"
            f"             but got {type(t)} instead."
        )
