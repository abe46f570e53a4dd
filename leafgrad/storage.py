"""``torch.storage``'s ``UntypedStorage`` and ``TypedStorage`` as leafgrad can give them: read-only
windows on a tensor's memory, for comparing and printing storages.

A leafgrad tensor's memory is its storage root's array laid out with the root's strides (Note
[Storage offsets and data pointers] in ops/tensor_info.py), plus what an earlier ``resize_``
gave up (Note [Resized memory] in _tensor.py). ``untyped_storage()`` reads that memory as bytes,
``storage()`` (deprecated in PyTorch, with its warning) as elements of the tensor's dtype. Their
sizes, addresses, element reads, ``tolist`` and prints are PyTorch's; writing through a storage
(``s[i] = v``, ``fill_``, ``copy_``, ``resize_``) raises ``NotImplementedError``: write to the
tensor instead."""

from __future__ import annotations

import warnings

import jax
import numpy as np

__all__ = ["TypedStorage", "UntypedStorage"]

TYPED_STORAGE_DEPRECATED = (
    "TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the "
    "only storage class. This should only matter to you if you are using storages directly.  To "
    "access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()"
)
_WARNED = [False]
_READ_ONLY = (
    "leafgrad: writing through a storage is not supported (leafgrad's tensors are views of "
    "immutable arrays); write to the tensor instead"
)


def _memory(t) -> np.ndarray:
    """The bytes of ``t``'s storage, in memory order."""
    from .ops.iterator_layout import dense_in_memory_order
    from .ops.shape import _root_laid_out

    root, laid = _root_laid_out(t)
    if isinstance(root, jax.core.Tracer):
        raise RuntimeError("leafgrad: the storage of a traced tensor has no values to read")
    data = dense_in_memory_order(np.asarray(root), laid).reshape(-1)
    tail = t.__dict__.get("_resized_tail")
    if tail is not None and t.__dict__.get("_storage") is None:
        data = np.concatenate([data, np.asarray(tail)])
    return data.view(np.uint8)


class _ReadOnly:
    """Writes through a storage: refused."""

    __slots__ = ()

    def __setitem__(self, idx, value):
        raise NotImplementedError(_READ_ONLY)

    def fill_(self, value):
        raise NotImplementedError(_READ_ONLY)

    def copy_(self, source, non_blocking=None):
        raise NotImplementedError(_READ_ONLY)

    def resize_(self, size):
        raise NotImplementedError(_READ_ONLY)


class UntypedStorage(_ReadOnly):
    """The bytes of a tensor's memory (``Tensor.untyped_storage()``)."""

    __slots__ = ("_owner", "_address", "_nbytes", "_start", "device")

    def __init__(self, owner, address: int, nbytes: int, device, start: int = 0) -> None:
        self._owner, self._address, self._nbytes = owner, address, nbytes
        self._start, self.device = start, device

    def data_ptr(self) -> int:
        return self._address + self._start if self._nbytes else 0

    def nbytes(self) -> int:
        return self._nbytes

    def size(self) -> int:
        return self._nbytes

    def __len__(self) -> int:
        return self._nbytes

    def element_size(self) -> int:
        return 1

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_sparse(self) -> bool:
        return False

    def _bytes(self) -> np.ndarray:
        return _memory(self._owner)[self._start : self._start + self._nbytes]

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            start, stop, step = idx.indices(self._nbytes)
            if step != 1:
                raise RuntimeError(
                    f"Trying to slice with a step of {step}, but only a step of 1 is supported"
                )
            return UntypedStorage(
                self._owner, self._address, max(stop - start, 0), self.device, self._start + start
            )
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        if idx < 0:
            idx += self._nbytes
        if not 0 <= idx < self._nbytes:
            raise IndexError(f"index {idx} out of range for storage of size {self._nbytes}")
        return int(self._bytes()[idx])

    def tolist(self) -> list:
        return [int(b) for b in self._bytes()]

    def __str__(self) -> str:
        info = f"[torch.storage.UntypedStorage(device={self.device}) of size {len(self)}]"
        return " " + "\n ".join(str(b) for b in self.tolist()) + "\n" + info

    __repr__ = __str__


class TypedStorage(_ReadOnly):
    """A tensor's memory read as elements of its dtype (``Tensor.storage()``)."""

    __slots__ = ("_untyped_storage", "dtype")

    def __init__(self, untyped: UntypedStorage, dtype) -> None:
        self._untyped_storage, self.dtype = untyped, dtype

    @property
    def device(self):
        return self._untyped_storage.device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_sparse(self) -> bool:
        return False

    def untyped(self) -> UntypedStorage:
        return self._untyped_storage

    def element_size(self) -> int:
        return self.dtype.itemsize

    def nbytes(self) -> int:
        return self._untyped_storage.nbytes()

    def size(self) -> int:
        return self.nbytes() // self.element_size()

    def __len__(self) -> int:
        return self.size()

    def data_ptr(self) -> int:
        return self._untyped_storage.data_ptr()

    def get_device(self) -> int:
        return -1 if self.device.type == "cpu" else self.device.index

    def type(self, dtype=None, non_blocking=False):
        if dtype is not None:
            raise NotImplementedError("leafgrad: TypedStorage.type(dtype) is not supported")
        prefix = "torch." if self.device.type == "cpu" else f"torch.{self.device.type}."
        return f"{prefix}{self.dtype._legacy}Storage"

    def _values(self) -> np.ndarray:
        return self._untyped_storage._bytes().view(self.dtype.np)

    def __getitem__(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        if not isinstance(idx, int):
            raise RuntimeError(f"can't index a {type(self)} with {type(idx)}")
        size = self.size()
        if not -size <= idx < size:
            raise IndexError(f"index {idx} out of range for storage of size {size}")
        return self._values()[idx].item()

    def tolist(self) -> list:
        return [v.item() for v in self._values()]

    def __str__(self) -> str:
        info = (
            f"[torch.storage.TypedStorage(dtype={self.dtype}, device={self.device}) of size "
            f"{len(self)}]"
        )
        return " " + "\n ".join(str(v) for v in self.tolist()) + "\n" + info

    __repr__ = __str__


def typed_storage(t) -> TypedStorage:
    """``Tensor.storage()``: PyTorch's deprecation warning (once per process), then the
    tensor's memory as elements of its dtype."""
    if not _WARNED[0]:
        _WARNED[0] = True
        warnings.warn(TYPED_STORAGE_DEPRECATED, UserWarning, stacklevel=3)
    return TypedStorage(t.untyped_storage(), t.dtype)
