"""Sharded tensors: ``distribute_tensor``, ``redistribute``, ``full_tensor`` and ``DTensor``.

Note [Sharded tensors]: a sharded tensor is an ordinary leafgrad Tensor whose array is a
``jax.Array`` with a ``NamedSharding`` over a ``DeviceMesh``'s JAX mesh; its placements are read
from that sharding, never stored. Ops need nothing special: dispatch's jitted functions take the
arrays where they are and XLA's SPMD partitioner decides the layout of every result (and of
every gradient), communicating as it must. So results equal single-device results, and a whole
training step traced by ``leafgrad.compile`` is one SPMD program.

Two rules are added where XLA's choice would differ from PyTorch's contract:

- a leaf's ``.grad`` is laid out like the leaf: leaves made here carry a first post-accumulate
  hook that puts the accumulated gradient back on the leaf's sharding (``_keep_grad_layout``);
- ``redistribute`` and ``full_tensor`` are recorded ops whose backward lays the gradient out like
  the input (PyTorch's ``RedistributeBackward``), not like the result.

On one host all devices belong to one process, so there is no per-rank *local* tensor:
``full_tensor()`` is the whole tensor replicated on the mesh, and printing or ``.numpy()`` show
global values.
"""

from __future__ import annotations

import functools

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from ... import _tensor
from ...ops.dispatch import dispatch
from ...ops.table import OpDef, same
from .. import device_mesh as DM
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor", "placements_of", "mesh_of"]


# --- placements <-> shardings -------------------------------------------------------------------


def _sharding_of(t):
    data = t._data
    if isinstance(data, jax.core.Tracer):  # inside leafgrad.compile: layouts are not known
        return None
    sharding = getattr(data, "sharding", None)
    return sharding if isinstance(sharding, NamedSharding) else None


def is_distributed(t) -> bool:
    """Whether ``t``'s array is laid out over a mesh (and is not a ``full_tensor`` result)."""
    return _sharding_of(t) is not None and not t.__dict__.get("_full", False)


def mesh_of(t) -> DM.DeviceMesh:
    """The DeviceMesh a sharded tensor lives on."""
    return DM.DeviceMesh._of(_sharding_of(t).mesh)


def placements_of(t, mesh: DM.DeviceMesh | None = None) -> tuple:
    """A sharded tensor's placements, one per dimension of ``mesh`` (default: its mesh)."""
    sharding = _sharding_of(t)
    mesh = mesh or mesh_of(t)
    where = {}
    for dim, entry in enumerate(sharding.spec):
        for name in entry if isinstance(entry, tuple) else (entry,):
            if name is not None:
                where[name] = dim
    return tuple(Shard(where[a]) if a in where else Replicate() for a in mesh.axis_names)


def _spec(mesh: DM.DeviceMesh, placements, shape: tuple) -> P:
    """The PartitionSpec of ``placements`` on ``mesh`` for a tensor of ``shape``: mesh dims
    sharding the same tensor dim split it in mesh order (PyTorch's default order)."""
    ndim = len(shape)
    entries: list = [[] for _ in range(ndim)]
    for axis, p in zip(mesh.axis_names, placements):
        if isinstance(p, Shard):
            entries[p.dim].append(axis)
        elif isinstance(p, Partial):
            raise NotImplementedError(
                "leafgrad.distributed: Partial placements are not supported (XLA resolves "
                "pending reductions itself); use Replicate() or Shard(dim)"
            )
        elif not isinstance(p, Replicate):
            raise RuntimeError(
                f"Trying to distribute tensor with unsupported placements {p} on device mesh "
                f"dimension {mesh.axis_names.index(axis)}!"
            )
    sizes = mesh.jax_mesh.shape
    for dim, axes in enumerate(entries):
        parts = 1
        for a in axes:
            parts *= sizes[a]
        if shape[dim] % parts:
            raise ValueError(
                f"leafgrad.distributed: Shard({dim}) splits dimension {dim} of size {shape[dim]} "
                f"into {parts} parts; JAX shardings need it to divide evenly"
            )
    return P(*(tuple(a) if len(a) > 1 else a[0] if a else None for a in entries))


def _normalize(placements, ndim: int) -> list:
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"placements must be Shard or Replicate, got {type(p).__name__}")
        if isinstance(p, Shard):
            if not -max(ndim, 1) <= p.dim < max(ndim, 1):
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], "
                    f"but got {p.dim})"
                )
            if p.dim < 0:
                p = Shard(p.dim + ndim)
        out.append(p)
    return out


def _check_length(placements, mesh: DM.DeviceMesh) -> None:
    if len(placements) != mesh.ndim:
        raise ValueError(
            "`placements` must have the same length as `device_mesh.ndim`! "
            f"Found placements length: {len(placements)}, and device_mesh.ndim: {mesh.ndim}."
        )


def _resolve_mesh(mesh):
    if mesh is None:
        mesh = DM.current_mesh()
        if mesh is None:
            raise RuntimeError("No device mesh is currently active!")
    return mesh


# --- the grad layout rule -----------------------------------------------------------------------


def _keep_grad_layout(t) -> None:
    """Post-accumulate hook: ``t.grad`` laid out like ``t`` (Note [Sharded tensors])."""
    g = t._grad
    if g is None:
        return
    data = g._data
    if isinstance(data, jax.core.Tracer):  # inside leafgrad.compile: a layout constraint
        sharding = t.__dict__.get("_layout")
        if sharding is not None:
            g._data = jax.lax.with_sharding_constraint(data, sharding)
        return
    sharding = _sharding_of(t)
    if sharding is not None and data.sharding != sharding:
        g._data = jax.device_put(data, sharding)


_HOOK_ID = -1  # below every handle id, so user hooks see the laid-out gradient


