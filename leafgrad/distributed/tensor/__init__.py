"""``leafgrad.distributed.tensor``: PyTorch's DTensor vocabulary over JAX shardings.

``distribute_tensor(t, mesh, [Shard(0)])`` lays a tensor out over a ``DeviceMesh``; the result is
an ordinary leafgrad Tensor (``isinstance(x, DTensor)`` holds) whose ops run where its data
lives (Note [Sharded tensors] in ``_api.py``). Tensors laid out over a mesh have
``placements``, ``device_mesh``, ``redistribute(...)`` and ``full_tensor()``.
"""

from __future__ import annotations

from ... import _tensor
from ..device_mesh import DeviceMesh, init_device_mesh
from . import _api
from ._api import DTensor, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = [
    "DTensor",
    "DeviceMesh",
    "Partial",
    "Placement",
    "Replicate",
    "Shard",
    "distribute_tensor",
    "init_device_mesh",
]


def _only_distributed(name: str):
    def check(t) -> None:
        if not _api.is_distributed(t):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")

    return check


def _placements(self) -> tuple:
    """How this tensor is laid out along each mesh dimension (sharded tensors only)."""
    _only_distributed("placements")(self)
    return _api.placements_of(self)


def _device_mesh(self) -> DeviceMesh:
    """The mesh this tensor is laid out over (sharded tensors only)."""
    _only_distributed("device_mesh")(self)
    return _api.mesh_of(self)


def _redistribute(self, device_mesh=None, placements=None, *, async_op=False, **kwargs):
    _only_distributed("redistribute")(self)
    return _api.redistribute(self, device_mesh, placements, async_op=async_op, **kwargs)


def _full_tensor(self, *, grad_placements=None):
    _only_distributed("full_tensor")(self)
    return _api.full_tensor(self, grad_placements=grad_placements)


_redistribute.__doc__ = _api.redistribute.__doc__
_full_tensor.__doc__ = _api.full_tensor.__doc__

# These belong on Tensor; they are attached here so that the Tensor class needs no import of this
# package. A definition on Tensor itself wins.
for _name, _value in (
    ("placements", property(_placements)),
    ("device_mesh", property(_device_mesh)),
    ("redistribute", _redistribute),
    ("full_tensor", _full_tensor),
):
    if _name not in _tensor.Tensor.__dict__:
        setattr(_tensor.Tensor, _name, _value)
