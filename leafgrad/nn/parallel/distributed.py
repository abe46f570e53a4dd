"""``DistributedDataParallel``: data parallelism over a device mesh, as one SPMD program.

Note [Data parallel on one controller]: PyTorch's DDP runs one process per device; each holds a
replica of the module, runs its own slice of the batch and all-reduces (averages) the gradients.
Here one process drives all devices: the wrapper replicates the parameters and buffers over the
mesh and shards each input's batch dimension over the data-parallel mesh dimension, and XLA's
partitioner turns the model's ops into per-device work plus the all-reduce of the gradients.
The gradient of a loss averaged over the whole batch is then exactly DDP's averaged gradient,
so training follows single-device training step for step. Targets and other tensors the loss
combines with the output must live on the mesh too: ``ddp.distribute(y)`` shards them like the
inputs. A step compiled by ``leafgrad.compile`` takes its batch already distributed (a compiled
program's arguments keep their devices), and is then one SPMD program for all devices.
"""

from __future__ import annotations

import contextlib

import jax
from jax.sharding import NamedSharding

from ... import _storage
from ..._tensor import Tensor
from ...distributed import device_mesh as DM
from ...distributed.tensor import _api
from ...distributed.tensor.placement_types import Replicate, Shard
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_DATA_DIM_NAMES = ("dp", "data", "ddp", "batch")


class DistributedDataParallel(Module):
    """``torch.nn.parallel.DistributedDataParallel`` on one controller (Note [Data parallel on
    one controller]): ``device_mesh`` (default: a 1-d mesh over all devices of the module's
    device type) spreads the batch (dimension ``dim`` of every input) over its data-parallel
    dimension (named ``dp``/``data``, or its only one).

    >>> mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    >>> model = DistributedDataParallel(net, device_mesh=mesh)
    >>> loss = F.cross_entropy(model(x), model.distribute(y))
    """

    def __init__(
        self,
        module: Module,
        device_ids=None,
        output_device=None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        init_sync: bool = True,
        process_group=None,
        bucket_cap_mb=None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        device_mesh=None,
        **_unused,
    ) -> None:
        super().__init__()
        self.module = module
        if device_mesh is None:
            device_type = next((p.device.type for p in module.parameters()), "cpu")
            n = len(DM.platform_devices(device_type))
            device_mesh = DM.init_device_mesh(device_type, (n,), mesh_dim_names=("dp",))
        object.__setattr__(self, "device_mesh", device_mesh)
        object.__setattr__(self, "dim", dim)
        object.__setattr__(self, "_data_axis", _data_axis(device_mesh))
        replicated = NamedSharding(device_mesh.jax_mesh, jax.sharding.PartitionSpec())
        for t in list(module.parameters()) + list(module.buffers()):
            _storage.write(t, jax.device_put(t._data, replicated))
            t._device = device_mesh.device
            _api.keep_grad_layout(t)

    def forward(self, *inputs, **kwargs):
        inputs, kwargs = self.distribute((inputs, kwargs))
        return self.module(*inputs, **kwargs)

    def distribute(self, data):
        """``data``'s tensors (in tuples, lists and dicts) laid out like the model's inputs:
        dimension ``dim`` split over the data-parallel mesh dimension (0-d tensors
        replicated); tensors already on the mesh are kept."""
        if isinstance(data, Tensor):
            return self._shard(data)
        if isinstance(data, (tuple, list)):
            return type(data)(self.distribute(x) for x in data)
        if isinstance(data, dict):
            return {k: self.distribute(v) for k, v in data.items()}
        return data

    def _shard(self, t: Tensor) -> Tensor:
        if _api.is_distributed(t):
            return t
        if t.grad_fn is not None:
            raise RuntimeError(
                "leafgrad DistributedDataParallel: inputs must be leaves (data); an input with "
                "a history cannot be moved onto the mesh inside a graph"
            )
        if isinstance(t._data, jax.core.Tracer):
            # a compiled program's arguments keep the devices they came with: distributed
            # before the call (a tensor that was not makes JAX report incompatible devices)
            return t
        mesh = self.device_mesh
        placements = [Replicate()] * mesh.ndim
        if t.ndim:
            placements[self._data_axis] = Shard(self.dim)
        return _api.distribute_tensor(t, mesh, placements)

    @contextlib.contextmanager
    def no_sync(self):
        """PyTorch's context for gradient accumulation without communication; here gradients
        are global already, so it changes nothing."""
        yield


def _data_axis(mesh) -> int:
    names = mesh.mesh_dim_names or ()
    for n in _DATA_DIM_NAMES:
        if n in names:
            return names.index(n)
    if mesh.ndim == 1:
        return 0
    raise ValueError(
        "leafgrad DistributedDataParallel: name the data-parallel mesh dimension 'dp' or 'data'"
    )