def keep_grad_layout(t) -> None:
    """Give leaf ``t`` the hook that lays its ``.grad`` out like itself (once)."""
    from ...autograd.graph import _HookDict

    hooks = t.__dict__.get("_post_acc_hooks")
    if hooks is None:
        hooks = t.__dict__["_post_acc_hooks"] = _HookDict()
    t.__dict__["_layout"] = _sharding_of(t)  # what a compiled step constrains .grad to
    if _HOOK_ID not in hooks:
        items = list(hooks.items())
        hooks.clear()
        hooks[_HOOK_ID] = _keep_grad_layout
        hooks.update(items)


# --- distribute, redistribute, full_tensor -------------------------------------------------------


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank: int | None = 0):
    """A leaf laid out over ``device_mesh`` by ``placements`` (``Shard(dim)`` / ``Replicate()``,
    one per mesh dimension; all ``Replicate()`` by default), with ``tensor``'s values and
    ``requires_grad``.

    >>> mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    >>> x = distribute_tensor(torch.randn(16, 4), mesh, [Shard(0)])   # 2 rows per device
    """
    mesh = _resolve_mesh(device_mesh)
    if not tensor.is_leaf:
        raise RuntimeError(
            "`distribute_tensor` should be used to distribute leaf tensors! but found non-leaf "
            "tensor!"
        )
    if placements is None:
        placements = [Replicate() for _ in range(mesh.ndim)]
    _check_length(placements, mesh)
    placements = _normalize(placements, tensor.ndim)
    if is_distributed(tensor):
        if mesh_of(tensor).jax_mesh != mesh.jax_mesh:
            raise ValueError(
                f"Cannot distribute a DTensor with device mesh {mesh_of(tensor)} "
                f"to a different device mesh {mesh}."
            )
        if placements_of(tensor, mesh) != tuple(placements):
            raise ValueError(
                f"Cannot distribute a DTensor with placements {placements_of(tensor, mesh)} "
                f"to a different placements {placements}. do you want to call "
                f"`redistribute` instead?"
            )
        return tensor
    sharding = NamedSharding(mesh.jax_mesh, _spec(mesh, placements, tuple(tensor.shape)))
    out = _tensor.Tensor._make(
        jax.device_put(tensor._data, sharding),
        tensor._dtype,
        mesh.device,
        requires_grad=tensor._requires_grad,
    )
    keep_grad_layout(out)
    return out


def _reshard_forward(x, *, src, dst):
    return _reshard(x, src, dst)


@functools.partial(jax.custom_vjp, nondiff_argnums=(1, 2))
def _reshard(x, src, dst):
    return jax.lax.with_sharding_constraint(x, dst)


def _reshard_fwd(x, src, dst):
    return jax.lax.with_sharding_constraint(x, dst), None


def _reshard_bwd(src, dst, _, ct):
    return (jax.lax.with_sharding_constraint(ct, src),)


_reshard.defvjp(_reshard_fwd, _reshard_bwd)

# Recorded like PyTorch's autograd Functions of the same names; nothing is saved for backward.
_REDISTRIBUTE = OpDef("redistribute", _reshard_forward, "RedistributeBackward", ("self",), same)
_TO_TORCH = OpDef("to_torch_tensor", lambda x: x, "_ToTorchTensorBackward", ("self",), same)


def redistribute(t, device_mesh=None, placements=None, *, async_op: bool = False, **_):
    """``DTensor.redistribute``: the same values laid out by new placements (a recorded op whose
    gradient goes back to the old layout)."""
    mesh = device_mesh or mesh_of(t)
    if placements is None:
        raise RuntimeError("placements is needed for redistribute!")
    _check_length(placements, mesh)
    placements = _normalize(placements, t.ndim)
    if mesh.jax_mesh != _sharding_of(t).mesh:
        raise NotImplementedError(
            "leafgrad.distributed: redistribute to a different device mesh is not supported"
        )
    src = _sharding_of(t)
    dst = NamedSharding(mesh.jax_mesh, _spec(mesh, placements, tuple(t.shape)))
    return dispatch(_REDISTRIBUTE, t, src=src, dst=dst)


def full_tensor(t, *, grad_placements=None):
    """``DTensor.full_tensor``: the whole tensor, replicated on every device of the mesh, as an
    ordinary tensor (no ``placements``); differentiable."""
    mesh = mesh_of(t)
    whole = redistribute(t, mesh, [Replicate()] * mesh.ndim)
    out = dispatch(_TO_TORCH, whole)
    out.__dict__["_full"] = True
    return out


# --- DTensor -------------------------------------------------------------------------------------


class _DTensorMeta(type):
    def __instancecheck__(cls, other) -> bool:
        return isinstance(other, _tensor.Tensor) and is_distributed(other)

    def __subclasscheck__(cls, other) -> bool:
        return type.__subclasscheck__(cls, other)


class DTensor(metaclass=_DTensorMeta):
    """``torch.distributed.tensor.DTensor``: ``isinstance(t, DTensor)`` holds for every leafgrad
    tensor laid out over a mesh (Note [Sharded tensors]); make one with ``distribute_tensor``."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("leafgrad.distributed: make a DTensor with distribute_tensor(...)")

    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, **_):
        """Only replicated layouts: on one host there is one local tensor for all ranks."""
        mesh = _resolve_mesh(device_mesh)
        placements = placements or [Replicate()] * mesh.ndim
        if any(not isinstance(p, Replicate) for p in placements):
            raise NotImplementedError(
                "leafgrad.distributed: from_local with Shard placements needs one local tensor "
                "per rank; on a single controller use distribute_tensor on the whole tensor"
            )
        return distribute_tensor(local_tensor.detach(), mesh, placements)
