"""Device meshes: ``torch.distributed.device_mesh`` over JAX devices and ``jax.sharding.Mesh``.

A ``DeviceMesh`` names an n-d grid of devices of one type (``cpu``, ``cuda`` or ``tpu``). Its
ranks are indices into JAX's device list of that platform (all hosts together), and it wraps a
``jax.sharding.Mesh`` whose axes are the mesh dimension names, so sharded tensors on it are
``jax.Array`` s with a ``NamedSharding``. A mesh selected by name (``mesh["dp"]``) is the same
grid seen through some of its dimensions.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from jax.sharding import AxisType, Mesh

from .. import _device as DEV
from . import _c10d

__all__ = ["DeviceMesh", "init_device_mesh"]

_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "tpu": "tpu"}
_BY_JAX_MESH: dict = {}  # jax Mesh -> the DeviceMesh made for it (tensors find theirs here)
_CURRENT: list = []  # meshes entered with ``with mesh:``


def platform_devices(device_type: str) -> list:
    """JAX's devices (of every host) for a PyTorch device type, in id order."""
    if device_type not in _PLATFORMS:
        raise RuntimeError(f"leafgrad.distributed: unsupported device type '{device_type}'")
    try:
        return sorted(jax.devices(_PLATFORMS[device_type]), key=lambda d: d.id)
    except RuntimeError:
        return []


class DeviceMesh:
    """``torch.distributed.device_mesh.DeviceMesh``: ``DeviceMesh("cpu", [[0, 1], [2, 3]],
    mesh_dim_names=("dp", "tp"))`` lays devices 0-3 out as a 2 x 2 grid."""

    def __init__(self, device_type: str, mesh, *, mesh_dim_names: tuple | None = None) -> None:
        ranks = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh, dtype=np.int64)
        devices = platform_devices(device_type)
        if ranks.size == 0 or ranks.max() >= len(devices) or ranks.min() < 0:
            raise RuntimeError(
                f"leafgrad.distributed: mesh {ranks.tolist()} needs {ranks.max() + 1} "
                f"'{device_type}' devices; JAX has {len(devices)}"
            )
        names = tuple(mesh_dim_names) if mesh_dim_names is not None else None
        if names is not None and len(names) != ranks.ndim:
            raise RuntimeError(
                f"mesh_dim_names {names} must have the same length as mesh dims {ranks.ndim}"
            )
        axes = names or tuple(f"dim_{i}" for i in range(ranks.ndim))
        grid = np.vectorize(lambda r: devices[r], otypes=[object])(ranks)
        self._init(device_type, Mesh(grid, axes, axis_types=(AxisType.Auto,) * len(axes)), names)

    def _init(self, device_type: str, jax_mesh: Mesh, names, dims=None) -> None:
        self._device_type = device_type
        self._jax_mesh = jax_mesh
        self._names = names
        self._dims = tuple(range(len(jax_mesh.axis_names))) if dims is None else dims
        if dims is None:
            _BY_JAX_MESH.setdefault(jax_mesh, self)
        if not _c10d.is_initialized():  # as init_device_mesh does in PyTorch
            _c10d.init_process_group()

    @classmethod
    def _of(cls, jax_mesh: Mesh) -> DeviceMesh:
        """The DeviceMesh of a JAX mesh (the one it was made for, else a new one)."""
        found = _BY_JAX_MESH.get(jax_mesh)
        if found is None:
            platform = jax_mesh.devices.flat[0].platform
            device_type = {"gpu": "cuda"}.get(platform, platform)
            found = object.__new__(cls)
            found._init(device_type, jax_mesh, tuple(jax_mesh.axis_names))
        return found

    # --- PyTorch's attributes ----------------------------------------------------------------
    @property
    def device_type(self) -> str:
        return self._device_type

    @property
    def ndim(self) -> int:
        return len(self._dims)

    @property
    def shape(self) -> tuple:
        sizes = self._jax_mesh.devices.shape
        return tuple(sizes[d] for d in self._dims)

    def size(self, mesh_dim: int | None = None) -> int:
        return math.prod(self.shape) if mesh_dim is None else self.shape[mesh_dim]

    @property
    def mesh_dim_names(self) -> tuple | None:
        if self._names is None:
            return None
        return tuple(self._names[d] for d in self._dims)

    @property
    def mesh(self):
        """The ranks as an int64 tensor of the mesh's shape."""
        from .._factories import tensor

        ids = np.vectorize(lambda d: d.id, otypes=[np.int64])(self._jax_mesh.devices)
        order = {d.id: i for i, d in enumerate(platform_devices(self._device_type))}
        ranks = np.vectorize(order.__getitem__, otypes=[np.int64])(ids)
        return tensor(ranks)

    @property
    def jax_mesh(self) -> Mesh:
        """The ``jax.sharding.Mesh`` behind this mesh (leafgrad's own attribute)."""
        return self._jax_mesh

    @property
    def axis_names(self) -> tuple:
        """The JAX axis names of this mesh's dimensions (leafgrad's own attribute)."""
        return tuple(self._jax_mesh.axis_names[d] for d in self._dims)

    @property
    def device(self) -> DEV.device:
        """The leafgrad device tensors on this mesh report."""
        return DEV.CPU if self._device_type == "cpu" else DEV.device(self._device_type, 0)

    def get_group(self, mesh_dim: int | str | None = None) -> _c10d.MeshGroup:
        """The process group of one mesh dimension (or of the whole mesh when there is one)."""
        if mesh_dim is None:
            return _c10d.MeshGroup(self, self.axis_names)
        return _c10d.MeshGroup(self, (self.axis_names[self._dim_index(mesh_dim)],))

    def get_rank(self) -> int:
        return _c10d.get_rank()

    def _dim_index(self, mesh_dim: int | str) -> int:
        if isinstance(mesh_dim, str):
            names = self.mesh_dim_names or ()
            if mesh_dim not in names:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist.")
            return names.index(mesh_dim)
        return mesh_dim

    def __getitem__(self, names) -> DeviceMesh:
        names = (names,) if isinstance(names, str) else tuple(names)
        if self._names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names!")
        dims = tuple(self._dims[self._dim_index(n)] for n in names)
        sub = object.__new__(DeviceMesh)
        sub._init(self._device_type, self._jax_mesh, self._names, dims)
        return sub

    def __enter__(self) -> DeviceMesh:
        _CURRENT.append(self)
        return self

    def __exit__(self, *exc) -> None:
        _CURRENT.pop()

    def __eq__(self, other) -> bool:
        if not isinstance(other, DeviceMesh):
            return False
        return (self._jax_mesh, self._dims, self._device_type) == (
            other._jax_mesh,
            other._dims,
            other._device_type,
        )

    def __hash__(self) -> int:
        return hash((self._jax_mesh, self._dims))

    def __repr__(self) -> str:
        names = self.mesh_dim_names
        if names:
            dims = "(" + ", ".join(f"{k}={v}" for k, v in zip(names, self.shape)) + ")"
        else:
            dims = str(self.shape)
        full = self._jax_mesh.devices.shape
        # PyTorch's layouts print a size-1 dimension's stride as ()
        strides = [math.prod(full[d + 1 :]) if full[d] > 1 else () for d in range(len(full))]
        stride = tuple(strides[d] for d in self._dims)
        return f"DeviceMesh({dims}, '{self._device_type}', stride={stride})"

    __str__ = __repr__


def init_device_mesh(
    device_type: str, mesh_shape: tuple, *, mesh_dim_names: tuple | None = None
) -> DeviceMesh:
    """A mesh of ``mesh_shape`` over the first ``prod(mesh_shape)`` devices of ``device_type``
    (all of them, laid out by ``jax.make_mesh`` for the hardware's topology, when sizes match).

    >>> mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("dp",))
    """
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None and len(mesh_dim_names) != len(mesh_shape):
        raise RuntimeError(
            "mesh_shape and mesh_dim_names should have same length!",
        )
    devices = platform_devices(device_type)
    n = math.prod(mesh_shape)
    if n > len(devices):
        raise RuntimeError(
            f"leafgrad.distributed: a mesh of shape {mesh_shape} needs {n} '{device_type}' "
            f"devices; JAX has {len(devices)}"
        )
    if n == len(devices):
        axes = tuple(mesh_dim_names or (f"dim_{i}" for i in range(len(mesh_shape))))
        jax_mesh = jax.make_mesh(
            mesh_shape, axes, axis_types=(AxisType.Auto,) * len(axes), devices=devices
        )
        mesh = object.__new__(DeviceMesh)
        mesh._init(device_type, jax_mesh, tuple(mesh_dim_names) if mesh_dim_names else None)
        return mesh
    ranks = np.arange(n).reshape(mesh_shape)
    return DeviceMesh(device_type, ranks, mesh_dim_names=mesh_dim_names)


def current_mesh() -> DeviceMesh | None:
    """The innermost mesh entered with ``with mesh:``, if any."""
    return _CURRENT[-1] if _CURRENT else None
